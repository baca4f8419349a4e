/**
 * The facts of the offers read model (projections/projectors/offers.ts) and whether an offer is searchable, derived
 * at search time from them and the service clock by the checks of visibility.ts (the partner's Visibility answer
 * calls the same): the state `accepted` at `now` as the partner API derives it (not pending, rejected, removed, nor
 * stale: 48 h to the millisecond), its store active, its page's domain approved, `available` true (SHOPPER.md,
 * "What is searchable"). The model holds live offers only (the test area is visible to nobody). No field here holds
 * a commission.
 */
import type { ProductInput } from '../events/product.js';
import type { StoreStatus } from '../events/store.js';
import { urlHost } from '../domain/host-match.js';
import { searchableNow } from '../domain/visibility.js';
import { baseState, currentCover, type BaseState, type CoverFacts, type StateFacts } from '../domain/product-status.js';

/**
 * What the shopper side reads of what the partner sent: no commission (search never reads one), and none of what no
 * search, page or redirect shows (description, stock, variant grouping), and of the photos only the cover (a PATCH
 * cannot change photos). Every search parses each offer it ranks, a few hundred of them: a 5,000-character
 * description and ten photo addresses per offer would be read for nothing (docs/adr/0038-offers-read-model.md).
 */
export type OfferProduct = Omit<
  ProductInput,
  'commission' | 'description' | 'stock_quantity' | 'group_id' | 'variant_attributes'
>;

export type OfferDoc = {
  _id: string;
  partner_id: string;
  sku: string;
  store_id: string;
  /** The `_id` of the store's facts in the offers model (`live:<partner>:<store_id>`). */
  store_key: string;
  gtin: string | null;
  product: OfferProduct;
  removed: boolean;
  /** The cover verdict that applies (a check of an older address does not count). */
  cover: CoverFacts | null;
  /** The time of the last applied PUT/PATCH (the 48-hour rule). */
  last_write_at: string;
  /** Text index fields (ports/text-search.ts); empty for a removed offer. */
  text_title: string;
  text_other: string;
  position: number;
};

export type OfferStoreDoc = {
  _id: string;
  store_id: string;
  name: string;
  status: StoreStatus;
  domains: string[];
  domains_approved: string[];
  position: number;
};

/** The product as the offers model keeps it (OfferProduct): the offers model never holds a commission. */
export function offerProduct(product: ProductInput): OfferProduct {
  const {
    commission: _commission,
    description: _description,
    stock_quantity: _stock,
    group_id: _group,
    variant_attributes: _variant,
    ...rest
  } = product;
  return { ...rest, image_urls: rest.image_urls.slice(0, 1) };
}

/** The words of the offer that are not its title: brand, model, category, attribute values, gtin. */
export function otherText(p: OfferProduct): string {
  return [p.brand, p.model, p.category, ...Object.values(p.attributes ?? {}), p.gtin]
    .filter((s): s is string => typeof s === 'string')
    .join(' ');
}

/**
 * What searchability reads of an offer: the state's facts (its removal, its current cover's verdict, its page's
 * host), the time of its last applied write (ISO text, or ms since the epoch), `available`. Taken from the whole
 * document here, and kept apart by the embedded search for the offers it has read (infra/adapters/sqlite/held-offers.ts): both
 * judge with `searchableFrom` on `baseStateAt`.
 */
export interface SearchableFacts extends StateFacts {
  available: boolean;
  last_write_at: string | number;
}

export function searchableFactsOf(offer: OfferDoc): SearchableFacts {
  return {
    removed: offer.removed,
    cover: currentCover({ product: offer.product, removed: offer.removed, cover: offer.cover }),
    page_host: urlHost(offer.product.product_url),
    available: offer.product.available,
    last_write_at: offer.last_write_at,
  };
}

/** The base state of the offer's facts with its store's (none: the store is not live). */
export function baseStateAt(facts: StateFacts, store: OfferStoreDoc | null): BaseState {
  return baseState(
    facts,
    store ? { status: store.status, domains: store.domains, domains_approved: store.domains_approved } : null,
  ).state;
}

/**
 * Searchable at `now` (SHOPPER.md, "What is searchable"), by the checks of the partner's Visibility
 * (visibility.ts), from the base state of the offer's facts (`baseStateAt`; a search judging many offers of one store
 * and host derives it once). The offers model holds live offers only.
 */
export function searchableFrom(
  base: BaseState,
  facts: Pick<SearchableFacts, 'available' | 'last_write_at' | 'page_host'>,
  store: OfferStoreDoc | null,
  now: Date,
): boolean {
  return searchableNow(
    {
      live: true,
      base,
      last_write_at: facts.last_write_at,
      store,
      page_host: facts.page_host,
      available: facts.available,
    },
    now,
  );
}

export function isSearchable(offer: OfferDoc, store: OfferStoreDoc | null, now: Date): boolean {
  const facts = searchableFactsOf(offer);
  return searchableFrom(baseStateAt(facts, store), facts, store, now);
}
