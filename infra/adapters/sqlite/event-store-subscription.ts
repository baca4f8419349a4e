/** Catch-up-then-live subscription to the SQLite log, and the wake-up signal it waits on. */
import type { RecordedEvent, Subscription } from '../../../shared-schema/ports/event-store.js';

export const SUBSCRIPTION_PAGE_SIZE = 500;

/**
 * Wakes waiting subscriptions: at once after an append through this store or `notifyAppended()`, and by polling
 * `changedElsewhere()` (a cheap check for commits by other connections) every `pollIntervalMs` while anyone waits.
 * A wake-up only means "read again"; a spurious one costs one indexed query. An append through this store wakes
 * only the waits whose categories it wrote to (a wait without categories wants every append): a subscription to
 * the batch jobs need not read after each product write. Polls and `notifyAppended()` wake every wait.
 */
export class AppendWaker {
  private readonly waiters = new Map<() => void, ReadonlySet<string> | undefined>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly pollIntervalMs: number,
    private readonly changedElsewhere: () => boolean,
  ) {}

  /** A one-shot wait for appends to `categories` (all when undefined); `release()` resolves it early (`close()`). */
  wait(categories?: ReadonlySet<string>): { promise: Promise<void>; release: () => void } {
    let release!: () => void;
    const promise = new Promise<void>((resolve) => {
      release = () => {
        this.waiters.delete(release);
        if (this.waiters.size === 0) this.stopPolling();
        resolve();
      };
    });
    this.waiters.set(release, categories);
    // The timer keeps the process alive while a subscriber waits, as a socket would.
    this.timer ??= setInterval(() => this.poll(), this.pollIntervalMs);
    return { promise, release };
  }

  /** Wakes every wait; with `written` (the categories of an append), only the waits for one of them or for all. */
  wake(written?: ReadonlySet<string>): void {
    for (const [release, wanted] of [...this.waiters]) {
      if (written === undefined || wanted === undefined || intersects(wanted, written)) release();
    }
  }

  private poll(): void {
    let changed: boolean;
    try {
      changed = this.changedElsewhere();
    } catch {
      changed = true; // let the subscribers read, and surface the error through next()
    }
    if (changed) this.wake();
  }

  private stopPolling(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}

function intersects(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  for (const x of a) if (b.has(x)) return true;
  return false;
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
  private pending: { promise: Promise<void>; release: () => void } | undefined;
  private chain: Promise<unknown> = Promise.resolve();

  private afterRow: number | undefined;
  private readonly wanted: ReadonlySet<string> | undefined;

  constructor(
    /** The row after which to start; throws when the store refuses the start (the first next() rejects). */
    private readonly start: () => number,
    private readonly categories: readonly string[] | undefined,
    private readonly readPage: PageReader,
    private readonly waker: AppendWaker,
    private readonly onClose: (subscription: SqliteSubscription) => void,
  ) {
    this.wanted = categories === undefined ? undefined : new Set(categories);
  }

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

  /**
   * The next event: from the page in hand, else from a new read once something may have been appended. A read that
   * found fewer events than a page reached the end of the log as it was: the wait for the next append is registered
   * with it, in the same synchronous turn (no wake-up, local commit or poll tick, can fall between them, so an event
   * committed after the read always wakes us), and the next read waits for that wake instead of finding nothing.
   */
  private async pull(): Promise<IteratorResult<RecordedEvent>> {
    for (;;) {
      if (this.closed) return { value: undefined, done: true };
      const next = this.buffer.shift();
      if (next) return { value: next, done: false };
      if (this.pending) {
        await this.pending.promise;
        this.pending = undefined;
        continue;
      }
      this.afterRow ??= this.start();
      const page = this.readPage(this.afterRow, this.categories, SUBSCRIPTION_PAGE_SIZE);
      if (page.events.length < SUBSCRIPTION_PAGE_SIZE) this.pending = this.waker.wait(this.wanted);
      this.buffer = page.events;
      this.afterRow = page.lastRow;
    }
  }
}
