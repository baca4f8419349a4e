/**
 * Product status (the model: shared-schema/read-models/products.ts): the materialized base state (pending /
 * accepted / rejected / removed) with its reasons, kept current when the product, its cover check, its store's status
 * or its domains change.
 */
import { asUnion, type RecordedEvent } from '../../shared-schema/ports/event-store.js';
import type { ReadTx } from '../../shared-schema/ports/read-store.js';
import type { ProductEvent } from '../../shared-schema/events/product.js';
import type { StoreEvent } from '../../shared-schema/events/store.js';
import {
  applyPatch,
  currentCover,
  deriveBaseState,
  freshUntil,
  type StoreFacts,
} from '../../shared-schema/domain/product-status.js';
import {
  COUNTS_KEPT,
  FANOUTS,
  PRODUCT_COUNTS,
  PRODUCTS,
  countId,
  countKeyOf,
  sameCountKey,
  PRODUCT_COLLECTIONS,
  STORE_FACTS,
  productDocId,
  reasonCodesKey,
  storeFactsId,
  type FanOutDoc,
  type OwedStoreState,
  type ProductCountDoc,
  type ProductCountKey,
  type ProductDoc,
  type ProductStoreDoc,
} from '../../shared-schema/read-models/products.js';
import { urlHost } from '../../shared-schema/domain/host-match.js';
import { alreadyApplied, streamScope, type Projector } from '../projector.js';
import { evolveStanding, NEW_STANDING } from '../../shared-schema/domain/store-standing.js';

/** Products re-saved per unit of work when a store event reaches every product of its store. */
export const FANOUT_PAGE = 1000;

/**
 * The store facts read in one unit of work, by id: a batch of writes to the products of one store parses its facts
 * once. Kept per unit (the `tx` object), so a unit that fails leaves nothing behind; `onStoreEvent` updates it.
 */
const storeFactsSeen = new WeakMap<ReadTx, Map<string, ProductStoreDoc | null>>();

async function storeFacts(tx: ReadTx, id: string): Promise<ProductStoreDoc | null> {
  let seen = storeFactsSeen.get(tx);
  if (!seen) storeFactsSeen.set(tx, (seen = new Map<string, ProductStoreDoc | null>()));
  let facts = seen.get(id);
  if (facts === undefined) seen.set(id, (facts = await tx.get<ProductStoreDoc>(STORE_FACTS, id)));
  return facts;
}

/**
 * The counts of one unit of work: whether they are kept (the `COUNTS_KEPT` row) once looked up, and the moves of its
 * products between count rows by row id, added to the rows once when the unit ends (`writeCounts`): the products of a
 * batch mostly move between the same few rows, each then read and written once. Per unit, like `storeFactsSeen`.
 */
type UnitCounts = { kept: boolean | null; moves: Map<string, { key: ProductCountKey; delta: number }> };
const countsSeen = new WeakMap<ReadTx, UnitCounts>();

function unitCounts(tx: ReadTx): UnitCounts {
  let seen = countsSeen.get(tx);
  if (!seen) countsSeen.set(tx, (seen = { kept: null, moves: new Map() }));
  return seen;
}

/**
 * Whether this projection keeps the counts: yes once `COUNTS_KEPT` is there; it is written when the first product is
 * saved into an empty products collection, so a projection with products of an older build never starts counting
 * halfway (its readers count the products themselves until a rebuild).
 */
async function countsKept(tx: ReadTx, saving: boolean): Promise<boolean> {
  const seen = unitCounts(tx);
  if (seen.kept === null) seen.kept = (await tx.get(PRODUCT_COUNTS, COUNTS_KEPT)) !== null;
  if (!seen.kept && saving && (await tx.find(PRODUCTS, { limit: 1 })).length === 0) {
    await tx.put(PRODUCT_COUNTS, { _id: COUNTS_KEPT, partner_id: null, env: null, store_id: null });
    seen.kept = true;
  }
  return seen.kept;
}

/** Adds a product's move into (+1) or out of (−1) the row of `key` to the unit's sum for that row. */
function move(tx: ReadTx, key: ProductCountKey, delta: number): void {
  const id = countId(key);
  const moves = unitCounts(tx).moves;
  const held = moves.get(id);
  if (held) held.delta += delta;
  else moves.set(id, { key, delta });
}

/** Moves a product from the count row of its stored document to the one of its next, when they differ. */
async function recount(tx: ReadTx, stored: ProductDoc | null, next: ProductDoc): Promise<void> {
  if (!(await countsKept(tx, stored === null))) return;
  const to = countKeyOf(next);
  if (stored !== null) {
    const from = countKeyOf(stored);
    if (sameCountKey(from, to)) return;
    move(tx, from, -1);
  }
  move(tx, to, 1);
}

/** Adds the unit's moves to their count rows; a row whose count falls to 0 is deleted. */
async function writeCounts(tx: ReadTx): Promise<void> {
  const moves = countsSeen.get(tx)?.moves;
  if (!moves) return;
  for (const [id, { key, delta }] of moves) {
    if (delta === 0) continue;
    const n = ((await tx.get<ProductCountDoc>(PRODUCT_COUNTS, id))?.n ?? 0) + delta;
    if (n === 0) await tx.delete(PRODUCT_COUNTS, id);
    else await tx.put(PRODUCT_COUNTS, { _id: id, ...key, n });
  }
  moves.clear();
}

/** Saves a product's next document (`stored`: the one it replaces, null for a new SKU) and moves its count. */
async function save(
  tx: ReadTx,
  stored: ProductDoc | null,
  doc: ProductDoc,
  store: StoreFacts | null,
  at: string,
  position: number,
): Promise<void> {
  const facts = { product: doc.product, removed: doc.removed, cover: doc.cover };
  const { state, reasons } = deriveBaseState(facts, store);
  const published_at = doc.published_at ?? (state === 'accepted' ? at : null);
  const cover_checked_at = currentCover(facts)?.checked_at ?? null;
  const next: ProductDoc = {
    ...doc,
    base_state: state,
    reasons,
    published_at,
    cover_checked_at,
    position,
    page_host: urlHost(doc.product.product_url),
    available: doc.product.available === true,
    reason_codes: reasonCodesKey(reasons),
  };
  await recount(tx, stored, next);
  await tx.put(PRODUCTS, next);
}

/**
 * `published_at` of a product after the store states it has not seen yet (those after its own position), oldest
 * first: the document's fields are unchanged since its position, so each state is judged on them. This is what makes
 * the documents the same however the runner groups events into units (a fan-out page reaching the product, or one of
 * the product's own events, comes first).
 */
function publishedThrough(doc: ProductDoc, states: readonly OwedStoreState[]): string | null {
  let published_at = doc.published_at;
  for (const s of states) {
    if (published_at !== null) break;
    if (s.position <= doc.position) continue;
    const facts = { product: doc.product, removed: doc.removed, cover: doc.cover };
    if (deriveBaseState(facts, s.facts).state === 'accepted') published_at = s.at;
  }
  return published_at;
}

/** The store states owed to the products of a store with a fan-out in progress, the current one last. */
async function owedStates(tx: ReadTx, storeId: string, current: ProductStoreDoc | null): Promise<OwedStoreState[]> {
  if (!current) return [];
  const fanOut = await tx.get<FanOutDoc>(FANOUTS, storeId);
  if (!fanOut) return [];
  return [...(fanOut.owed ?? []), { facts: factsOf(current), at: fanOut.at, position: fanOut.position }];
}

function factsOf(doc: ProductStoreDoc): StoreFacts {
  const { _id: _ignoredId, position: _ignoredPosition, ...facts } = doc;
  return facts;
}

async function onProductEvent(recorded: RecordedEvent, tx: ReadTx): Promise<void> {
  const e = asUnion<ProductEvent>(recorded);
  const { env, partnerId } = streamScope(recorded.stream);
  const id = productDocId({ env, partnerId }, e.data.sku);
  const stored = await tx.get<ProductDoc>(PRODUCTS, id);
  if (alreadyApplied(stored, recorded)) return;
  let current = stored;
  if (current && !current.removed) {
    // The store states a fan-out in progress owes this product come before its own event. A product whose position
    // is past its store's last event has seen every state (a fan-out page or its own write passed it): no read.
    const storeId = storeFactsId({ env, partnerId }, current.store_id);
    const facts = await storeFacts(tx, storeId);
    if (facts && facts.position > current.position) {
      const owed = await owedStates(tx, storeId, facts);
      if (owed.length > 0) current = { ...current, published_at: publishedThrough(current, owed) };
    }
  }
  let doc: ProductDoc | null = null;
  switch (e.type) {
    case 'ProductUpserted':
      doc = {
        _id: id,
        partner_id: partnerId,
        env,
        sku: e.data.sku,
        store_id: e.data.product.store_id,
        product: e.data.product,
        removed: false,
        cover: current?.cover ?? null,
        cover_checked_at: null,
        base_state: 'pending',
        reasons: [],
        received_at: e.data.received_at,
        last_write_at: e.data.received_at,
        lapse_due_at: freshUntil(e.data.received_at),
        published_at: current && !current.removed ? current.published_at : null,
        position: 0,
        // Set by `save`. Listed here, in the place its copy gives them, so that the copy only replaces values: V8
        // copies an object with keys added after the spread several times slower (measured: ~5 µs per write here).
        page_host: '',
        available: false,
        reason_codes: '',
      };
      break;
    case 'ProductPatched':
      if (current)
        doc = {
          ...current,
          product: applyPatch(current.product, e.data.patch),
          received_at: e.data.received_at,
          last_write_at: e.data.received_at,
          lapse_due_at: freshUntil(e.data.received_at),
        };
      break;
    case 'ProductRemoved':
      if (current) doc = { ...current, removed: true };
      break;
    case 'CoverChecked':
      if (current)
        doc = {
          ...current,
          cover: { url: e.data.url, ok: e.data.ok, reasons: e.data.reasons, checked_at: e.data.checked_at },
        };
      break;
    case 'ProductFreshnessLapsed':
      // Only the lapse of the current write is done with; the state itself still follows the clock.
      if (current && e.data.lapsed_at === freshUntil(current.last_write_at)) doc = { ...current, lapse_due_at: null };
      break;
  }
  if (!doc) return;
  const store = await storeFacts(tx, storeFactsId({ env, partnerId }, doc.store_id));
  await save(tx, stored, doc, store, recorded.metadata.recorded_at, recorded.position);
}

async function onStoreEvent(recorded: RecordedEvent, tx: ReadTx, page: number): Promise<void> {
  const e = asUnion<StoreEvent>(recorded);
  const { env, partnerId } = streamScope(recorded.stream);
  const id = storeFactsId({ env, partnerId }, e.data.store_id);
  const current = await storeFacts(tx, id);
  if (alreadyApplied(current, recorded)) return;
  const declares = e.type === 'StoreRegistered' || e.type === 'StoreReplaced';
  if (!current && !declares) return;
  const standing = evolveStanding(current ?? NEW_STANDING, e);
  let next: ProductStoreDoc;
  if (declares) {
    // A (re)declaration replaces the facts that come from the store's input; what is not sent is gone.
    next = { _id: id, ...standing, domains: e.data.store.domains, position: recorded.position };
    if (e.data.store.default_commission !== undefined) next.default_commission = e.data.store.default_commission;
  } else next = { ...current!, ...standing };
  next.position = recorded.position;
  // Every product of the store follows its store's status and domains: the first page now, the rest in later units
  // (a cursor in the same unit as the checkpoint that passes this event). A newer store event restarts the fan-out,
  // carrying the states the products it has not reached still owe (their `published_at`).
  // The unit spends at most one page on fan-outs, whatever number of store events it holds; a fan-out it has no room
  // for is left whole to the units that follow.
  const owed = await owedStates(tx, id, current);
  await tx.put(STORE_FACTS, next);
  storeFactsSeen.get(tx)!.set(id, next);
  const fanOut: FanOutDoc = {
    _id: id,
    partner_id: partnerId,
    env,
    store_id: e.data.store_id,
    position: recorded.position,
    at: recorded.metadata.recorded_at,
    after: null,
  };
  if (owed.length > 0) fanOut.owed = owed;
  const room = page - (inlineFannedOut.get(tx) ?? 0);
  if (room <= 0) await tx.put(FANOUTS, fanOut);
  else inlineFannedOut.set(tx, page - room + (await fanOutPage(tx, fanOut, next, room)));
}

/** Products a unit re-saved for store events (the unit's `tx` object), bounded by the page size. */
const inlineFannedOut = new WeakMap<ReadTx, number>();

/**
 * Re-saves one page of a fan-out's products with the store's facts; moves the cursor on, or deletes it at the end.
 * Returns the number of products re-saved.
 */
async function fanOutPage(tx: ReadTx, fanOut: FanOutDoc, facts: ProductStoreDoc, page: number): Promise<number> {
  const docs = await tx.find<ProductDoc>(PRODUCTS, {
    where: { partner_id: fanOut.partner_id, env: fanOut.env, store_id: fanOut.store_id },
    orderBy: [{ field: 'sku' }],
    ...(fanOut.after ? { after: fanOut.after } : {}),
    limit: page,
  });
  // A product whose own event came after the store event has already passed through this state (and the owed ones).
  for (const doc of docs) {
    if (doc.position >= fanOut.position) continue;
    const published_at = fanOut.owed ? publishedThrough(doc, fanOut.owed) : doc.published_at;
    await save(tx, doc, { ...doc, published_at }, facts, fanOut.at, fanOut.position);
  }
  const last = docs[docs.length - 1];
  if (docs.length < page || !last) await tx.delete(FANOUTS, fanOut._id);
  else await tx.put(FANOUTS, { ...fanOut, after: [last.sku, last._id] });
  return docs.length;
}

/** The next page of the oldest pending fan-out; false when none is pending. */
async function continueFanOut(tx: ReadTx, page: number): Promise<boolean> {
  const [fanOut] = await tx.find<FanOutDoc>(FANOUTS, { limit: 1 });
  if (!fanOut) return false;
  const facts = await storeFacts(tx, fanOut._id);
  if (!facts) await tx.delete(FANOUTS, fanOut._id);
  else await fanOutPage(tx, fanOut, facts, page);
  return true;
}

export interface ProductsProjectorOptions {
  /** Products re-saved per unit when a store event reaches all of them (default FANOUT_PAGE). */
  fanOutPage?: number;
}

export function createProductsProjector(options: ProductsProjectorOptions = {}): Projector {
  const page = options.fanOutPage ?? FANOUT_PAGE;
  if (!Number.isSafeInteger(page) || page < 1) throw new RangeError(`fanOutPage: ${page}`);
  return {
    name: 'products',
    collections: PRODUCT_COLLECTIONS,
    categories: ['product', 'store'],
    async apply(recorded, tx) {
      if (recorded.stream.startsWith('product-')) return onProductEvent(recorded, tx);
      return onStoreEvent(recorded, tx, page);
    },
    endUnit: writeCounts,
    async continueWork(tx) {
      const more = await continueFanOut(tx, page);
      await writeCounts(tx);
      return more;
    },
    leavesWork: (recorded) => recorded.stream.startsWith('store-'),
  };
}

export const productsProjector: Projector = createProductsProjector();
