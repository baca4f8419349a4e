/**
 * The re-check scheduler: every `intervalMs` of real time (and at once when the operator moves a manual clock) it
 * asks the product read model, by the injected clock, for covers whose result has aged — rejected for 1 hour,
 * accepted (and not stale) for 7 days — and for products whose current cover has no result 10 minutes after the send
 * (work lost to a failure), and hands them to the pool. The job re-reads the stream before checking, so a result
 * the read model has not caught up with is never checked twice.
 *
 * The scan runs on the pool of the process directly, not through the work queue: it is itself the retry (a check
 * that failed is found again by the next scan). It keeps at most as many checks in the pool as the pool runs at once,
 * so that the checks the work queue delivers to the same pool never wait long for a slot (their ack wait runs).
 */
import type { Clock } from '../../shared-schema/ports/clock.js';
import type { ReadView, Where } from '../../shared-schema/ports/read-store.js';
import { STALE_AFTER_MS } from '../../shared-schema/domain/product-status.js';
import { PRODUCTS, type ProductDoc } from '../../shared-schema/read-models/products.js';
import { streams } from '../../shared-schema/domain/streams.js';
import { PeriodicScan } from './periodic-scan.js';
import { RECHECK_ACCEPTED_MS, RECHECK_REJECTED_MS, type CoverTrigger, type CoverWork } from './cover-work.js';

export const UNCHECKED_AFTER_MS = 10 * 60 * 1000;

export interface RecheckOptions {
  reads: ReadView;
  clock: Clock;
  work: CoverWork;
  /** Real-time period between scans. */
  intervalMs: number;
  /** Products taken per kind and scan. Default 500. */
  batch?: number;
  onError?: (err: unknown) => void;
}

export class CoverRecheckScheduler extends PeriodicScan<number> {
  constructor(private readonly options: RecheckOptions) {
    super(options.intervalMs, 0, options.onError);
  }

  /** Resolves, once the checks the scan started have run, with the highest log position they appended (0 when none). */
  protected async scanOnce(): Promise<number> {
    const now = this.options.clock.now().getTime();
    const before = (ms: number) => new Date(now - ms).toISOString();
    const due: [Where, CoverTrigger][] = [
      [{ base_state: 'rejected', cover_checked_at: { lte: before(RECHECK_REJECTED_MS) } }, { kind: 'due' }],
      [
        {
          base_state: 'accepted',
          cover_checked_at: { lte: before(RECHECK_ACCEPTED_MS) },
          last_write_at: { gte: before(STALE_AFTER_MS) },
        },
        { kind: 'due' },
      ],
      [
        { base_state: 'pending', cover_checked_at: null, last_write_at: { lte: before(UNCHECKED_AFTER_MS) } },
        { kind: 'unchecked' },
      ],
    ];
    const { work } = this.options;
    const running = new Set<Promise<void>>();
    let highest = 0;
    for (const [where, trigger] of due) {
      const rows = await this.options.reads.find<ProductDoc>(PRODUCTS, {
        where,
        orderBy: [{ field: 'cover_checked_at' }],
        limit: this.options.batch ?? 500,
      });
      for (const row of rows) {
        while (running.size >= work.slotCount) await Promise.race(running);
        const stream = streams.product({ partnerId: row.partner_id, env: row.env }, row.sku);
        if (work.busy(stream)) continue;
        const job = work.submit(stream, trigger).then((done) => {
          if (done.outcome === 'done') highest = Math.max(highest, done.position ?? 0);
        });
        running.add(job);
        // A failed job stays in the set: the next race or the final `all` throws it to the scan's caller.
        void job.then(
          () => running.delete(job),
          () => undefined,
        );
      }
    }
    await Promise.all(running);
    return highest;
  }
}
