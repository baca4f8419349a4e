/**
 * The HTTP door of the shopper search (SHOPPER.md): `GET /api/search?q=&limit=&cursor=` (JSON) and what the results
 * page `/busca` (pages.ts) asks of it: public, no key, outside `/v1`, served by the query door in front of its
 * authentication (routes.ts). Here: the parameters (a 422 listing every bad one), a rate brake per client address
 * (120 searches per minute by the service clock, shared-schema/http/minute-brake.ts), the signed cursor, the answer's shape. The search itself is a
 * ProductSearch (QueryDeps.productSearch; product-search.ts on the documents by default), whose policy is
 * shared-schema/shopper/search-policy.ts.
 */
import type { DoorContext } from '../../shared-schema/http/context.js';
import { fieldError, invalid, invalidField, ProblemError } from '../../shared-schema/contract/problems.js';
import { TextSearchUnavailable, textWords } from '../../shared-schema/ports/text-search.js';
import { decodeCursor, encodeCursor, type CursorScope } from '../../shared-schema/http/pagination.js';
import type { ProductView, SearchPage } from '../../shared-schema/shopper/search-view.js';
import { searchHere } from './product-search.js';
import { publicQuery } from '../../shared-schema/http/parameters.js';
import { publicBrake } from '../../shared-schema/http/minute-brake.js';
import type { QueryDeps } from '../app.js';

export const MAX_Q_LENGTH = 200;
export const DEFAULT_SEARCH_LIMIT = 20;
export const MAX_SEARCH_LIMIT = 50;

export type SearchParams = { q: string; words: string[]; limit: number; offset: number };

function cursorScope(words: readonly string[]): CursorScope {
  return { tenant: { env: 'live', partnerId: 'public' }, list: 'shopper-search', filters: { q: words.join(' ') } };
}

/** The search's parameters, or a 422 listing every bad one. */
export function parseSearch(ctx: DoorContext, deps: QueryDeps): SearchParams {
  const { errors, one, limit: limitOf } = publicQuery(ctx.query, ['q', 'limit', 'cursor'], 'this search');
  const rawQ = one('q');
  const q = rawQ?.trim() ?? '';
  let words: string[] = [];
  if (rawQ === undefined) errors.push(fieldError('q', 'required', 'Send `q`, the words to search for.'));
  else if (q.length === 0) errors.push(fieldError('q', 'invalid', '`q` is empty.'));
  // Characters are code points (as `maxLength` counts them in /v1), not UTF-16 units: an emoji is one.
  else if ([...q].length > MAX_Q_LENGTH)
    errors.push(fieldError('q', 'too_long', `\`q\` takes at most ${MAX_Q_LENGTH} characters.`));
  else words = textWords(q);
  const limit = limitOf(DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT);
  const cursor = one('cursor');
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
