/**
 * The searchable offer behind a public address `{store address}/{sku}` (the offer page at `svc_url`, the redirector
 * at `/r/…`): found in the offers read model and judged at `now` with the search's own rule (`isSearchable`), so
 * an address answers exactly while its offer can be found by a search.
 *
 * The store address (`{partner_id lower-cased}/{store_id lower-cased}`, product-status.ts `storeAddress`) names one
 * partner's store, and a partner has one offer per SKU: an address and a SKU name at most one offer, never another
 * partner's (partner ids are upper-case Crockford base32 after `pt_`, so two of them never lower-case alike).
 */
import type { Doc, ReadView } from '../ports/read-store.js';
import { storeAddress } from '../domain/product-status.js';
import { OFFER_STORES, OFFERS } from '../read-models/offers.js';
import { isSearchable, type OfferDoc, type OfferStoreDoc } from './offer-facts.js';

export type FoundOffer = { offer: OfferDoc; store: OfferStoreDoc };

/**
 * Offers sharing one SKU read per page. Every page is read: many partners may use the same SKU ("1"), and the offer
 * at the address may come after any number of theirs (the model has no index by store address).
 */
const SAME_SKU_PAGE = 100;

/** The decoded `{store address}` and SKU of `{prefix}/{partner}/{store}/{sku}` (`/p/pt_x/loja-a/sku-1`), or null. */
export function parseOfferPath(path: string, prefix: '/p' | '/r'): { address: string; sku: string } | null {
  if (!path.startsWith(`${prefix}/`)) return null;
  const m = /^([^/]+)\/([^/]+)\/([^/]+)$/.exec(path.slice(prefix.length + 1));
  if (!m) return null;
  try {
    return { address: `${decodeURIComponent(m[1])}/${decodeURIComponent(m[2])}`, sku: decodeURIComponent(m[3]) };
  } catch {
    return null;
  }
}

export async function findSearchableOffer(
  reads: ReadView,
  address: string,
  sku: string,
  now: Date,
): Promise<FoundOffer | null> {
  for (let after: string | null = null; ;) {
    const docs: (OfferDoc & Doc)[] = await reads.find<OfferDoc & Doc>(OFFERS, {
      where: { sku },
      limit: SAME_SKU_PAGE,
      ...(after !== null ? { after: [after] } : {}),
    });
    const offer = docs.find((o) => storeAddress(o.partner_id, o.store_id) === address);
    if (offer) {
      const store = await reads.get<OfferStoreDoc & Doc>(OFFER_STORES, offer.store_key);
      return store && isSearchable(offer, store, now) ? { offer, store } : null;
    }
    if (docs.length < SAME_SKU_PAGE) return null;
    after = docs[docs.length - 1]._id;
  }
}
