/**
 * The shopper search on the offers' documents, through the read store's text index (the reference every other way
 * of searching reproduces: infra/adapters/sqlite/held-offers.ts answers the same from the offers the embedded search holds), and
 * the bound on searches in flight. The policy both follow (candidates, text query, ranking, page) is
 * shared-schema/shopper/search-policy.ts; the HTTP door of the search is search.ts.
 *
 * The answer: the offers whose text holds every word (text index of the offers model, at most CANDIDATES of them —
 * RETRY_CANDIDATES when those hold too few searchable ones —, those whose title holds every word first; plus the
 * offers sharing a gtin with those), kept while searchable at `now`, grouped, filtered by rule 5 and the condition
 * rule, ranked (shared-schema/shopper/).
 */
import { ProblemError } from '../../shared-schema/contract/problems.js';
import type { Doc, ReadStore } from '../../shared-schema/ports/read-store.js';
import { isTextSearchable, TextSearchUnavailable } from '../../shared-schema/ports/text-search.js';
import { isSearchable, type OfferDoc } from '../../shared-schema/shopper/offer-facts.js';
import type { SearchOffer } from '../../shared-schema/shopper/ranking.js';
import { searchOfferOf } from '../../shared-schema/shopper/search-view.js';
import {
  CANDIDATES,
  rankedPageOf,
  readsAgain,
  RETRY_CANDIDATES,
  resultsPageOf,
  textQueryOf,
  type ProductSearch,
  type RankedPage,
  type ResultsPage,
} from '../../shared-schema/shopper/search-policy.js';
import { OFFERS } from '../../shared-schema/read-models/offers.js';
import { staleCutoff } from '../../shared-schema/domain/product-status.js';
import { readStoreFacts, type StoreFacts } from './store-facts.js';

/**
 * The searchable offers for the words: text matches, then the other offers of their gtins.
 *
 * The matches are read with the offers' own 48-hour rule as a condition of the text query (`last_write_at` at most
 * 48 h before `now`), so stale offers, which pile up as partners stop sending, never take a candidate's place; the
 * exact judgment (`isSearchable`, to the millisecond, with the store's facts) is made here on what comes back. When
 * a full set of candidates still holds fewer than CANDIDATES searchable ones (offers pending, unavailable, of a
 * suspended store…), the matches are read once more with room for RETRY_CANDIDATES: a bounded second read, so that
 * such offers cannot hide the searchable ones behind them (docs/adr/0044-search-candidate-bound.md).
 */
export async function findOffers(
  reads: ReadStore,
  words: readonly string[],
  now: Date,
  storeFacts: StoreFacts = readStoreFacts,
): Promise<SearchOffer[]> {
  const first = await searchableOffers(reads, words, now, CANDIDATES, storeFacts);
  if (!readsAgain(first)) return first.offers;
  return (await searchableOffers(reads, words, now, RETRY_CANDIDATES, storeFacts)).offers;
}

/** The offers of up to `limit` text matches and of their gtins that are searchable at `now`; how many were read. */
async function searchableOffers(
  reads: ReadStore,
  words: readonly string[],
  now: Date,
  limit: number,
  storeFacts: StoreFacts,
): Promise<{ offers: SearchOffer[]; read: number }> {
  if (!isTextSearchable(reads)) throw new TextSearchUnavailable();
  const asked = textQueryOf(words);
  // Every offer of the products found, each once (rule 5 compares an offer with all the others of its product).
  const found = new Map<string, OfferDoc>();
  for (const d of await reads.textSearch<OfferDoc & Doc>(OFFERS, {
    words: asked.words,
    prefixLast: asked.prefixLast,
    limit,
    sharing: 'gtin',
    where: { last_write_at: { gte: staleCutoff(now) } },
  }))
    found.set(d._id, d);
  const read = found.size;
  if (asked.holdsAll) keepHoldingAll(found, asked.holdsAll);
  // The stores' facts in one read (or from a copy kept up to date), not one read per store.
  const stores = await storeFacts(reads, [...new Set([...found.values()].map((d) => d.store_key))]);
  const offers: SearchOffer[] = [];
  for (const doc of found.values()) {
    const store = stores.get(doc.store_key);
    if (store && isSearchable(doc, store, now)) offers.push(searchOfferOf(doc, store));
  }
  return { offers, read };
}

/**
 * Keeps the offers that hold every word, and the offers of their gtins (the index was asked fewer words: a match of
 * those may not hold them all, and the offers its gtin brought are kept only for a gtin of one that does).
 */
function keepHoldingAll(found: Map<string, OfferDoc>, holdsAll: (doc: OfferDoc) => boolean): void {
  const holding = new Set<string>();
  const gtins = new Set<string>();
  for (const doc of found.values()) {
    if (!holdsAll(doc)) continue;
    holding.add(doc._id);
    if (doc.gtin !== null) gtins.add(doc.gtin);
  }
  for (const [id, doc] of found) if (!holding.has(id) && (doc.gtin === null || !gtins.has(doc.gtin))) found.delete(id);
}

/** One page of the ranked products for the words, judged at `now`, and how many products the answer has. */
export async function rankedPage(
  reads: ReadStore,
  words: readonly string[],
  now: Date,
  offset: number,
  limit: number,
  storeFacts: StoreFacts = readStoreFacts,
): Promise<RankedPage> {
  return rankedPageOf(words, await findOffers(reads, words, now, storeFacts), offset, limit);
}

/** One page of the answer, ready to send (the documents path of a ProductSearch). */
export async function resultsPage(
  reads: ReadStore,
  words: readonly string[],
  now: Date,
  offset: number,
  limit: number,
  publicBase: string,
  storeFacts: StoreFacts = readStoreFacts,
): Promise<ResultsPage> {
  return resultsPageOf(await rankedPage(reads, words, now, offset, limit, storeFacts), publicBase);
}

/**
 * Searches in flight per query door (config SEARCHES_IN_FLIGHT): one more is refused at once with 429 and
 * `Retry-After: 1`, where it would wait behind the others. A burst of searches from many addresses (each under its
 * brake) then gets quick refusals instead of answers that take seconds, and no more searches than the bound wait
 * with their requests held (docs/adr/0052-searches-in-flight.md).
 */
export class SearchesBusy extends ProblemError {
  constructor() {
    super(429, [], 'The service is answering as many searches as it takes at once; try again in a second.', {
      'Retry-After': '1',
    });
  }
}

/** `search`, refusing (SearchesBusy) a search that would be one more than `max` in flight. */
export function limitInFlight(search: ProductSearch, max: number): ProductSearch {
  let inFlight = 0;
  return async (...asked) => {
    if (inFlight >= max) throw new SearchesBusy();
    inFlight++;
    try {
      return await search(...asked);
    } finally {
      inFlight--;
    }
  };
}

/** The search of a door whose deps name none: its reads and ranking here, from `reads`. */
export const searchHere =
  (reads: ReadStore): ProductSearch =>
  (...asked) =>
    resultsPage(reads, ...asked);
