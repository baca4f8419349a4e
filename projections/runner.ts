/**
 * Runs projectors over the log: one catch-up-then-live subscription, events grouped into batches of whatever has
 * arrived (up to `maxBatch`), each batch applied in log order and committed in one unit of work together with every
 * projector's checkpoint. A crash between batches replays from the saved checkpoints; a projector skips events at or
 * below its own checkpoint, so nothing is applied twice.
 *
 * An event a projector cannot apply is parked for that projector (projections/parking.ts): the batch is split so
 * that the events before it are committed, the event is applied by every other projector, and its parked record is
 * committed with the checkpoint that passes it. The runner stops only when the read store itself keeps failing.
 *
 * Units stay bounded: an event that reaches many documents (a store's products) writes one page in its unit and
 * leaves a cursor; the following pages are units of their own, finished before the position is reported committed
 * (and at start, after a crash). See `Projector.continueWork`.
 */
import type { EventStore, RecordedEvent, Subscription } from '../shared-schema/ports/event-store.js';
import { categoryOf } from '../shared-schema/ports/event-store.js';
import type { ReadStore } from '../shared-schema/ports/read-store.js';
import type { Projector } from './projector.js';
import { CATEGORIES } from '../shared-schema/domain/streams.js';
import { PositionWaiters } from './position-waiters.js';
import { applyInUnits, finishWork, projectorCollections, type ParkedEvent } from './parking.js';

export interface RunnerOptions {
  maxBatch?: number;
  /** Called after each committed batch with the position reached. */
  onAdvanced?: (position: number) => void;
  /** Called with each batch once it is committed, before anyone waiting for its positions is told (caches). */
  onCommitted?: (batch: readonly RecordedEvent[]) => void;
  onError?: (err: unknown) => void;
  /** Called when an event is parked for a projector (log it); the record is committed with the unit that follows. */
  onParked?: (parked: ParkedEvent, err: unknown) => void;
  /** Called before a unit is tried again after the read store failed. */
  onStoreRetry?: (err: unknown, attempt: number) => void;
  /** Tries of a failing apply before isolating / parking (default 2); tries of a failing store (default 4). */
  applyAttempts?: number;
  storeAttempts?: number;
  retryPauseMs?: number;
  /** Timestamp of parked records (the injected clock); default the system time. */
  now?: () => Date;
}

const TICK = Symbol('tick');

/** What the rest of a service uses of its live projections (a runner here, or one on a thread of its own). */
export interface LiveProjections {
  /** Position up to which every projector has committed its work. */
  readonly position: number;
  /** Resolves true once `position` is committed, false after `timeoutMs`. */
  waitFor(position: number, timeoutMs: number): Promise<boolean>;
  stop(): Promise<void>;
}

export class ProjectionRunner implements LiveProjections {
  private readonly committed = new PositionWaiters();
  private subscription: Subscription | null = null;
  private loop: Promise<void> | null = null;
  private stopped = false;
  private readonly checkpoints = new Map<string, number>();

  constructor(
    private readonly events: EventStore,
    private readonly reads: ReadStore,
    readonly projectors: readonly Projector[],
    private readonly options: RunnerOptions = {},
  ) {}

  /** Position up to which every projector has committed its work. */
  get position(): number {
    return this.committed.position;
  }

  async start(): Promise<void> {
    await this.reads.ensureCollections(this.projectors.flatMap(projectorCollections));
    for (const p of this.projectors) this.checkpoints.set(p.name, await this.reads.getCheckpoint(p.name));
    // Work the last run left behind (a fan-out whose cursor committed before a crash) is finished first.
    const o = this.options;
    await finishWork(this.reads, this.projectors, {
      ...(o.storeAttempts !== undefined ? { storeAttempts: o.storeAttempts } : {}),
      ...(o.retryPauseMs !== undefined ? { retryPauseMs: o.retryPauseMs } : {}),
      ...(o.onStoreRetry ? { onStoreRetry: o.onStoreRetry } : {}),
      stopped: () => this.stopped,
    });
    this.committed.advance(Math.min(...this.checkpoints.values()));
    // Follow every category of ours, not only the projectors' ones, so that the committed position passes every
    // position a write answer can carry (read-your-writes waits on it).
    const categories = Object.values(CATEGORIES);
    this.subscription = this.events.subscribeToAll({ afterPosition: this.committed.position, categories });
    this.loop = this.consume(this.subscription).catch((err) => {
      if (!this.stopped) this.options.onError?.(err);
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.subscription?.close();
    await this.loop;
    this.committed.endAll();
  }

  /** Resolves true once `position` is committed, false after `timeoutMs`. */
  waitFor(position: number, timeoutMs: number): Promise<boolean> {
    return this.committed.wait(position, timeoutMs);
  }

  private async consume(subscription: Subscription): Promise<void> {
    const it = subscription[Symbol.asyncIterator]();
    const maxBatch = this.options.maxBatch ?? 500;
    let pending = it.next();
    for (;;) {
      const first = await pending;
      if (first.done) return;
      const batch: RecordedEvent[] = [first.value];
      pending = it.next();
      let ended = false;
      // The batch takes what arrives before the event loop's next check phase (the events already read arrive
      // through promise jobs, well before it).
      const tick = new Promise<typeof TICK>((r) => setImmediate(() => r(TICK)));
      while (batch.length < maxBatch) {
        const got = await Promise.race([pending, tick]);
        if (got === TICK) break;
        if (got.done) {
          ended = true;
          break;
        }
        batch.push(got.value);
        pending = it.next();
      }
      await this.applyBatch(batch);
      if (ended) return;
    }
  }

  private async applyBatch(batch: RecordedEvent[]): Promise<void> {
    const last = batch[batch.length - 1].position;
    const o = this.options;
    // Every projector asks about the same event in turn: its category is taken once.
    let seen: RecordedEvent | null = null;
    let category = '';
    await applyInUnits(batch, last, {
      store: this.reads,
      projectors: this.projectors,
      applies: (p, event) => {
        if (event !== seen) {
          seen = event;
          category = categoryOf(event.stream);
        }
        return event.position > (this.checkpoints.get(p.name) ?? 0) && p.categories.includes(category);
      },
      close: async (tx, through) => {
        for (const p of this.projectors)
          await tx.setCheckpoint(p.name, Math.max(through, this.checkpoints.get(p.name) ?? 0));
      },
      committed: (events, through) => this.unitCommitted(events, through),
      now: () => (o.now?.() ?? new Date()).toISOString(),
      stopped: () => this.stopped,
      ...(o.applyAttempts !== undefined ? { applyAttempts: o.applyAttempts } : {}),
      ...(o.storeAttempts !== undefined ? { storeAttempts: o.storeAttempts } : {}),
      ...(o.retryPauseMs !== undefined ? { retryPauseMs: o.retryPauseMs } : {}),
      ...(o.onParked ? { onParked: o.onParked } : {}),
      ...(o.onStoreRetry ? { onStoreRetry: o.onStoreRetry } : {}),
    });
  }

  private unitCommitted(events: readonly RecordedEvent[], through: number): void {
    for (const p of this.projectors) this.checkpoints.set(p.name, Math.max(through, this.checkpoints.get(p.name) ?? 0));
    const committed = Math.max(this.committed.position, through);
    this.options.onCommitted?.(events);
    this.options.onAdvanced?.(committed);
    this.committed.advance(committed);
  }
}
