/**
 * The channel feed (FEEDS.md): the facts of every live offer and store, kept by the offers model's own rule
 * (offers.ts `offerAfter`, `offerStoreAfter`), each offer judged with the search's rule (`isSearchable`) at the time
 * of every event that concerns it, and each judgment that changes what a channel holds written as a change: an
 * `upsert` when the offer enters the feed or any field of it changes, a `delete` when it leaves.
 *
 * The clock's part (rule 3: 48 h without a write) reaches the log as `ProductFreshnessLapsed` (appended by the
 * freshness reactor when the clock passes), judged just past its `lapsed_at`, so a replay writes the same changes. A
 * store's event judges every offer of the store again, in the same unit (a status, a domain approval, a name).
 *
 * Each change keeps the time it was judged at; `FeedChangesPruned` (the retention reactor) drops the oldest ones.
 */
import { createHash } from 'node:crypto';
import { asUnion, type RecordedEvent } from '../../shared-schema/ports/event-store.js';
import type { ReadTx } from '../../shared-schema/ports/read-store.js';
import { isSearchable, type OfferStoreDoc } from '../../shared-schema/shopper/offer-facts.js';
import {
  changeTemplate,
  entryCanonicalJson,
  feedEntryOf,
  tsvTemplate,
  type FeedEntry,
  type FeedEntryChange,
} from '../../shared-schema/feeds/feed-offer.js';
import { scopedId } from '../../shared-schema/read-models/scoped-id.js';
import {
  FEED_CHANGES,
  FEED_COLLECTIONS,
  FEED_MARKS,
  PRUNED_MARK,
  PRUNE_PER_EVENT,
  type FeedPrunedDoc,
  FEED_OFFERS,
  FEED_STORES,
  feedChangeKey,
  type FeedChangeDoc,
  type FeedOfferDoc,
} from '../../shared-schema/read-models/feed.js';
import type { ProductEvent, ProductInput } from '../../shared-schema/events/product.js';
import { FEED_CATEGORY, FEED_RETENTION_STREAM, type FeedEvent } from '../../shared-schema/events/feed.js';
import { alreadyApplied, streamScope, UnitDocs, type Projector } from '../projector.js';
import { offerAfter, offerStoreAfter, offerStoreId } from './offers.js';

/** The stores' facts, read once per unit of work (the events of a batch mostly reach offers of one store). */
const stores = new UnitDocs<OfferStoreDoc>(FEED_STORES);

/**
 * The time an event judges at: when it was recorded; for a lapse, the instant after its `lapsed_at` (the write turned
 * 48 h old then, and rule 3 reads stale only past 48 h), whenever the reactor got to it.
 */
function judgedAt(recorded: RecordedEvent): Date {
  const e = asUnion<ProductEvent>(recorded);
  if (e.type === 'ProductFreshnessLapsed') return new Date(Date.parse(e.data.lapsed_at) + 1);
  return new Date(recorded.metadata.recorded_at);
}

/**
 * What a channel holds of the offer: its feed id and the hash of its entry (null: not in the feed). Canonical JSON:
 * the entry's nested objects keep the key order the partner sent, which a write may change without changing a value.
 */
const entryHash = (entry: FeedEntry): string =>
  createHash('sha256').update(entryCanonicalJson(entry)).digest().subarray(0, 24).toString('base64url');

function heldOf(doc: FeedOfferDoc): { id: string; hash: string } | null {
  if (doc.feed_id !== undefined) return doc.feed_id === null ? null : { id: doc.feed_id, hash: doc.entry_hash ?? '' };
  // A document projected before the hash was kept: its entry.
  return doc.entry ? { id: doc.entry.id, hash: entryHash(doc.entry) } : null;
}

/**
 * The offer judged again at `at`: its new document, and the changes a channel sees (none when nothing it holds moved).
 * Exported for the search bench, which seeds the feed's model with the documents this writes.
 */
export function judgeOffer(
  doc: FeedOfferDoc,
  store: OfferStoreDoc | null,
  at: Date,
): { doc: FeedOfferDoc; changes: FeedEntryChange[] } {
  const entry = store && isSearchable(doc, store, at) ? feedEntryOf(doc, store, doc.description) : null;
  const before = heldOf(doc);
  const hash = entry ? entryHash(entry) : null;
  const changes: FeedEntryChange[] = [];
  if (before && (!entry || entry.id !== before.id)) changes.push({ op: 'delete', id: before.id });
  if (entry && (!before || hash !== before.hash || entry.id !== before.id)) changes.push({ op: 'upsert', entry });
  // The document keeps the entry's id, hash and line, not the entry: the change holds it, the full feed the line.
  // (Only a document of the earlier shape has an entry to leave out: the others are copied whole, which is cheaper.)
  let facts: FeedOfferDoc = doc;
  if ('entry' in doc) {
    const { entry: _earlier, ...rest } = doc;
    facts = rest;
  }
  return {
    doc: {
      ...facts,
      feed_id: entry ? entry.id : null,
      entry_hash: hash,
      in_feed: entry !== null,
      tsv: entry ? tsvTemplate(entry) : null,
    },
    changes,
  };
}

/**
 * A change as the model keeps it: the time it was judged at and its JSON without the address and the channel, which
 * holds the whole entry (kept once: a page reads the text alone). Exported for the search bench, which seeds a
 * backlog of changes as this writes them.
 */
export function feedChangeDoc(_id: string, change: FeedEntryChange, at: string): FeedChangeDoc {
  const json = changeTemplate(change);
  return change.op === 'upsert' ? { _id, op: 'upsert', at, json } : { _id, op: 'delete', id: change.id, at, json };
}

async function writeChanges(
  tx: ReadTx,
  position: number,
  at: Date,
  changes: readonly FeedEntryChange[],
): Promise<void> {
  if (changes.length === 0) return;
  const when = at.toISOString();
  for (const [rank, c] of changes.entries()) {
    await tx.put(FEED_CHANGES, feedChangeDoc(feedChangeKey(position, rank), c, when));
  }
}

/**
 * The retention (`FeedChangesPruned`): the oldest changes, in order, while judged before `before` (a change written
 * before the time was kept counts as older), at most PRUNE_PER_EVENT of them; the mark remembers the newest dropped.
 * Oldest first, so what is kept is always every change after the mark.
 */
async function onPruned(recorded: RecordedEvent, tx: ReadTx): Promise<void> {
  const e = asUnion<FeedEvent>(recorded);
  if (e.type !== 'FeedChangesPruned') return;
  const mark = await tx.get<FeedPrunedDoc>(FEED_MARKS, PRUNED_MARK);
  if (alreadyApplied(mark, recorded)) return;
  const oldest = await tx.find<{ _id: string; at: string | null }>(FEED_CHANGES, {
    limit: PRUNE_PER_EVENT,
    fields: ['at'],
  });
  let through = mark?.through ?? '';
  for (const change of oldest) {
    if (change.at !== null && change.at >= e.data.before) break;
    await tx.delete(FEED_CHANGES, change._id);
    through = change._id;
  }
  const next: FeedPrunedDoc = { _id: PRUNED_MARK, through, before: e.data.before, position: recorded.position };
  await tx.put(FEED_MARKS, next);
}

async function onProductEvent(recorded: RecordedEvent, tx: ReadTx): Promise<void> {
  const { env, partnerId } = streamScope(recorded.stream);
  if (env !== 'live') return;
  const id = scopedId({ env, partnerId }, (recorded.data as { sku: string }).sku);
  const current = await tx.get<FeedOfferDoc>(FEED_OFFERS, id);
  if (alreadyApplied(current, recorded)) return;
  let next: FeedOfferDoc | null;
  if (recorded.type === 'ProductFreshnessLapsed') next = current;
  else {
    // `offerAfter` made a new document: the feed's fields are added to it in place, in the order a copy would have.
    const facts = offerAfter(current, recorded, id);
    if (!facts) return;
    const upserted = (recorded.data as { product?: ProductInput }).product;
    next = facts as FeedOfferDoc;
    next.description = upserted ? (upserted.description ?? null) : (current?.description ?? null);
    next.in_feed = current?.in_feed ?? false;
    if (current === null) {
      next.feed_id = null;
      next.entry_hash = null;
    } else if (current.feed_id !== undefined) {
      // What a channel holds, as the document has it (an earlier document: its entry).
      next.feed_id = current.feed_id;
      next.entry_hash = current.entry_hash;
    } else next.entry = current.entry;
    // `judgeOffer` sets the line: its place is held here, where its copy would add it after the entry's id and hash,
    // so that the copy only replaces values (V8 copies several times slower when keys are added after a spread).
    // A document of the earlier shape is left as it is: its copy leaves the entry out and puts those after.
    if (!('tsv' in next) && !('entry' in next)) next.tsv = null;
  }
  if (!next) return;
  const store = await stores.get(tx, next.store_key);
  const at = judgedAt(recorded);
  const judged = judgeOffer(next, store, at);
  judged.doc.position = recorded.position;
  await tx.put(FEED_OFFERS, judged.doc);
  await writeChanges(tx, recorded.position, at, judged.changes);
}

async function onStoreEvent(recorded: RecordedEvent, tx: ReadTx): Promise<void> {
  const id = offerStoreId(recorded);
  if (id === null) return;
  const current = await stores.get(tx, id);
  if (alreadyApplied(current, recorded)) return;
  const store = offerStoreAfter(current, recorded, id);
  if (!store) return;
  await stores.put(tx, store);
  const at = judgedAt(recorded);
  const changes: FeedEntryChange[] = [];
  for (const offer of await tx.find<FeedOfferDoc>(FEED_OFFERS, { where: { store_key: id } })) {
    const judged = judgeOffer(offer, store, at);
    if (judged.changes.length === 0) continue;
    await tx.put(FEED_OFFERS, judged.doc);
    changes.push(...judged.changes);
  }
  await writeChanges(tx, recorded.position, at, changes);
}

export const feedProjector: Projector = {
  name: 'feed',
  collections: FEED_COLLECTIONS,
  categories: ['product', 'store', FEED_CATEGORY],
  async apply(recorded, tx) {
    if (recorded.stream.startsWith('product-')) return onProductEvent(recorded, tx);
    if (recorded.stream === FEED_RETENTION_STREAM) return onPruned(recorded, tx);
    return onStoreEvent(recorded, tx);
  },
};
