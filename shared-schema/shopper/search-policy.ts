/**
 * The shopper search's policy (SHOPPER.md), one home for both ways a search reads the offers: the documents through
 * the read store (query-api/public/product-search.ts) and the offers the embedded search holds (infra/adapters/sqlite/
 * held-offers.ts). How many candidates a search reads and when it reads again, what the text index is asked, and how
 * the found offers become one page of the answer. Pure: no I/O.
 */
import { MAX_QUERY_WORDS, MAX_TEXT_LIMIT, MIN_PREFIX_LENGTH, textWords } from '../ports/text-search.js';
import type { OfferDoc } from './offer-facts.js';
import { rankProducts, type RankedProduct, type RankInput, type SearchOffer } from './ranking.js';
import { productView } from './search-view.js';

/**
 * Offers read from the text index per search (the bound on a search's cost, and so on how many products an answer
 * can page through): four pages of the largest `limit`. Why a bound and what it guarantees:
 * docs/adr/0044-search-candidate-bound.md.
 */
export const CANDIDATES = 200;
/**
 * The candidates of the one second read of a search whose first read was full but held fewer than CANDIDATES
 * searchable offers (the text index's limit, MAX_TEXT_LIMIT).
 */
export const RETRY_CANDIDATES = MAX_TEXT_LIMIT;

/**
 * Whether a search reads its matches again with room for RETRY_CANDIDATES, after a first read of CANDIDATES that
 * found `offers` searchable among `read` offers. A first read of fewer than CANDIDATES offers read every match; one
 * that found CANDIDATES searchable ones has enough. Otherwise offers that are not searchable (pending, unavailable,
 * of a suspended store…) may hide searchable ones behind them: one bounded second read.
 */
export function readsAgain(first: { offers: readonly unknown[]; read: number }): boolean {
  return first.read >= CANDIDATES && first.offers.length < CANDIDATES;
}

/**
 * What the text index is asked for the query's words, and the test its matches must then pass. The index takes at
 * most MAX_QUERY_WORDS words in one query (the bound on its cost), but SHOPPER.md bounds only `q`'s characters: a
 * query of more distinct words asks the index for the MAX_QUERY_WORDS longest of them, whole, and keeps the matches
 * whose text holds every word (the last as a prefix from MIN_PREFIX_LENGTH characters, as the index would).
 * Repeated words are asked once (every word must match: asking twice changes nothing).
 */
export function textQueryOf(words: readonly string[]): {
  words: string[];
  prefixLast: boolean;
  holdsAll?: (doc: OfferDoc) => boolean;
} {
  const last = words[words.length - 1];
  const whole = [...new Set(words.slice(0, -1))];
  if (whole.length < MAX_QUERY_WORDS) return { words: [...whole, last], prefixLast: true };
  const asked = [...whole].sort((a, b) => b.length - a.length).slice(0, MAX_QUERY_WORDS);
  const lastMatches =
    last.length >= MIN_PREFIX_LENGTH
      ? (held: Set<string>) => [...held].some((w) => w.startsWith(last))
      : (held: Set<string>) => held.has(last);
  return {
    words: asked,
    prefixLast: false,
    holdsAll: (doc) => {
      const held = new Set(textWords(`${doc.text_title} ${doc.text_other}`));
      return whole.every((w) => held.has(w)) && lastMatches(held);
    },
  };
}

/** One page of the ranked products for the words, and how many products the whole answer has. */
export type RankedPage<T extends RankInput = SearchOffer> = { total: number; page: RankedProduct<T>[] };

/** The found offers ranked into products (shared-schema/shopper/ranking.ts), and the page from `offset`. */
export function rankedPageOf<T extends RankInput>(
  words: readonly string[],
  found: readonly T[],
  offset: number,
  limit: number,
): RankedPage<T> {
  const ranked = rankProducts(words, found, MIN_PREFIX_LENGTH);
  return { total: ranked.length, page: ranked.slice(offset, offset + limit) };
}

/**
 * One page of a search's answer, ready to send: `results` is its `Product[]` (SHOPPER.md) as JSON text, `count` how
 * many products it holds, `total` how many the whole answer has. Made where the search ran, as one string that the door
 * sends as it is (docs/adr/0053-search-answer-as-json.md).
 */
export type ResultsPage = { total: number; count: number; results: string };

/** The page as it is sent: its products' views, linked from the service's public address. */
export function resultsPageOf({ total, page }: RankedPage, publicBase: string): ResultsPage {
  return { total, count: page.length, results: JSON.stringify(page.map((p) => productView(p, publicBase))) };
}

/**
 * How a search reads and ranks: on the documents (query-api/public/product-search.ts `searchHere`), or on the offers
 * it holds (infra/adapters/sqlite/held-search.ts).
 */
export type ProductSearch = (
  words: readonly string[],
  now: Date,
  offset: number,
  limit: number,
  publicBase: string,
) => Promise<ResultsPage>;
