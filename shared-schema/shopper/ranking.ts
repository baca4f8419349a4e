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
  /** The partner whose offer it is: its store's address holds it (product-status.ts `storeAddress`). */
  partner_id: string;
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

/** What the ranking reads of an offer (a SearchOffer, or the facts the embedded search keeps of one): no commission. */
export type RankInput = Pick<
  SearchOffer,
  'id' | 'store_id' | 'sku' | 'gtin' | 'title' | 'condition' | 'price_cents' | 'shipping' | 'rating'
>;

export interface RankedProduct<T extends RankInput = SearchOffer> {
  key: string;
  relevance: number;
  offers: T[];
  alternatives: T[];
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
export function compareOffers(a: RankInput, b: RankInput): number {
  const extra = (o: RankInput): number | null =>
    o.shipping === null ? null : o.shipping.type === 'free' ? 0 : o.shipping.cost_cents;
  const ea = extra(a);
  const eb = extra(b);
  const ta = a.price_cents + (ea ?? 0);
  const tb = b.price_cents + (eb ?? 0);
  if (ta !== tb) return ta - tb;
  if ((ea === null) !== (eb === null)) return ea === null ? 1 : -1;
  return cmp(a.store_id, b.store_id) || cmp(a.sku, b.sku) || cmp(a.id, b.id);
}

function bestRating(...lists: readonly (readonly RankInput[])[]): [number, number] {
  let best: [number, number] = [-1, -1];
  for (const offers of lists)
    for (const o of offers) {
      if (!o.rating) continue;
      if (o.rating.average > best[0] || (o.rating.average === best[0] && o.rating.count > best[1]))
        best = [o.rating.average, o.rating.count];
    }
  return best;
}

function lowestPrice(list: readonly RankInput[]): number {
  let lowest = Infinity;
  for (const o of list) if (o.price_cents < lowest) lowest = o.price_cents;
  return lowest;
}

/**
 * The products of one answer, ordered, from the searchable offers it found (each offer matching the words, or
 * sharing a gtin with one that does). Rule 5 and the condition rule are applied per product; a product whose every
 * offer rule 5 leaves out is not listed.
 *
 * Runs for every search over a few hundred offers, so it builds no key per offer and folds each distinct title once,
 * and stops reading titles once a product's relevance is the most it can be (every word): same answers, less CPU.
 */
export function rankProducts<T extends RankInput>(
  words: readonly string[],
  found: readonly T[],
  minPrefix: number,
): RankedProduct<T>[] {
  const groups: { key: string; list: T[] }[] = [];
  const byGtin = new Map<string, T[]>();
  for (const o of found) {
    if (o.gtin === null) {
      groups.push({ key: `offer:${o.id}`, list: [o] });
      continue;
    }
    const list = byGtin.get(o.gtin);
    if (list) list.push(o);
    else byGtin.set(o.gtin, [o]);
  }
  for (const [gtin, list] of byGtin) groups.push({ key: `gtin:${gtin}`, list });
  const relevanceOfTitle = new Map<string, number>();
  const relevanceOf = (title: string): number => {
    let r = relevanceOfTitle.get(title);
    if (r === undefined) relevanceOfTitle.set(title, (r = titleRelevance(words, title, minPrefix)));
    return r;
  };
  const products: (RankedProduct<T> & { rating: [number, number]; price: number })[] = [];
  for (const { key, list } of groups) {
    const { offers, alternatives } = applyOfferRules(list.sort(compareOffers)); // `list` is this function's own
    if (offers.length + alternatives.length === 0) continue;
    let relevance = 0;
    for (const o of offers.concat(alternatives)) {
      if (relevance === words.length) break; // the most a title can hold
      relevance = Math.max(relevance, relevanceOf(o.title));
    }
    products.push({
      key,
      relevance,
      offers,
      alternatives,
      rating: bestRating(offers, alternatives),
      price: lowestPrice(offers.length > 0 ? offers : alternatives),
    });
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
