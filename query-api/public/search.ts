/**
 * The search of the shopper side (SHOPPER.md), behind `GET /api/search?q=&limit=&cursor=` (JSON) and the results
 * page `/busca` (pages.ts): public, no key, outside `/v1`, served by the query door in front of its authentication
 * (routes.ts).
 *
 * The answer: the offers whose text holds every word of `q` (text index of the offers model, at most
 * CANDIDATES of them — RETRY_CANDIDATES when those hold too few searchable ones —, those whose title holds every
 * word first; plus the offers sharing a gtin with those), kept
 * while searchable at the service clock's now, grouped, filtered by rule 5 and the condition rule, ranked
 * (shared-schema/shopper/), then paged by a signed cursor. Why a bound of CANDIDATES and what it guarantees:
 * docs/adr/0044-search-candidate-bound.md.
 * A rate brake per client address: 120 searches per minute by the service clock (shared-schema/http/minute-brake.ts).
 *
 * In the embedded default the search threads answer the same from the offers they hold (infra/sqlite/
 * held-offers.ts: same candidates, rules and order, on rowids; what is read here, on documents, is its reference).
 */
import type { DoorContext } from '../../shared-schema/http/context.js';
import { fieldError, invalid, invalidField, ProblemError } from '../../shared-schema/problems.js';
import type { Doc, ReadStore } from '../../shared-schema/ports/read-store.js';
import {
  isTextSearchable,
  MAX_QUERY_WORDS,
  MAX_TEXT_LIMIT,
  MIN_PREFIX_LENGTH,
  TextSearchUnavailable,
  textWords,
} from '../../shared-schema/ports/text-search.js';
import type { FieldError } from '../../shared-schema/problems.js';
import { decodeCursor, encodeCursor, type CursorScope } from '../../shared-schema/http/pagination.js';
import { isSearchable, type OfferDoc } from '../../shared-schema/shopper/offer-facts.js';
import { rankProducts, type RankedProduct, type SearchOffer } from '../../shared-schema/shopper/ranking.js';
import {
  productView,
  searchOfferOf,
  type ProductView,
  type SearchPage,
} from '../../shared-schema/shopper/search-view.js';
import { OFFERS } from '../../shared-schema/read-models/offers.js';
import { publicBrake } from '../../shared-schema/http/minute-brake.js';
import { readStoreFacts, type StoreFacts } from './store-facts.js';
import { STALE_AFTER_MS } from '../../shared-schema/product-status.js';
import type { QueryDeps } from '../app.js';

export const SEARCH_PATH = '/api/search';
export const MAX_Q_LENGTH = 200;
export const DEFAULT_SEARCH_LIMIT = 20;
export const MAX_SEARCH_LIMIT = 50;
/**
 * Offers read from the text index per search (the bound on a search's cost, and so on how many products an answer
 * can page through): four pages of the largest `limit`.
 */
export const CANDIDATES = 200;
/**
 * The candidates of the one second read of a search whose first read was full but held fewer than CANDIDATES
 * searchable offers (the text index's limit, MAX_TEXT_LIMIT).
 */
export const RETRY_CANDIDATES = MAX_TEXT_LIMIT;

export type SearchParams = { q: string; words: string[]; limit: number; offset: number };

function one(ctx: DoorContext, name: string, errors: FieldError[]): string | undefined {
  const v = ctx.query[name];
  if (Array.isArray(v)) {
    errors.push(fieldError(name, 'invalid', `Send \`${name}\` once.`));
    return undefined;
  }
  return v;
}

function cursorScope(words: readonly string[]): CursorScope {
  return { tenant: { env: 'live', partnerId: 'public' }, list: 'shopper-search', filters: { q: words.join(' ') } };
}

/** The search's parameters, or a 422 listing every bad one. */
export function parseSearch(ctx: DoorContext, deps: QueryDeps): SearchParams {
  const errors: FieldError[] = [];
  for (const k of Object.keys(ctx.query)) {
    if (k !== 'q' && k !== 'limit' && k !== 'cursor')
      errors.push(fieldError(k, 'unknown_field', `\`${k}\` is not a parameter of this search.`));
  }
  const rawQ = one(ctx, 'q', errors);
  const q = rawQ?.trim() ?? '';
  let words: string[] = [];
  if (rawQ === undefined) errors.push(fieldError('q', 'required', 'Send `q`, the words to search for.'));
  else if (q.length === 0) errors.push(fieldError('q', 'invalid', '`q` is empty.'));
  // Characters are code points (as `maxLength` counts them in /v1), not UTF-16 units: an emoji is one.
  else if ([...q].length > MAX_Q_LENGTH)
    errors.push(fieldError('q', 'too_long', `\`q\` takes at most ${MAX_Q_LENGTH} characters.`));
  else words = textWords(q);
  const rawLimit = one(ctx, 'limit', errors);
  let limit = DEFAULT_SEARCH_LIMIT;
  if (rawLimit !== undefined) {
    limit = /^[0-9]{1,3}$/.test(rawLimit) ? Number(rawLimit) : NaN;
    if (!(limit >= 1 && limit <= MAX_SEARCH_LIMIT))
      errors.push(fieldError('limit', 'out_of_range', `\`limit\` is an integer from 1 to ${MAX_SEARCH_LIMIT}.`));
  }
  const cursor = one(ctx, 'cursor', errors);
  if (errors.length > 0) throw invalid(errors);
  let offset = 0;
  if (cursor !== undefined)
    offset = decodeCursor(deps.cursorSecret, cursorScope(words), cursor, ['number'])[0] as number;
  if (!Number.isSafeInteger(offset) || offset < 0)
    throw invalidField('cursor', 'invalid', 'The cursor is not valid for this list.');
  return { q, words, limit, offset };
}

/** The per-address brake of the public searches (`/api/search` and `/busca` count together). */
export function brake(ctx: DoorContext, deps: QueryDeps): Promise<void> {
  return publicBrake(deps, ctx.ip, 'search');
}

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
  // Fewer documents than CANDIDATES (matches and their gtins' offers together): every match was read.
  if (first.read < CANDIDATES || first.offers.length >= CANDIDATES) return first.offers;
  return (await searchableOffers(reads, words, now, RETRY_CANDIDATES, storeFacts)).offers;
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
    where: { last_write_at: { gte: new Date(now.getTime() - STALE_AFTER_MS).toISOString() } },
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
export type RankedPage = { total: number; page: RankedProduct[] };
/**
 * One page of a search's answer, ready to send: `results` is its `Product[]` (SHOPPER.md) as JSON text, `count` how
 * many products it holds, `total` how many the whole answer has. Made where the search ran: a search thread sends the
 * event loop one string, not a tree of objects that the loop would copy, turn into views and serialize again
 * (docs/adr/0053-search-answer-as-json.md).
 */
export type ResultsPage = { total: number; count: number; results: string };
/** Where the search's reads and ranking run: `resultsPage` in this process, or a thread of its own (QueryDeps). */
export type ProductSearch = (
  words: readonly string[],
  now: Date,
  offset: number,
  limit: number,
  publicBase: string,
) => Promise<ResultsPage>;

export async function rankedPage(
  reads: ReadStore,
  words: readonly string[],
  now: Date,
  offset: number,
  limit: number,
  storeFacts: StoreFacts = readStoreFacts,
): Promise<RankedPage> {
  const ranked = rankProducts(words, await findOffers(reads, words, now, storeFacts), MIN_PREFIX_LENGTH);
  return { total: ranked.length, page: ranked.slice(offset, offset + limit) };
}

export async function resultsPage(
  reads: ReadStore,
  words: readonly string[],
  now: Date,
  offset: number,
  limit: number,
  publicBase: string,
  storeFacts: StoreFacts = readStoreFacts,
): Promise<ResultsPage> {
  const { total, page } = await rankedPage(reads, words, now, offset, limit, storeFacts);
  return { total, count: page.length, results: JSON.stringify(page.map((p) => productView(p, publicBase))) };
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

/** The page of the answer the params ask for (its products as JSON text) and the cursor of the next one. */
async function searchResults(
  deps: QueryDeps,
  params: SearchParams,
): Promise<{ results: string; next_cursor: string | null }> {
  const productSearch = deps.productSearch ?? searchHere(deps.reads);
  try {
    const { total, count, results } =
      params.words.length === 0
        ? { total: 0, count: 0, results: '[]' }
        : await productSearch(params.words, deps.clock.now(), params.offset, params.limit, deps.publicBaseUrl);
    const end = params.offset + count;
    return {
      results,
      next_cursor: end < total ? encodeCursor(deps.cursorSecret, cursorScope(params.words), [end]) : null,
    };
  } catch (err) {
    // A deployment whose read store has no text index.
    if (err instanceof TextSearchUnavailable)
      throw new ProblemError(503, [], 'Search is not available on this deployment.');
    throw err;
  }
}

/** The SearchPage of the params (for the results page). */
export async function searchOrUnavailable(deps: QueryDeps, params: SearchParams): Promise<SearchPage> {
  const { results, next_cursor } = await searchResults(deps, params);
  return { query: params.q, results: JSON.parse(results) as ProductView[], next_cursor };
}

/** `GET /api/search`: the JSON SearchPage, its products sent as they came from the search (compact JSON). */
export async function searchApi(ctx: DoorContext, deps: QueryDeps): Promise<void> {
  await brake(ctx, deps);
  const params = parseSearch(ctx, deps);
  const { results, next_cursor } = await searchResults(deps, params);
  ctx.type = 'application/json';
  ctx.body = `{"query":${JSON.stringify(params.q)},"results":${results},"next_cursor":${JSON.stringify(next_cursor)}}`;
  ctx.set('Cache-Control', 'no-store');
}
