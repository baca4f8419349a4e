/**
 * Glue between the separate processes, all through the messaging port (NATS in the distributed topology):
 *
 * - `appended`: a command-api process publishes it after each commit to the SQLite event store; the projections
 *   process wakes its subscription on it (`notifyAppended`) instead of waiting for the next poll (50 ms). The
 *   EventStoreDB adapter pushes new events to subscribers by itself, so neither side does anything there.
 * - `projected`: the projections process publishes the position it committed after each batch; `PositionWatcher`
 *   (in the door processes: read-your-writes) resolves waits on it, and falls back to
 *   polling the projectors' checkpoints in the read store, so a lost message only costs one poll interval.
 *
 * `appended` and `projected` are hints: the truth is the event log and the read store's checkpoints.
 */
import type { EventStore } from '../../shared-schema/ports/event-store.js';
import type { Messaging, Unsubscribe } from '../../shared-schema/ports/messaging.js';
import type { ReadStore } from '../../shared-schema/ports/read-store.js';
import { SqliteEventStore } from '../adapters/sqlite/event-store.js';
import { PositionWaiters } from '../../projections/position-waiters.js';

export const SUBJECT_APPENDED = 'appended';
export const SUBJECT_PROJECTED = 'projected';

/** Command side: announce every local commit. Returns the function that stops announcing. */
export function announceAppends(events: EventStore, messaging: Messaging): () => void {
  if (!(events instanceof SqliteEventStore)) return () => undefined;
  return events.onAppended((position) => {
    messaging.publish(SUBJECT_APPENDED, String(position)).catch(() => undefined);
  });
}

/** Projections side: wake the subscriptions of `events` when another process announces a commit. */
export async function followAppends(events: EventStore, messaging: Messaging): Promise<Unsubscribe> {
  if (!(events instanceof SqliteEventStore)) return async () => undefined;
  return messaging.subscribe(SUBJECT_APPENDED, () => events.notifyAppended());
}

/** Projections side: announce the position every projector has committed. */
export function announceProjected(messaging: Messaging, position: number): void {
  messaging.publish(SUBJECT_PROJECTED, String(position)).catch(() => undefined);
}

export interface PositionWatcherOptions {
  reads: ReadStore;
  messaging: Messaging;
  /** The projectors whose checkpoints make up the committed position (the lowest of them). */
  checkpointNames: readonly string[];
  /** How often the checkpoints are read while someone waits. Default 25 ms. */
  pollIntervalMs?: number;
}

/**
 * The projections' committed position, seen from another process: `waitFor(position, timeoutMs)` has the
 * meaning of `ProjectionRunner.waitFor`.
 */
export class PositionWatcher {
  private readonly known = new PositionWaiters();
  private timer: NodeJS.Timeout | undefined;
  private polling = false;
  private unsubscribe: Unsubscribe | undefined;
  private closed = false;

  private constructor(private readonly options: PositionWatcherOptions) {}

  static async start(options: PositionWatcherOptions): Promise<PositionWatcher> {
    const watcher = new PositionWatcher(options);
    watcher.unsubscribe = await options.messaging.subscribe(SUBJECT_PROJECTED, (payload) => {
      const position = Number(payload);
      if (Number.isFinite(position)) watcher.known.advance(position);
    });
    watcher.known.advance(await watcher.readCheckpoints());
    return watcher;
  }

  /** Highest committed position seen so far. */
  get position(): number {
    return this.known.position;
  }

  waitFor(position: number, timeoutMs: number): Promise<boolean> {
    if (this.known.position >= position) return Promise.resolve(true);
    if (this.closed) return Promise.resolve(false);
    const waited = this.known.wait(position, timeoutMs);
    this.schedule();
    void this.poll(); // the message may have come before we subscribed to it, or been lost
    void waited.then(() => this.schedule()); // polls only while someone waits
    return waited;
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.known.endAll();
    await this.unsubscribe?.();
  }

  /** Polls only while someone waits. */
  private schedule(): void {
    if (this.known.pending > 0 && !this.timer && !this.closed) {
      this.timer = setInterval(() => void this.poll(), this.options.pollIntervalMs ?? 25);
      this.timer.unref();
    } else if (this.known.pending === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  private async poll(): Promise<void> {
    if (this.polling || this.closed) return;
    this.polling = true;
    try {
      this.known.advance(await this.readCheckpoints());
    } catch {
      /* the next tick tries again */
    } finally {
      this.polling = false;
    }
  }

  private async readCheckpoints(): Promise<number> {
    if (this.options.checkpointNames.length === 0) return Number.MAX_SAFE_INTEGER;
    const positions = await Promise.all(
      this.options.checkpointNames.map((name) => this.options.reads.getCheckpoint(name)),
    );
    return Math.min(...positions);
  }
}
