/**
 * The product aggregate. PUT replaces the whole registration, PATCH changes only what it sends, DELETE removes;
 * the greatest `updated_at` prevails (ties apply in arrival order); an older submission is answered with
 * `ignored_stale` and changes nothing. The store of a SKU never changes, even after a delete.
 */
import type { ProductEvent, ProductInput, ProductPatch } from '../../shared-schema/events/product.js';
import {
  applyPatch,
  deriveBaseState,
  freshUntil,
  type CoverFacts,
  type StoreFacts,
} from '../../shared-schema/domain/product-status.js';
import { conflict, notFound, invalid } from '../../shared-schema/contract/problems.js';
import { notHigher } from '../../shared-schema/domain/product-rules.js';
import { unreachable, type Decider, type Decision } from './decider.js';

/** The product stream folded: what the write side decides on (the contract's `state` enum is `ProductState`). */
export interface ProductStreamState {
  exists: boolean;
  sku: string;
  storeId: string;
  product: ProductInput | null;
  removed: boolean;
  /** Epoch ms of the greatest `updated_at` applied since the last (re)creation. */
  lastUpdatedAt: number;
  receivedAt: string;
  lastWriteAt: string;
  cover: CoverFacts | null;
  /**
   * Whether any cover check of this stream ever passed. Until one does the product was never accepted, so it has no
   * `published_at` (the write answer then needs no read of the read model).
   */
  coverEverPassed: boolean;
  /** `lastWriteAt` of the write whose 48 h lapse is recorded ('' when none): one lapse per write. */
  lapsedWriteAt: string;
}

const initialState = (): ProductStreamState => ({
  exists: false,
  sku: '',
  storeId: '',
  product: null,
  removed: false,
  lastUpdatedAt: 0,
  receivedAt: '',
  lastWriteAt: '',
  cover: null,
  coverEverPassed: false,
  lapsedWriteAt: '',
});

function evolve(s: ProductStreamState, e: ProductEvent): ProductStreamState {
  switch (e.type) {
    case 'ProductUpserted':
      return {
        ...s,
        exists: true,
        sku: e.data.sku,
        storeId: e.data.product.store_id,
        product: e.data.product,
        removed: false,
        lastUpdatedAt: Date.parse(e.data.product.updated_at),
        receivedAt: e.data.received_at,
        lastWriteAt: e.data.received_at,
      };
    case 'ProductPatched':
      return {
        ...s,
        product: applyPatch(s.product!, e.data.patch),
        lastUpdatedAt: Date.parse(e.data.patch.updated_at),
        receivedAt: e.data.received_at,
        lastWriteAt: e.data.received_at,
      };
    case 'ProductRemoved':
      return { ...s, removed: true, lastUpdatedAt: 0 };
    case 'CoverChecked':
      return {
        ...s,
        cover: { url: e.data.url, ok: e.data.ok, reasons: e.data.reasons, checked_at: e.data.checked_at },
        coverEverPassed: s.coverEverPassed || e.data.ok,
      };
    case 'ProductFreshnessLapsed':
      return { ...s, lapsedWriteAt: s.lastWriteAt };
    default:
      return unreachable(e);
  }
}

export interface ProductResult {
  ignoredStale: boolean;
}

export type ProductCommand =
  | { type: 'UpsertProduct'; sku: string; input: ProductInput; now: string }
  | { type: 'PatchProduct'; sku: string; patch: ProductPatch; now: string }
  | { type: 'RemoveProduct'; sku: string; now: string }
  /**
   * Records the 48 h lapse of the last write when it is due: the product is accepted (judged with its store's
   * facts, as reads judge it), the clock (`now`) is past the write + 48 h, and that write's lapse is not recorded yet.
   */
  | { type: 'LapseFreshness'; sku: string; store: StoreFacts | null; now: string };

function decide(c: ProductCommand, s: ProductStreamState): Decision<ProductEvent, ProductResult> {
  switch (c.type) {
    case 'UpsertProduct': {
      if (s.exists && s.storeId !== c.input.store_id) throw skuStoreConflict(s.storeId);
      if (s.exists && !s.removed && Date.parse(c.input.updated_at) < s.lastUpdatedAt) {
        return { events: [], result: { ignoredStale: true } };
      }
      return {
        events: [{ type: 'ProductUpserted', data: { sku: c.sku, product: c.input, received_at: c.now } }],
        result: { ignoredStale: false },
      };
    }
    case 'PatchProduct': {
      if (!s.exists || s.removed || !s.product) throw notFound('No such product.');
      if (Date.parse(c.patch.updated_at) < s.lastUpdatedAt) return { events: [], result: { ignoredStale: true } };
      const merged = applyPatch(s.product, c.patch);
      const priceError = notHigher(merged.price_cents, merged.original_price_cents);
      if (priceError) throw invalid([priceError]);
      return {
        events: [{ type: 'ProductPatched', data: { sku: c.sku, patch: c.patch, received_at: c.now } }],
        result: { ignoredStale: false },
      };
    }
    case 'RemoveProduct':
      if (!s.exists || s.removed) return { events: [], result: { ignoredStale: false } };
      return {
        events: [{ type: 'ProductRemoved', data: { sku: c.sku, store_id: s.storeId, removed_at: c.now } }],
        result: { ignoredStale: false },
      };
    case 'LapseFreshness': {
      const none = { events: [], result: { ignoredStale: false } };
      if (!s.exists || s.removed || !s.product || s.lapsedWriteAt === s.lastWriteAt) return none;
      const lapsedAt = freshUntil(s.lastWriteAt);
      if (Date.parse(c.now) <= Date.parse(lapsedAt)) return none;
      const facts = { product: s.product, removed: s.removed, cover: s.cover };
      if (deriveBaseState(facts, c.store).state !== 'accepted') return none;
      return {
        events: [{ type: 'ProductFreshnessLapsed', data: { sku: c.sku, store_id: s.storeId, lapsed_at: lapsedAt } }],
        result: { ignoredStale: false },
      };
    }
    default:
      return unreachable(c);
  }
}

export const productDecider: Decider<ProductStreamState, ProductCommand, ProductEvent, ProductResult> = {
  name: 'product',
  initialState,
  evolve,
  decide,
};

export function skuStoreConflict(storeId: string) {
  return conflict('store_id', 'sku_store_conflict', `This SKU belongs to store ${storeId}; its store cannot change.`);
}
