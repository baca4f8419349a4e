/**
 * Query windows of `GET /clicks`, `GET /conversions` and `GET /reports/commission` (contract "Endpoints",
 * DECISIONS.md "Lists and windows"): UTC half-open [since, until), at most 31 days, default the last 30 days up to
 * the injected clock's now. Answers carry the normalized bounds (UTC ISO 8601 with milliseconds).
 *
 * Windowed lists bind their cursor to the window: a cursor carries the normalized since/until it was made for.
 * A following page may leave since/until out (the cursor's are used) or repeat them (in any offset: they are
 * compared normalized); sending another window with a cursor answers 422 `cursor` `invalid`, since the keyset
 * position of one window means nothing in another. The cursor is signed (pagination.ts), so its window is one this
 * deployment made.
 */
import { fieldError, invalid, invalidField } from '../contract/problems.js';
import type { Scalar } from '../ports/read-store.js';
import { decodeCursor, encodeCursor, type CursorScope, type CursorSecret, type CursorValue } from './pagination.js';

export const DAY_MS = 86_400_000;
export const MAX_WINDOW_MS = 31 * DAY_MS;
export const DEFAULT_WINDOW_MS = 30 * DAY_MS;

export interface Window {
  /** Inclusive, canonical UTC ISO with milliseconds. */
  since: string;
  /** Exclusive, canonical UTC ISO with milliseconds. */
  until: string;
}

const iso = (ms: number): string => new Date(ms).toISOString();

/**
 * The normalized window of a query (since/until already validated as date-times by the query schema).
 * Only `until`: the 30 days before it. Only `since`: up to now. 422 `window` when since ≥ until or the window is
 * longer than 31 days (exactly 31 days is accepted), on `since` when only `since` was sent, else on `until`.
 */
export function resolveWindow(query: { since?: unknown; until?: unknown }, now: Date): Window {
  const sinceGiven = typeof query.since === 'string' ? Date.parse(query.since) : undefined;
  const untilGiven = typeof query.until === 'string' ? Date.parse(query.until) : undefined;
  const until = untilGiven ?? now.getTime();
  const since = sinceGiven ?? until - DEFAULT_WINDOW_MS;
  if (Number.isNaN(since) || Number.isNaN(until)) {
    throw invalid([fieldError(Number.isNaN(since) ? 'since' : 'until', 'date_time', 'must be an ISO 8601 date-time')]);
  }
  // Name the bound the caller sent (until when both or neither): the other one is a default it never wrote.
  const field = untilGiven === undefined && sinceGiven !== undefined ? 'since' : 'until';
  const bounds = `since ${iso(since)}${sinceGiven === undefined ? ' (default: 30 days before until)' : ''}, until ${iso(until)}${untilGiven === undefined ? ' (default: now)' : ''}`;
  if (since >= until) throw invalidField(field, 'window', `since must be before until (${bounds}).`);
  if (until - since > MAX_WINDOW_MS)
    throw invalidField(field, 'window', `The window spans at most 31 days (${bounds}).`);
  return { since: iso(since), until: iso(until) };
}

/** A cursor of a windowed list: the sort values of the last row, bound to the window (in its values) and the scope. */
export function encodeWindowCursor(
  secret: CursorSecret,
  scope: CursorScope,
  window: Window,
  after: readonly Scalar[],
): string {
  return encodeCursor(secret, scope, [window.since, window.until, ...after]);
}

/**
 * The window and keyset position of a page. Without a cursor: the window from the query. With a cursor: the
 * cursor's window, which the query may repeat but not change. `after` is the type of each sort value the cursor
 * must hold after the window (the list's sort key, then `_id`).
 */
export function pageWindow(
  secret: CursorSecret,
  scope: CursorScope,
  query: { since?: unknown; until?: unknown; cursor?: unknown },
  now: Date,
  after: readonly CursorValue[],
): { window: Window; after?: Scalar[] } {
  if (typeof query.cursor !== 'string') return { window: resolveWindow(query, now) };
  const [since, until, ...position] = decodeCursor(secret, scope, query.cursor, ['string', 'string', ...after]);
  const window = { since: since as string, until: until as string }; // strings: decodeCursor checked the shape
  for (const bound of ['since', 'until'] as const) {
    const sent = query[bound];
    if (typeof sent === 'string' && Date.parse(sent) !== Date.parse(window[bound])) {
      throw invalidField(
        'cursor',
        'invalid',
        `The cursor belongs to the window ${window.since} – ${window.until}; keep since and until on following pages.`,
      );
    }
  }
  return { window, after: position };
}
