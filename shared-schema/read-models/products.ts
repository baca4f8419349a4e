/**
 * The products read model, written by projections/projectors/products.ts: one document per SKU with its base state
 * (`stale` is not stored: readers apply the clock), the store facts it was derived from, and the cursors of store
 * events whose products are still to be re-saved.
 */
import type { CollectionSpec, Where } from '../ports/read-store.js';
import type { ProductInput, RejectionReason } from '../events/product.js';
import type { BaseState, CoverFacts, StoreFacts } from '../domain/product-status.js';
import { urlHost } from '../domain/host-match.js';
import type { Tenant } from '../domain/streams.js';
import { scopedId, type ScopedDoc } from './scoped-id.js';

export const PRODUCTS = 'products';
/** The facts of each store its products' state needs, kept here so the model can be rebuilt alone. */
export const STORE_FACTS = 'product_store_facts';
/** Store events whose products are still to be re-saved (one cursor per store). */
export const FANOUTS = 'product_fanouts';
/**
 * The number of products of each combination of what the portal's counts test (query-api/routes/insights.ts), kept
 * by the products projector with every product it saves: one row per partner, environment, store, base state and,
 * for an `accepted` product, page host, availability and hour of last write (or `lapsed`); for a `pending` or
 * `rejected` one, its set of reason codes. A row whose count falls to 0 is deleted.
 */
export const PRODUCT_COUNTS = 'product_counts';
/**
 * The id of the row saying the counts are complete: written by the products projector when it saves the first
 * product of an empty products collection (a new install, a rebuild). Products projected by a build that did not keep
 * the counts leave it absent, and the readers count the products themselves until a rebuild.
 */
export const COUNTS_KEPT = '~counts-kept';

export type ProductDoc = ScopedDoc & {
  sku: string;
  store_id: string;
  product: ProductInput;
  removed: boolean;
  cover: CoverFacts | null;
  /** When the current cover address was last checked (null: never): what the re-check scheduler scans. */
  cover_checked_at: string | null;
  base_state: BaseState;
  reasons: RejectionReason[];
  received_at: string;
  last_write_at: string;
  published_at: string | null;
  /**
   * `last_write_at` + 48 h while that write's lapse (ProductFreshnessLapsed) is not recorded; null once it is. The
   * freshness reactor scans accepted products by it. Absent on documents projected before it existed (a rebuild
   * fills it).
   */
  lapse_due_at?: string | null;
  /**
   * Copies of what the portal's counts test, kept at the top level so that they are counted by indexed conditions
   * instead of reading every document (query-api/routes/insights.ts): the host of `product.product_url`,
   * `product.available`, and `reasonCodesKey(reasons)`. Absent on documents projected before they existed; readers
   * judge those documents one by one (a rebuild fills them).
   */
  page_host?: string;
  available?: boolean;
  reason_codes?: string;
};

export type ProductStoreDoc = { _id: string; position: number } & StoreFacts;

/**
 * A store state that products not reached yet by a fan-out still pass through: a store event that comes while the
 * previous one's pages are owed restarts the fan-out, and each product it has not reached keeps the state in
 * between (its `published_at` may come from it).
 */
export type OwedStoreState = { facts: StoreFacts; at: string; position: number };

/**
 * The rest of a store event's fan-out: the products of the store after `after` (sort values sku, _id) in sku order.
 * `position` and `at` are the store event's (a product becoming accepted is published at that time); `owed` the
 * states of earlier store events whose fan-out this one restarted, oldest first.
 */
export type FanOutDoc = ScopedDoc & {
  store_id: string;
  at: string;
  after: [string, string] | null;
  owed?: OwedStoreState[];
};

/** What a count row tells apart (`n` aside). `hour` is the UTC hour of the last write, ISO; `lapsed` once recorded. */
export type ProductCountKey = {
  partner_id: string;
  env: Tenant['env'];
  store_id: string;
  base_state: BaseState;
  page_host: string | null;
  available: boolean | null;
  reason_codes: string | null;
  hour: string | null;
};
export type ProductCountDoc = { _id: string; n: number } & ProductCountKey;

export const HOUR_MS = 60 * 60 * 1000;
/** The start of the UTC hour of an instant, ISO. */
export const hourOf = (at: string | number): string =>
  new Date(Math.floor((typeof at === 'number' ? at : Date.parse(at)) / HOUR_MS) * HOUR_MS).toISOString();
/** The `hour` of an accepted product whose lapse (ProductFreshnessLapsed) is recorded: stale whatever its hour. */
export const LAPSED = 'lapsed';

/**
 * The count row a product document falls in. Only an `accepted` product is told apart by page host, availability
 * and hour (the searchable count and the 48 h rule test them); only `pending` and `rejected` by their reason codes.
 * A document of an older build, without the copies, gives the same key from its product.
 */
export function countKeyOf(doc: ProductDoc): ProductCountKey {
  const accepted = doc.base_state === 'accepted';
  const reasoned = doc.base_state === 'pending' || doc.base_state === 'rejected';
  return {
    partner_id: doc.partner_id,
    env: doc.env,
    store_id: doc.store_id,
    base_state: doc.base_state,
    page_host: accepted ? (doc.page_host ?? urlHost(doc.product.product_url)) : null,
    available: accepted ? (doc.available ?? doc.product.available === true) : null,
    reason_codes: reasoned ? reasonCodesKey(doc.reasons) : null,
    hour: accepted ? (doc.lapse_due_at === null ? LAPSED : hourOf(doc.last_write_at)) : null,
  };
}

/** The fields of a count key in the order its id lists them (every field: the record's type says so). */
const COUNT_KEY_ORDER: Record<keyof ProductCountKey, true> = {
  partner_id: true,
  env: true,
  store_id: true,
  base_state: true,
  page_host: true,
  available: true,
  reason_codes: true,
  hour: true,
};
const COUNT_KEY_FIELDS = Object.keys(COUNT_KEY_ORDER) as (keyof ProductCountKey)[];

/** The id of a count row: its key as JSON text, fields in a fixed order. */
export const countId = (k: ProductCountKey): string => JSON.stringify(COUNT_KEY_FIELDS.map((f) => k[f]));

/**
 * Whether two count keys name the same row, as their `countId`s would say (a missing value reads as null there),
 * without writing the two ids: most writes stay in their row.
 */
export const sameCountKey = (a: ProductCountKey, b: ProductCountKey): boolean =>
  COUNT_KEY_FIELDS.every((f) => (a[f] ?? null) === (b[f] ?? null));

/** The distinct codes of a product's reasons, sorted, as one group key (JSON text: any code survives it). */
export const reasonCodesKey = (reasons: readonly RejectionReason[]): string =>
  JSON.stringify([...new Set(reasons.map((r) => r.code))].sort());

/** The codes a `reasonCodesKey` holds. */
export const codesOfKey = (key: string): string[] => JSON.parse(key) as string[];

export const productDocId = (t: Tenant, sku: string): string => scopedId(t, sku);

/**
 * The accepted products whose 48 h passed by `now` (ISO) with no lapse recorded for their last write yet: what the
 * freshness reactor records, and what the full feed has recorded before it reads (one index: base_state,
 * lapse_due_at).
 */
export const lapseDueWhere = (now: string): Where => ({ base_state: 'accepted', lapse_due_at: { lt: now } });
/** The id of a store's facts, and of its fan-out cursor. */
export const storeFactsId = (t: Tenant, storeId: string): string => scopedId(t, storeId);

/** A store's products in SKU order. */
const BY_STORE = ['partner_id', 'env', 'store_id', 'sku'];

export const PRODUCT_COLLECTIONS: readonly CollectionSpec[] = [
  {
    name: PRODUCTS,
    indexes: [
      ['partner_id', 'env', 'sku'],
      BY_STORE,
      ['partner_id', 'env', 'base_state', 'sku'],
      ['base_state', 'cover_checked_at'],
      ['base_state', 'lapse_due_at'], // the freshness reactor: accepted products whose 48 h passed
      ['sku', 'env', 'base_state'], // the redirector: a live SKU whatever its partner
    ],
    // What the portal's counts of projections without count rows group and test (insights.ts: reasons by their set of
    // codes, the searchable ones by page host and availability, the 48 h rule by the last write; `?state=` too):
    // columns, no index of their own. Those counts walk a partner's products once and each active store's once more,
    // as they read each product's last write anyway; an index of their own moved on most writes of new products.
    filtered: ['reason_codes', 'last_write_at', 'page_host', 'available'],
    // A store event's fan-out pages through the products of the store; every other read of the projector is by `_id`.
    applyIndexes: [BY_STORE],
  },
  // The portal's counts read the rows of a partner and environment, or of one of its stores (the projector: by `_id`).
  { name: PRODUCT_COUNTS, indexes: [['partner_id', 'env', 'store_id']], applyIndexes: [] },
  { name: STORE_FACTS, indexes: [] },
  { name: FANOUTS, indexes: [] },
];
