/** Catch-up-then-live subscription to the SQLite log, and the wake-up signal it waits on. */
import type { RecordedEvent, Subscription } from '../../shared-schema/ports/event-store.js';

export const SUBSCRIPTION_PAGE_SIZE = 500;

/**
 * Wakes waiting subscriptions: at once after an append through this store or `notifyAppended()`, and by polling
 * `changedElsewhere()` (a cheap check for commits by other connections) every `pollIntervalMs` while anyone waits.
 * A wake-up only means "read again"; a spurious one costs one indexed query.
 */
export class AppendWaker {
  private readonly waiters = new Set<() => void>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly pollIntervalMs: number,
    private readonly changedElsewhere: () => boolean,
  ) {}

  /** A one-shot wait; `release()` resolves it early (used by `close()`). */
  wait(): { promise: Promise<void>; release: () => void } {
    let release!: () => void;
    const promise = new Promise<void>((resolve) => {
      release = () => {
        this.waiters.delete(release);
        if (this.waiters.size === 0) this.stopPolling();
        resolve();
      };
    });
    this.waiters.add(release);
    // The timer keeps the process alive while a subscriber waits, as a socket would.
    this.timer ??= setInterval(() => this.poll(), this.pollIntervalMs);
    return { promise, release };
  }

  wakeAll(): void {
    for (const release of [...this.waiters]) release();
  }

  private poll(): void {
    let changed: boolean;
    try {
      changed = this.changedElsewhere();
    } catch {
      changed = true; // let the subscribers read, and surface the error through next()
    }
    if (changed) this.wakeAll();
  }

  private stopPolling(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}

/** Events after row `afterRow` (the adapter's own dense row numbers), and the row of the last one. */
export type PageReader = (
  afterRow: number,
  categories: readonly string[] | undefined,
  maxCount: number,
) => { events: RecordedEvent[]; lastRow: number };

export class SqliteSubscription implements Subscription, AsyncIterator<RecordedEvent> {
  private buffer: RecordedEvent[] = [];
  private closed = false;
  private pending: { release: () => void } | undefined;
  private chain: Promise<unknown> = Promise.resolve();

  private afterRow: number | undefined;

  constructor(
    /** The row after which to start; throws when the store refuses the start (the first next() rejects). */
    private readonly start: () => number,
    private readonly categories: readonly string[] | undefined,
    private readonly readPage: PageReader,
    private readonly waker: AppendWaker,
    private readonly onClose: (subscription: SqliteSubscription) => void,
  ) {}

  [Symbol.asyncIterator](): AsyncIterator<RecordedEvent> {
    return this;
  }

  /** Calls are served one after the other, so concurrent `next()` calls still get events in order. */
  next(): Promise<IteratorResult<RecordedEvent>> {
    // A failure (a refused start, a read error) ends the subscription: later calls answer done.
    const result = this.chain
      .then(() => this.pull())
      .catch(async (error: unknown) => {
        await this.close();
        throw error;
      });
    this.chain = result.catch(() => undefined);
    return result;
  }

  async return(): Promise<IteratorResult<RecordedEvent>> {
    await this.close();
    return { value: undefined, done: true };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.buffer = [];
    this.pending?.release();
    this.onClose(this);
  }

  private async pull(): Promise<IteratorResult<RecordedEvent>> {
    for (;;) {
      if (this.closed) return { value: undefined, done: true };
      const next = this.buffer.shift();
      if (next) return { value: next, done: false };
      // The read and the registration of the wait happen in the same synchronous turn: no wake-up (local commit
      // or poll tick) can fall between them, so an event committed after this read always wakes us.
      this.afterRow ??= this.start();
      const page = this.readPage(this.afterRow, this.categories, SUBSCRIPTION_PAGE_SIZE);
      if (page.events.length > 0) {
        this.buffer = page.events;
        this.afterRow = page.lastRow;
        continue;
      }
      const wait = this.waker.wait();
      this.pending = wait;
      await wait.promise;
      this.pending = undefined;
    }
  }
}
