/**
 * Before the full feed is read at `now`, every 48 h lapse due by `now` is in the log and projected (FEEDS.md: the
 * full feed read at X plus the changes after X up to Y equals the full feed read at Y, and a feed holds the offers
 * searchable at the moment it is read). The clock makes an offer stale with no event; the freshness reactor records
 * that as `ProductFreshnessLapsed` on its scan, which may come later. A feed judged by the clock alone would already
 * leave the offer out while its `delete` is not among the changes before its `Feed-Cursor`; so the read first has
 * the due lapses recorded (the reactor's own decision, through the port the wiring gives: `recordDueLapses`), then
 * waits until the projections hold them, and only then takes its cursor and reads.
 *
 * The common case costs one indexed read: no offer in the feed is past its 48 h. Past the bound (the recording and
 * the wait together, `logWaitTimeoutMs`): 503 with `Retry-After`, never a snapshot the changes cannot reach.
 */
import { ProblemError } from '../../shared-schema/contract/problems.js';
import { staleCutoff } from '../../shared-schema/domain/product-status.js';
import type { Doc, Where } from '../../shared-schema/ports/read-store.js';
import { FEED_OFFERS, type FeedOfferDoc } from '../../shared-schema/read-models/feed.js';
import type { QueryDeps } from '../app.js';

/** 503 with `Retry-After`: the lapses recorded for this read were not projected within the bound. */
export class FeedBehind extends ProblemError {
  constructor() {
    super(503, [], 'Offers that went stale are still being applied to the feed; try again in a second.', {
      'Retry-After': '1',
    });
  }
}

/** The offers the feed model still holds whose last write is more than 48 h before `now` (stale: out of the feed). */
export const lapsedWhere = (now: Date): Where => ({ in_feed: true, last_write_at: { lt: staleCutoff(now) } });

/** Whether an offer of the feed is more than 48 h past its last write at `now`. */
export async function lapseDue(deps: Pick<QueryDeps, 'reads'>, now: Date): Promise<boolean> {
  const due = await deps.reads.find<FeedOfferDoc & Doc>(FEED_OFFERS, { where: lapsedWhere(now), limit: 1 });
  return due.length > 0;
}

/**
 * Resolves once every lapse due by `now` is recorded and projected (at once when none is due, or when the wiring
 * gives no recorder). The wait is for the log's head after the recording, not only for the lapses this call
 * appended: the freshness reactor (or another reader) may have recorded some of them a moment before.
 */
export async function untilLapsesRecorded(deps: QueryDeps, now: Date): Promise<void> {
  if (!deps.recordDueLapses || !(await lapseDue(deps, now))) return;
  // One bound for the recording and the wait: many lapses due at once (a large upload 48 h ago, a restart after
  // downtime) take a decision each; the recording goes on past the bound, and the retry finds less to do.
  const bound = deps.logWaitTimeoutMs ?? 5000;
  const started = Date.now();
  let timer: NodeJS.Timeout | undefined;
  const recorded = await Promise.race([
    deps.recordDueLapses(now),
    new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), bound);
      timer.unref();
    }),
  ]).finally(() => clearTimeout(timer));
  if (recorded === null) throw new FeedBehind();
  const head = Math.max(recorded, await deps.logHead());
  if (await deps.waitForPosition(head, Math.max(1, bound - (Date.now() - started)))) return;
  throw new FeedBehind();
}
