/**
 * The searchable offer behind a public address `{store address}/{sku}` (the offer page at `svc_url`, the redirector
 * at `/r/…`): found in the offers read model and judged at `now` with the search's own rule (`isSearchable`), so
 * an address answers exactly while its offer can be found by a search.
 *
 * A store address (lower-cased `store_id`) is unique per partner and environment only. Should two partners' offers
 * be searchable at the same address and SKU, the one published first keeps it (then the lower partner id), read
 * from the products model's `published_at`.
 */
import type { Doc, ReadView } from '../ports/read-store.js';
import { storeAddress } from '../product-status.js';
import { OFFER_STORES, OFFERS } from '../read-models/offers.js';
import { PRODUCTS, productDocId, type ProductDoc } from '../read-models/products.js';
import { isSearchable, type OfferDoc, type OfferStoreDoc } from './offer-facts.js';

export type FoundOffer = { offer: OfferDoc; store: OfferStoreDoc };

/**
 * Offers sharing one SKU read per page. Every page is read: many partners may use the same SKU ("1"), and the offer
 * at the address may come after any number of theirs (the model has no index by store address).
 */
const SAME_SKU_PAGE = 100;

/** The two decoded segments of `{prefix}/{address}/{sku}` (e.g. `/p/loja-a/sku-1`), or null. */
export function parseOfferPath(path: string, prefix: '/p' | '/r'): { address: string; sku: string } | null {
  if (!path.startsWith(`${prefix}/`)) return null;
  const m = /^([^/]+)\/([^/]+)$/.exec(path.slice(prefix.length + 1));
  if (!m) return null;
  try {
    return { address: decodeURIComponent(m[1]), sku: decodeURIComponent(m[2]) };
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
  const found: FoundOffer[] = [];
  for (let after: string | null = null; ;) {
    const docs: (OfferDoc & Doc)[] = await reads.find<OfferDoc & Doc>(OFFERS, {
      where: { sku },
      limit: SAME_SKU_PAGE,
      ...(after !== null ? { after: [after] } : {}),
    });
    for (const offer of docs) {
      if (storeAddress(offer.store_id) !== address) continue;
      const store = await reads.get<OfferStoreDoc & Doc>(OFFER_STORES, offer.store_key);
      if (store && isSearchable(offer, store, now)) found.push({ offer, store });
    }
    if (docs.length < SAME_SKU_PAGE) break;
    after = docs[docs.length - 1]._id;
  }
  if (found.length <= 1) return found[0] ?? null;
  const publishedAt = new Map<string, string>();
  for (const f of found)
    publishedAt.set(
      f.offer._id,
      (await reads.get<ProductDoc>(PRODUCTS, productDocId({ env: 'live', partnerId: f.offer.partner_id }, f.offer.sku)))
        ?.published_at ?? '',
    );
  found.sort(
    (a, b) =>
      publishedAt.get(a.offer._id)!.localeCompare(publishedAt.get(b.offer._id)!) ||
      a.offer.partner_id.localeCompare(b.offer.partner_id),
  );
  return found[0];
}
