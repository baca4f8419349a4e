/**
 * The retention of the channel feeds' changes (docs/adr/0103-feed-changes-retention.md): a change is kept
 * `retentionDays` by the injected clock. When the oldest change kept is older than that, the reactor records
 * `FeedChangesPruned {before}` on `feed-retention`, and the feed projector drops the changes judged before `before`
 * (a bounded number per event: the next scan asks again for the rest). It follows the clock like the freshness
 * reactor: every `intervalMs` of real time, at start, and at once when the operator moves a manual clock.
 */
import { FEED_RETENTION_STREAM, type FeedEvent } from '../../shared-schema/events/feed.js';
import { FEED_CHANGES } from '../../shared-schema/read-models/feed.js';
import { metadata, type CommandDeps } from '../services/context.js';
import { PeriodicScan } from './periodic-scan.js';

export const FEED_RETENTION_ACTOR = 'system:feed-retention';
export const DAY_MS = 86_400_000;

export interface FeedRetentionOptions {
  deps: Pick<CommandDeps, 'events' | 'reads' | 'clock'>;
  retentionDays: number;
  /** Real-time period between scans. */
  intervalMs: number;
  onError?: (err: unknown) => void;
}

export class FeedRetentionReactor extends PeriodicScan<number> {
  constructor(private readonly options: FeedRetentionOptions) {
    super(options.intervalMs, 0, (err) => options.onError?.(err));
  }

  override start(): void {
    void this.scan();
    super.start();
  }

  /** The position of the `FeedChangesPruned` recorded, or 0 when nothing was due. */
  protected async scanOnce(): Promise<number> {
    const { deps, retentionDays } = this.options;
    const before = new Date(deps.clock.now().getTime() - retentionDays * DAY_MS).toISOString();
    const [oldest] = await deps.reads.find<{ _id: string; at: string | null }>(FEED_CHANGES, {
      limit: 1,
      fields: ['at'],
    });
    // Nothing kept, or the oldest kept is within the retention: nothing to drop. A change without a time was
    // written before changes kept one: it is older than any that has one.
    if (!oldest || (oldest.at !== null && oldest.at >= before)) return 0;
    const event: FeedEvent = {
      type: 'FeedChangesPruned',
      data: { before, pruned_at: deps.clock.now().toISOString() },
    };
    const appended = await deps.events.appendToStream(FEED_RETENTION_STREAM, [
      { ...event, metadata: metadata(deps.clock, undefined, FEED_RETENTION_ACTOR) },
    ]);
    return appended.position;
  }
}
