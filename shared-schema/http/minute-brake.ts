/**
 * The one rule of every rate brake: fixed one-minute windows of the injected clock, counted through messaging so
 * that every process of a door (and every replica) shares them. Past the limit: 429 with `Retry-After`, the whole
 * seconds until the window ends, at least 1. The key's brake (600 writes / 1200 reads per key) and the public
 * brakes per client address (searches, recorded clicks) differ only in what they count and how many.
 */
import type { Clock } from '../ports/clock.js';
import type { Messaging } from '../ports/messaging.js';
import { ProblemError } from '../contract/problems.js';

const WINDOW_MS = 60_000;

export interface BrakeDeps {
  messaging: Messaging;
  clock: Clock;
}

/**
 * Counts one more use of `counter` in the current minute; past `limit`, throws a 429 Problem saying `detail`.
 * A refused use is counted too, so a client that keeps trying stays refused until the minute ends.
 */
export async function countInMinute(deps: BrakeDeps, counter: string, limit: number, detail: string): Promise<void> {
  const now = deps.clock.now().getTime();
  const window = Math.floor(now / WINDOW_MS);
  const count = await deps.messaging.increment(`${counter}:${window}`, 1, WINDOW_MS * 2);
  if (count <= limit) return;
  const retryAfter = Math.max(1, Math.ceil(((window + 1) * WINDOW_MS - now) / 1000));
  throw new ProblemError(429, [], detail, { 'Retry-After': String(retryAfter) });
}

/** Per client address and minute, on the public routes outside `/v1` (SHOPPER.md; the portal's sign-ins, PORTAL.md). */
export const PUBLIC_LIMITS = {
  /** `/api/search` and `/busca` together. */
  search: 120,
  /** Clicks recorded by `GET /r/…` (HEAD records nothing and is not counted). */
  click: 60,
  /** Sign-ins to the partner portal (`POST /portal/entrar`), whatever their outcome (PORTAL.md). */
  signin: 10,
} as const;

export type PublicUse = keyof typeof PUBLIC_LIMITS;

const PUBLIC_NOUNS: Record<PublicUse, string> = { search: 'searches', click: 'recorded clicks', signin: 'sign-ins' };

/** The public brake of `use` for one client address: throws a 429 Problem past PUBLIC_LIMITS[use] a minute. */
export function publicBrake(deps: BrakeDeps, address: string, use: PublicUse): Promise<void> {
  const limit = PUBLIC_LIMITS[use];
  return countInMinute(
    deps,
    `pubrate:${address}:${use}`,
    limit,
    `Rate brake: at most ${limit} ${PUBLIC_NOUNS[use]} per minute per address.`,
  );
}
