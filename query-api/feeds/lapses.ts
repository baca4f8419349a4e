/**
 * Before the full feed is read at `now`, every 48 h lapse due by `now` is in the log and projected (FEEDS.md: the
 * full feed read at X plus the changes after X up to Y equals the full feed read at Y, and a feed holds the offers
 * searchable at the moment it is read). The clock makes an offer stale with no event; the freshness reactor records
 * that as `ProductFreshnessLapsed` on its scan, which may come later. A feed judged by the clock alone would already
 * leave the offer out while its `delete` is not among the changes before its `Feed-Cursor`; so the read first has
 * the due lapses recorded (the reactor's own decision, through the port the wiring gives: `recordDueLapses`), then
 * waits until the projections hold them, and only then takes its cursor and reads.
 *
 * The common case costs one indexed read: no product is past its 48 h with its lapse unrecorded. Past the bound (the
 * recording and the wait together, `logWaitTimeoutMs`): 503 with `Retry-After`, never a snapshot the changes cannot
 * reach.
 */
import { ProblemError } from '../../shared-schema/contract/problems.js';
import { lapseDueWhere, PRODUCTS, type ProductDoc } from '../../shared-schema/read-models/products.js';
import type { QueryDeps } from '../app.js';

/** 503 with `Retry-After`: the lapses recorded for this read were not projected within the bound. */
export class FeedBehind extends ProblemError {
  constructor() {
    super(503, [], 'Offers that went stale are still being applied to the feed; try again in a second.', {
      'Retry-After': '1',
    });
  }
}

/**
 * The latest `lapse_due_at` among the products due by `now` (null: none): one read of the index the freshness
 * reactor scans. Every offer of the feed that went stale by the clock alone is among them (its product is accepted,
 * its 48 h passed, its lapse not recorded); so are products no feed holds (test ones, a store's not approved), whose
 * lapse the reactor records all the same. As a part of the full feed's ETag it moves whenever the clock alone moves
 * an offer out of the feed: that offer's due instant is later than any due at the earlier read.
 */
export async function newestDueLapse(deps: Pick<QueryDeps, 'reads'>, now: Date): Promise<string | null> {
  const [newest] = await deps.reads.find<ProductDoc>(PRODUCTS, {
    where: lapseDueWhere(now.toISOString()),
    orderBy: [{ field: 'lapse_due_at', dir: 'desc' }],
    limit: 1,
    fields: ['lapse_due_at'],
  });
  return newest?.lapse_due_at ?? null;
}

/**
 * Resolves once every lapse due by `now` is recorded and projected (at once when none is due, or when the wiring
 * gives no recorder), with `newestDueLapse` as it then stands: the full feed's ETag holds it. The wait is for the
 * log's head after the recording, not only for the lapses this call appended: the freshness reactor (or another
 * reader) may have recorded some of them a moment before.
 */
export async function untilLapsesRecorded(deps: QueryDeps, now: Date): Promise<string | null> {
  const due = await newestDueLapse(deps, now);
  if (!deps.recordDueLapses || due === null) return due;
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
  if (!(await deps.waitForPosition(head, Math.max(1, bound - (Date.now() - started))))) throw new FeedBehind();
  return newestDueLapse(deps, now);
}
