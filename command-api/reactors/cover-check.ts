/**
 * The cover-check reactor: follows the product events of the log from its own checkpoint and, for every send of a
 * product (`ProductUpserted`, single or batch), asks the pool for a check (the job decides from the stream whether
 * one is owed: a new cover address, or the same address sent again after a rejection).
 *
 * The checkpoint (saved in the read store as `reactor:cover`) only passes an event once its job ran, so a restart
 * resumes with every check still owed; jobs found already done are skipped by `checkOwed`, so none runs twice in a
 * row. At most `maxPending` sends wait for their check at a time: beyond that the reactor stops reading the log.
 */
import type { EventStore, Subscription } from '../../shared-schema/ports/event-store.js';
import type { ReadStore } from '../../shared-schema/ports/read-store.js';
import { CATEGORIES } from '../../shared-schema/streams.js';
import type { CoverWork } from './cover-work.js';

export const COVER_REACTOR_CHECKPOINT = 'reactor:cover';

export interface CoverReactorOptions {
  events: EventStore;
  reads: ReadStore;
  work: CoverWork;
  /** Sends waiting for their check before the reactor pauses reading. Default 1000. */
  maxPending?: number;
  onError?: (err: unknown) => void;
}

/** Positions of events whose work is not done; the checkpoint stays below the oldest. */
class Watermark {
  private readonly pending = new Set<number>();
  private lastSeen: number;
  constructor(start: number) {
    this.lastSeen = start;
  }
  get size(): number {
    return this.pending.size;
  }
  seen(position: number, needsWork: boolean): void {
    this.lastSeen = position;
    if (needsWork) this.pending.add(position);
  }
  done(position: number): void {
    this.pending.delete(position);
  }
  /** Every event at or below this position is done (a Set iterates in insertion order: oldest first). */
  get safe(): number {
    const oldest = this.pending.values().next();
    return oldest.done ? this.lastSeen : oldest.value - 1;
  }
}

export class CoverCheckReactor {
  private subscription: Subscription | null = null;
  private loop: Promise<void> | null = null;
  private watermark = new Watermark(0);
  private saved = 0;
  private saving: Promise<void> | null = null;
  private room: (() => void) | null = null;
  private stopped = false;

  constructor(private readonly options: CoverReactorOptions) {}

  async start(): Promise<void> {
    this.saved = await this.options.reads.getCheckpoint(COVER_REACTOR_CHECKPOINT);
    this.watermark = new Watermark(this.saved);
    this.subscription = this.options.events.subscribeToAll({ afterPosition: this.saved, categories: [CATEGORIES.product] });
    this.loop = this.follow(this.subscription).catch((err) => {
      if (!this.stopped) this.options.onError?.(err);
    });
  }

  /** Stops reading, lets running checks finish, saves how far the log is done. Queued checks wait for the restart. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.room?.();
    await this.subscription?.close();
    await this.loop;
    await this.options.work.stop();
    await this.save();
  }

  private async follow(subscription: Subscription): Promise<void> {
    const maxPending = this.options.maxPending ?? 1000;
    for await (const event of subscription) {
      if (this.stopped) return;
      const send = event.type === 'ProductUpserted';
      this.watermark.seen(event.position, send);
      if (send) {
        void this.options.work.submit(event.stream, { kind: 'sent', revision: event.revision }).then((job) => {
          if (job.outcome === 'dropped') return; // not done: the checkpoint stays below it
          this.watermark.done(event.position);
          this.room?.();
          void this.save();
        });
        while (this.watermark.size >= maxPending && !this.stopped) await new Promise<void>((resolve) => (this.room = resolve));
      } else if (this.watermark.size === 0) {
        void this.save();
      }
    }
  }

  /** Saves the checkpoint; calls made while a save runs are folded into one more save. */
  private save(): Promise<void> {
    if (this.saving) return this.saving;
    this.saving = (async () => {
      try {
        while (this.watermark.safe > this.saved) {
          const position = this.watermark.safe;
          await this.options.reads.transact((tx) => tx.setCheckpoint(COVER_REACTOR_CHECKPOINT, position));
          this.saved = position;
        }
      } catch (err) {
        if (!this.stopped) this.options.onError?.(err);
      } finally {
        this.saving = null;
      }
    })();
    return this.saving;
  }
}
