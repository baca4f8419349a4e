/**
 * The freshness reactor: records, by the injected clock, the moment an accepted product's last PUT/PATCH is 48 h
 * old (ProductFreshnessLapsed on the product's stream), so that "went stale" is a fact of the log that a feed walked
 * again finds with the same position. Nothing else changes: the state is still derived from the clock.
 *
 * It follows the clock, not the log: every `intervalMs` of real time, at start (lapses that came due while the
 * service was down), and at once when the operator moves a manual clock, it asks the product read model for accepted
 * products whose `lapse_due_at` is past, and decides on each stream (command-api/services/products.ts
 * `lapseFreshness`). The decision, not the read model, is the guard: the append carries the stream's revision, a
 * write that came meanwhile wins, and a lapse already recorded for the write is never recorded again.
 */
import type { Scalar } from '../../shared-schema/ports/read-store.js';
import { lapseDueWhere, PRODUCTS, type ProductDoc } from '../../shared-schema/read-models/products.js';
import { metadata, type CommandDeps } from '../services/context.js';
import { lapseFreshness } from '../services/products.js';
import { PeriodicScan } from './periodic-scan.js';

export const FRESHNESS_ACTOR = 'system:freshness';

export interface FreshnessOptions {
  /** Its `reads` finds the due products, its `clock` says what is due. */
  deps: CommandDeps;
  /** Real-time period between scans. */
  intervalMs: number;
  /** Products read per page of a scan. Default 500. */
  batch?: number;
  /** Streams decided on at once. Default 8. */
  concurrency?: number;
  /** A scan, or one product's decision (`sku`), failed: the next scan finds what is still due. */
  onError?: (err: unknown, sku?: string) => void;
  /**
   * The clock follows real time (not a manual one): after each scan, also wake at the next lapse due, when that
   * comes before the next periodic scan. Default false.
   */
  wakeAtDue?: boolean;
}

export class FreshnessReactor extends PeriodicScan<number> {
  private wake: NodeJS.Timeout | null = null;

  constructor(private readonly options: FreshnessOptions) {
    super(options.intervalMs, 0, (err) => options.onError?.(err));
  }

  override async stop(): Promise<void> {
    await super.stop();
    if (this.wake) clearTimeout(this.wake);
    this.wake = null;
  }

  /** Scans once now (what came due while the service was down), then every `intervalMs`. */
  override start(): void {
    void this.scan();
    super.start();
  }

  protected async scanOnce(): Promise<number> {
    const { deps } = this.options;
    const { reads, clock } = deps;
    const batch = this.options.batch ?? 500;
    const concurrency = Math.max(1, this.options.concurrency ?? 8);
    const now = clock.now().toISOString();
    let highest = 0;
    let after: Scalar[] | undefined;
    for (;;) {
      const rows = await reads.find<ProductDoc>(PRODUCTS, {
        where: lapseDueWhere(now),
        orderBy: [{ field: 'lapse_due_at' }],
        ...(after ? { after } : {}),
        limit: batch,
      });
      for (let i = 0; i < rows.length && !this.stopped; i += concurrency) {
        const positions = await Promise.all(
          rows.slice(i, i + concurrency).map((row) =>
            lapseFreshness(
              deps,
              { partnerId: row.partner_id, env: row.env },
              row.sku,
              row.store_id,
              metadata(clock, undefined, FRESHNESS_ACTOR),
            ).catch((err: unknown) => {
              this.options.onError?.(err, row.sku);
              return undefined;
            }),
          ),
        );
        for (const position of positions) highest = Math.max(highest, position ?? 0);
      }
      const last = rows[rows.length - 1];
      if (rows.length < batch || !last || this.stopped) {
        await this.wakeAtNextDue(now);
        return highest;
      }
      after = [last.lapse_due_at ?? null, last._id];
    }
  }

  /**
   * Between the instant a lapse is due and the scan recording it, the changes feed lacks its delete (the full feed
   * records what is due before it reads: query-api/feeds/lapses.ts); waking at the next due lapse keeps that window
   * to the timer's slack rather than a scan period. A lapse that becomes due earlier than planned (a product accepted
   * after this scan, with an older write) waits for the periodic scan, as before. Only with a clock that follows real
   * time: a manual one moves only by the operator, whose move scans at once. The next due is looked for from the
   * instant the scan judged at (`scannedAt`), not from a later reading: a lapse that came due while the scan ran was
   * not recorded by it, and is the next one (at once).
   */
  private async wakeAtNextDue(scannedAt: string): Promise<void> {
    if (!this.options.wakeAtDue || this.stopped) return;
    const { reads, clock } = this.options.deps;
    const [next] = await reads.find<ProductDoc>(PRODUCTS, {
      where: { base_state: 'accepted', lapse_due_at: { gte: scannedAt } },
      orderBy: [{ field: 'lapse_due_at' }],
      limit: 1,
    });
    if (this.wake) clearTimeout(this.wake);
    this.wake = null;
    if (!next?.lapse_due_at || this.stopped) return;
    // Stale only past 48 h: due 1 ms after `lapse_due_at`.
    const delay = Date.parse(next.lapse_due_at) + 1 - clock.now().getTime();
    if (delay >= this.options.intervalMs) return;
    this.wake = setTimeout(() => void this.scan(), Math.max(1, delay));
    this.wake.unref();
  }
}
