/**
 * The cover-check reactor: follows the product events of the log from its own checkpoint and, for every send of a
 * product (`ProductUpserted`, single or batch), puts one item on the cover-check work queue (cover-queue.ts); its
 * consumers run the check (the job decides from the stream whether one is owed: a new cover address, or the same
 * address sent again after a rejection).
 *
 * The checkpoint (saved in the read store as `reactor:cover`) passes a send only once its item is safe:
 * - with a durable queue (`messaging.durable`: NATS JetStream), once `enqueue` resolved — the server holds it;
 * - with a queue that dies with the process (in-process, the embedded default), once its consumer is done with it
 *   (`settled`). A dead letter holds the checkpoint too (it is not done), without holding back other sends: after a
 *   restart the send is queued again, and the operator's requeue lets it pass.
 * So a crash, even SIGKILL, loses no owed check; a send queued again finds its check done (`checkOwed`) and
 * checks nothing. At most `maxPending` sends wait at a time: beyond that the reactor stops reading the log.
 */
import type { EventStore, Subscription } from '../../shared-schema/ports/event-store.js';
import type { ReadStore } from '../../shared-schema/ports/read-store.js';
import type { Messaging } from '../../shared-schema/ports/messaging.js';
import { CATEGORIES } from '../../shared-schema/domain/streams.js';
import { COVER_QUEUE, coverItemId, coverItemPayload, pause, type CoverItemOutcome } from './cover-queue.js';

export const COVER_REACTOR_CHECKPOINT = 'reactor:cover';

export interface CoverReactorOptions {
  events: EventStore;
  reads: ReadStore;
  messaging: Messaging;
  /** Sends waiting (for their enqueue, or their check with a queue that is not durable) before reading pauses. Default 1000. */
  maxPending?: number;
  /** Pause before enqueueing again after a failed enqueue, doubled up to 30 s. Default 200 ms. */
  enqueueRetryMs?: number;
  /** An enqueue or a checkpoint save failed; it is tried again. */
  onError?: (err: unknown) => void;
  /** The subscription to the log ended on an error (a refused start, a denied read): the reactor follows no more. */
  onStopped?: (err: unknown) => void;
  /**
   * How long a checkpoint that moved waits before it is saved, so that the moves of that time cost one write.
   * Default 250 ms. Saved at once on `stop` and `flush`; a crash sends the checks of that time again (they find
   * their check done).
   */
  saveDelayMs?: number;
}

/**
 * Positions of sends not yet safe; the checkpoint stays below the oldest. A parked one (a dead letter) holds the
 * checkpoint but does not count as waiting. "Below a send" is the position of the event delivered just before it
 * (positions are opaque tokens: never the send's position - 1, which EventStoreDB refuses as a start).
 */
class Watermark {
  private readonly pending = new Map<number, { parked: boolean; before: number }>();
  private waiting = 0;
  private lastSeen: number;
  constructor(start: number) {
    this.lastSeen = start;
  }
  /** Sends waiting, parked ones left out. */
  get size(): number {
    return this.waiting;
  }
  seen(position: number, needsWork: boolean): void {
    const before = this.lastSeen;
    this.lastSeen = position;
    if (!needsWork) return;
    this.pending.set(position, { parked: false, before });
    this.waiting += 1;
  }
  done(position: number): void {
    const entry = this.pending.get(position);
    if (!entry) return;
    this.pending.delete(position);
    if (!entry.parked) this.waiting -= 1;
  }
  park(position: number): void {
    const entry = this.pending.get(position);
    if (!entry || entry.parked) return;
    entry.parked = true;
    this.waiting -= 1;
  }
  /**
   * Every event at or below this position is safe (a Map iterates in insertion order: oldest first). It is always
   * a position the subscription delivered, or the one it started after.
   */
  get safe(): number {
    const oldest = this.pending.values().next();
    return oldest.done ? this.lastSeen : oldest.value.before;
  }
}

export class CoverCheckReactor {
  private subscription: Subscription | null = null;
  private loop: Promise<void> | null = null;
  private watermark = new Watermark(0);
  private saved = 0;
  private saving: Promise<void> | null = null;
  private saveTimer: NodeJS.Timeout | null = null;
  private room: (() => void) | null = null;
  private stopped = false;
  private readonly stopping = new AbortController();
  /** With a queue that is not durable: item id → position of its send, until its consumer settles it. */
  private readonly tracked = new Map<string, number>();
  private readonly enqueues = new Set<Promise<void>>();

  constructor(private readonly options: CoverReactorOptions) {}

  async start(): Promise<void> {
    this.saved = await this.options.reads.getCheckpoint(COVER_REACTOR_CHECKPOINT);
    this.watermark = new Watermark(this.saved);
    this.subscription = this.options.events.subscribeToAll({
      afterPosition: this.saved,
      categories: [CATEGORIES.product],
    });
    this.loop = this.follow(this.subscription).catch((err) => {
      if (!this.stopped) (this.options.onStopped ?? this.options.onError)?.(err);
    });
  }

  /**
   * A consumer of this process finished with an item: `done` lets the checkpoint pass its send, `dead` parks it.
   * Only sends queued on a queue that is not durable are followed; other ids are ignored.
   */
  settled(id: string, outcome: CoverItemOutcome): void {
    const position = this.tracked.get(id);
    if (position === undefined) return;
    if (outcome === 'dead') {
      this.watermark.park(position);
      this.room?.();
      return;
    }
    this.tracked.delete(id);
    this.finished(position);
  }

  /** Stops reading and enqueueing, saves how far the log is safe. Sends settled later are saved by `flush`. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.stopping.abort();
    this.room?.();
    await this.subscription?.close();
    await this.loop;
    await Promise.all([...this.enqueues]);
    await this.save();
  }

  /** Saves the checkpoint as it stands (after the consumers stopped, for their last settlements). */
  flush(): Promise<void> {
    return this.save();
  }

  private async follow(subscription: Subscription): Promise<void> {
    const maxPending = this.options.maxPending ?? 1000;
    const durable = this.options.messaging.durable;
    for await (const event of subscription) {
      if (this.stopped) return;
      const send = event.type === 'ProductUpserted';
      this.watermark.seen(event.position, send);
      if (send) {
        const item = { stream: event.stream, revision: event.revision };
        const id = coverItemId(item);
        if (!durable) this.tracked.set(id, event.position); // before enqueue: the consumer may settle it at once
        const enqueued = this.enqueue(id, coverItemPayload(item)).then((ok) => {
          if (ok && durable) this.finished(event.position);
        });
        this.enqueues.add(enqueued);
        // A failed enqueue stays in the set, for `stop` to throw; the fork itself must not reject unobserved.
        void enqueued.then(
          () => this.enqueues.delete(enqueued),
          () => undefined,
        );
        while (this.watermark.size >= maxPending && !this.stopped)
          await new Promise<void>((resolve) => (this.room = resolve));
      } else {
        this.saveSoon();
      }
    }
  }

  /** Enqueues, trying again while the queue refuses; false when stopped first (the send stays pending). */
  private async enqueue(id: string, payload: string): Promise<boolean> {
    const first = this.options.enqueueRetryMs ?? 200;
    for (let attempt = 0; !this.stopped; attempt++) {
      try {
        await this.options.messaging.enqueue(COVER_QUEUE, id, payload);
        return true;
      } catch (err) {
        if (this.stopped) return false;
        this.options.onError?.(err);
        await pause(Math.min(first * 2 ** attempt, 30_000), this.stopping.signal);
      }
    }
    return false;
  }

  private finished(position: number): void {
    this.watermark.done(position);
    this.room?.();
    this.saveSoon();
  }

  /**
   * Saves the checkpoint `saveDelayMs` from now, with every move made meanwhile: one write to the read store for
   * all of them. Under a steady load of writes a save per settled send was a write transaction each, competing
   * with the projections for the read store's one writer (and emptying their page cache at each commit).
   */
  private saveSoon(): void {
    if (this.saveTimer !== null) return;
    this.saveTimer = setTimeout(() => {
      this.saveTimer = null;
      void this.save();
    }, this.options.saveDelayMs ?? 250);
    this.saveTimer.unref();
  }

  /**
   * Saves the checkpoint until nothing is left to save. A call made while a save runs saves again after it: a move
   * made after that save's last look is not left to a timer that `flush` has just cancelled.
   */
  private save(): Promise<void> {
    if (this.saveTimer !== null) {
      clearTimeout(this.saveTimer);
      this.saveTimer = null;
    }
    if (this.saving) return this.saving.then(() => this.save());
    const run = async (): Promise<void> => {
      try {
        while (this.watermark.safe > this.saved) {
          const position = this.watermark.safe;
          await this.options.reads.transact((tx) => tx.setCheckpoint(COVER_REACTOR_CHECKPOINT, position));
          this.saved = position;
        }
      } catch (err) {
        if (!this.stopped) this.options.onError?.(err);
      }
    };
    // Cleared in a reaction, never synchronously: a save with nothing to do returns before the assignment below,
    // and a `finally` inside `run` would clear `saving` before it is set, leaving it set for good (no save after).
    const saving = run().then(() => {
      if (this.saving === saving) this.saving = null;
    });
    this.saving = saving;
    return saving;
  }
}
