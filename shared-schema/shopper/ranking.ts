/**
 * Grouping and ordering of a search answer (SHOPPER.md, "Matching and ranking"), pure. Its input type, SearchOffer,
 * has no commission field at all: nothing here can read one (rule 1), and a property test checks that answers do not
 * change with any commission (tests/shopper/ranking.property.spec.ts).
 *
 * - Offers with the same `gtin` are one product; an offer without `gtin` is a product of its own.
 * - Products: by relevance (the number of query words found in a title of the product's offers; a match in the title
 *   ranks above a match only in other fields), then the best rating (`average`, then `count`), then the lowest price
 *   (`offers`, else `alternatives`), then a stable key (`gtin:<gtin>` or `offer:<id>`).
 * - Inside a product: by total known price (price + fixed shipping; free adds 0; unknown adds nothing and sorts after
 *   an equal known total), then `store_id`, `sku`, id.
 */
import type { Shipping } from '../events/product.js';
import { textWords } from '../ports/text-search.js';
import { applyOfferRules, type Condition } from './offer-rules.js';

export interface SearchOffer {
  /** The offer's id in the offers model (unique). */
  id: string;
  store_id: string;
  store_name: string;
  sku: string;
  gtin: string | null;
  title: string;
  brand: string | null;
  condition: Condition;
  price_cents: number;
  original_price_cents: number | null;
  installments: { count: number; value_cents: number; interest_free: boolean } | null;
  shipping: Shipping | null;
  rating: { average: number; count: number } | null;
  image_url: string;
  updated_at: string;
}

export interface RankedProduct {
  key: string;
  relevance: number;
  offers: SearchOffer[];
  alternatives: SearchOffer[];
}

/** How many of the query words the title holds (the last word may match as a prefix). */
export function titleRelevance(words: readonly string[], title: string, minPrefix: number): number {
  const titleWords = textWords(title);
  return words.filter((w, i) =>
    titleWords.some((t) => t === w || (i === words.length - 1 && w.length >= minPrefix && t.startsWith(w))),
  ).length;
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** The order of offers inside a product. */
export function compareOffers(a: SearchOffer, b: SearchOffer): number {
  const extra = (o: SearchOffer): number | null =>
    o.shipping === null ? null : o.shipping.type === 'free' ? 0 : o.shipping.cost_cents;
  const ea = extra(a);
  const eb = extra(b);
  const ta = a.price_cents + (ea ?? 0);
  const tb = b.price_cents + (eb ?? 0);
  if (ta !== tb) return ta - tb;
  if ((ea === null) !== (eb === null)) return ea === null ? 1 : -1;
  return cmp(a.store_id, b.store_id) || cmp(a.sku, b.sku) || cmp(a.id, b.id);
}

function bestRating(offers: readonly SearchOffer[]): [number, number] {
  let best: [number, number] = [-1, -1];
  for (const o of offers) {
    if (!o.rating) continue;
    const r: [number, number] = [o.rating.average, o.rating.count];
    if (r[0] > best[0] || (r[0] === best[0] && r[1] > best[1])) best = r;
  }
  return best;
}

function lowestPrice(p: RankedProduct): number {
  const list = p.offers.length > 0 ? p.offers : p.alternatives;
  return Math.min(...list.map((o) => o.price_cents));
}

/**
 * The products of one answer, ordered, from the searchable offers it found (each offer matching the words, or
 * sharing a gtin with one that does). Rule 5 and the condition rule are applied per product; a product whose every
 * offer rule 5 leaves out is not listed.
 */
export function rankProducts(
  words: readonly string[],
  found: readonly SearchOffer[],
  minPrefix: number,
): RankedProduct[] {
  const groups = new Map<string, SearchOffer[]>();
  for (const o of found) {
    const key = o.gtin !== null ? `gtin:${o.gtin}` : `offer:${o.id}`;
    const list = groups.get(key);
    if (list) list.push(o);
    else groups.set(key, [o]);
  }
  const products: (RankedProduct & { rating: [number, number]; price: number })[] = [];
  for (const [key, list] of groups) {
    const { offers, alternatives } = applyOfferRules([...list].sort(compareOffers));
    if (offers.length + alternatives.length === 0) continue;
    const shown = [...offers, ...alternatives];
    const relevance = Math.max(...shown.map((o) => titleRelevance(words, o.title, minPrefix)));
    const p: RankedProduct = { key, relevance, offers, alternatives };
    products.push({ ...p, rating: bestRating(shown), price: lowestPrice(p) });
  }
  products.sort(
    (a, b) =>
      b.relevance - a.relevance ||
      b.rating[0] - a.rating[0] ||
      b.rating[1] - a.rating[1] ||
      a.price - b.price ||
      cmp(a.key, b.key),
  );
  return products.map(({ key, relevance, offers, alternatives }) => ({ key, relevance, offers, alternatives }));
}
