/**
 * The offers read model of the shopper side (SHOPPER.md), written by projections/projectors/offers.ts, read by the
 * search, the offer page and the redirector: one document per live SKU (`OfferDoc`) and one per live store
 * (`OfferStoreDoc`), joined at read time. Its documents are described in shared-schema/shopper/offer-facts.ts.
 */
import type { CollectionSpec } from '../ports/read-store.js';

export const OFFERS = 'offers';
export const OFFER_STORES = 'offer_stores';

export const OFFER_COLLECTIONS: readonly CollectionSpec[] = [
  // gtin: the other offers of a product; sku: the offer behind an address (offer page, redirector).
  // last_write_at: the search's 48-hour bound is tested on every text match (query-api/public/search.ts).
  // The projector reads offers by `_id` only.
  {
    name: OFFERS,
    indexes: [['gtin'], ['sku']],
    applyIndexes: [],
    filtered: ['last_write_at'],
    text: ['text_title', 'text_other'],
  },
  // position: a search reader's copy of the stores reads what was written since its newest (store-facts.ts).
  { name: OFFER_STORES, indexes: [['position']] },
];
