/**
 * The embedded event store: one SQLite file (better-sqlite3, WAL), shared by every process that opens it.
 *
 * Group commit: appends are queued and written by one flush per event-loop turn (setImmediate), in ONE
 * `BEGIN IMMEDIATE` transaction and one fsync for the whole group. Each append is checked against its own expected
 * revision inside that transaction, in arrival order (so appends to one stream in one group see each other), under
 * its own savepoint: a failing append writes nothing and fails alone. Every promise settles only after COMMIT.
 * With `writerThread`, the group is committed by a worker thread on its own connection (event-store-writer.ts), one
 * group at a time, so the fsync does not stop this thread; appends made meanwhile form the next group.
 *
 * Why a subscriber never skips an event (no "late lower position"): positions are assigned inside the write
 * transaction (AUTOINCREMENT rowid, from the largest position the writer sees). SQLite lets one writer at a time
 * hold the write lock, across all processes, from BEGIN IMMEDIATE to COMMIT, and a writer sees every transaction
 * committed before it took the lock. So a transaction that commits later took the lock later and gets positions
 * above every earlier commit: the committed log only ever grows at its tail, and a reader that has seen position p
 * will find every future event above p. (A server-side store with concurrent writers would not give this for free.)
 */
import type Database from 'better-sqlite3';
import {
  type AppendResult,
  type EventMetadata,
  type EventStore,
  type ExpectedRevision,
  type NewEvent,
  type ReadAllOptions,
  type ReadStreamOptions,
  type StreamRead,
  type RecordedEvent,
  type SubscribeOptions,
  type Subscription,
  categoryOf,
  startOf,
} from '../../../shared-schema/ports/event-store.js';
import { openConnection } from './event-store-schema.js';
import { AppendWaker, SqliteSubscription } from './event-store-subscription.js';
import {
  GroupWriter,
  WriterThread,
  type Outcome,
  type PendingAppend,
  type WireBookingTime,
} from './event-store-writer.js';
import { commitSender, type CommitSignal } from '../commit-signal.js';
import { LIMIT_BOUND } from './limit.js';
import { systemClock, type Clock } from '../../../shared-schema/ports/clock.js';
import { CATEGORIES } from '../../../shared-schema/domain/streams.js';

export interface SqliteEventStoreOptions {
  path: string;
  /** FULL (default): a commit survives a power loss. NORMAL: survives a process crash, not a power loss. */
  synchronous?: 'FULL' | 'NORMAL';
  /** How often waiting subscriptions look for commits made by other processes. Default 50 ms. */
  pollIntervalMs?: number;
  /** How long a write waits for another process's write lock before failing with SQLITE_BUSY. Default 5000 ms. */
  busyTimeoutMs?: number;
  /**
   * Upper bound on the events of one group commit (an append is never split); 1 disables grouping. Default 128 with
   * the writer thread, 5000 without. With the writer thread, a bounded group lets the next group's commit overlap the
   * event loop's work on the previous one's answers, where one unbounded group took every waiting write and the loop
   * idled through its fsync; each group has fixed costs (a commit and its fsync, a message each way, a wake-up of
   * every subscription, which then reads), which 128 rather than 32 cut by ~15 % of the CPU per batch item
   * (docs/adr/0010-event-store-writer-thread.md). Without it the commit blocks the loop anyway, and more groups mean more fsyncs on it.
   */
  maxGroupEvents?: number;
  /** Reads and subscriptions only (the file must exist); every append is refused. Default false. */
  readOnly?: boolean;
  /** Commit groups in a worker thread, so that their fsync does not block the event loop. Default false. */
  writerThread?: boolean;
  /**
   * TESTS ONLY. Positions handed out are the row's number times this (default 1: dense), so that they look like
   * EventStoreDB's byte offsets: a position that is not a multiple of it is refused as not being one of this store's,
   * and any `position - 1` arithmetic in a caller breaks its tests. Every store opening one file must use the same.
   */
  positionSpacing?: number;
  /**
   * The clock that books events (`recorded_at` = max(its now at commit, the log's last `recorded_at`):
   * event-store-writer.ts `commit`). Absent: each event keeps its own time, raised to the log's last if earlier.
   */
  clock?: Clock;
}

interface Row {
  position: number;
  id: string;
  stream: string;
  revision: number;
  type: string;
  data: string;
  metadata: string;
}

interface QueuedAppend extends PendingAppend {
  resolve: (result: AppendResult) => void;
  reject: (error: unknown) => void;
}

const COLUMNS = 'position, id, stream, revision, type, data, metadata';
const PREFIXED_COLUMNS = 'e.position, e.id, e.stream, e.revision, e.type, e.data, e.metadata';

/** Every category the service writes to its log. */
const LOG_CATEGORIES: readonly string[] = Object.values(CATEGORIES);

/** Whether a read of these (distinct) categories wants every category the service writes (the projection runner's). */
const wantsWholeLog = (categories: readonly string[]): boolean =>
  categories.length >= LOG_CATEGORIES.length && LOG_CATEGORIES.every((c) => categories.includes(c));

export class SqliteEventStore implements EventStore {
  private queue: QueuedAppend[] = [];
  private flushScheduled = false;
  /** A group is being committed by the writer thread. */
  private inFlight = false;
  private closing = false;
  private closed: Promise<void> | undefined;
  private readonly drainedWaiters: (() => void)[] = [];
  private readonly listeners = new Set<(position: number) => void>();
  private readonly subscriptions = new Set<SqliteSubscription>();
  private readonly waker: AppendWaker;
  private lastDataVersion: number;
  private readonly stmt;
  private readonly readCategories: (afterPosition: number, categories: string[], maxCount: number) => Row[];
  private readonly writer: GroupWriter | WriterThread | null;
  /** Told of each commit on this thread (no writer thread) that wrote events (`signalCommits`). */
  private commits: ReturnType<typeof commitSender> | null = null;

  static open(options: SqliteEventStoreOptions): SqliteEventStore {
    const db = openConnection({
      path: options.path,
      synchronous: options.synchronous ?? 'FULL',
      busyTimeoutMs: options.busyTimeoutMs ?? 5000,
      readOnly: options.readOnly ?? false,
    });
    let writer: GroupWriter | WriterThread | null = null;
    if (!options.readOnly) {
      writer = options.writerThread
        ? new WriterThread({
            path: options.path,
            synchronous: options.synchronous ?? 'FULL',
            busyTimeoutMs: options.busyTimeoutMs ?? 5000,
          })
        : new GroupWriter(db);
    }
    const spacing = options.positionSpacing ?? 1;
    if (!Number.isSafeInteger(spacing) || spacing < 1)
      throw new RangeError('positionSpacing must be a positive integer');
    return new SqliteEventStore(
      db,
      options.pollIntervalMs ?? 50,
      Math.max(1, options.maxGroupEvents ?? (options.writerThread ? 128 : 5000)),
      writer,
      spacing,
      options.clock ?? null,
    );
  }

  private constructor(
    private readonly db: Database.Database,
    pollIntervalMs: number,
    private readonly maxGroupEvents: number,
    writer: GroupWriter | WriterThread | null,
    private readonly spacing: number,
    private readonly clock: Clock | null,
  ) {
    this.writer = writer;
    this.stmt = {
      readStream: db.prepare<[string, number, number], Row>(
        `SELECT ${COLUMNS} FROM events WHERE stream = ? AND revision >= ? ORDER BY revision ${LIMIT_BOUND}`,
      ),
      // One statement for a set of streams: `[stream, fromRevision]` pairs come as one JSON array (the SQL text
      // never changes); each pair is one range of the (stream, revision) index.
      readStreams: db.prepare<[string], Row>(
        `SELECT ${PREFIXED_COLUMNS} FROM json_each(?) AS j JOIN events AS e ` +
          "ON e.stream = json_extract(j.value, '$[0]') AND e.revision >= json_extract(j.value, '$[1]') " +
          'ORDER BY e.stream, e.revision',
      ),
      readAll: db.prepare<[number, number], Row>(
        `SELECT ${COLUMNS} FROM events WHERE position > ? ORDER BY position ${LIMIT_BOUND}`,
      ),
      readCategory: db.prepare<[string, number, number], Row>(
        `SELECT ${COLUMNS} FROM events WHERE category = ? AND position > ? ORDER BY position ${LIMIT_BOUND}`,
      ),
      // A read of every category of the log: one range of the table by position, each row's category tested in the
      // same statement (the categories as one JSON array). NOT INDEXED keeps SQLite off the category index, which
      // would read each category's range and sort them.
      readListed: db.prepare<[number, string, number], Row>(
        `SELECT ${COLUMNS} FROM events NOT INDEXED WHERE position > ? AND category IN (SELECT value FROM json_each(?)) ` +
          `ORDER BY position ${LIMIT_BOUND}`,
      ),
      head: db.prepare<[], { head: number | null }>('SELECT max(position) AS head FROM events'),
      dataVersion: db.prepare<[], { data_version: number }>('PRAGMA data_version'),
    };
    // One read transaction (one snapshot) for the per-category reads of a page. With one snapshot each, another
    // process could commit an event of a category already read, then one of a category not yet read: the page
    // would hold the second, and the reader, moving past it, would never see the first.
    this.readCategories = db.transaction((afterPosition: number, categories: string[], maxCount: number) =>
      categories.flatMap((category) => this.stmt.readCategory.all(category, afterPosition, maxCount)),
    );
    this.lastDataVersion = this.dataVersion();
    this.waker = new AppendWaker(Math.max(1, pollIntervalMs), () => {
      const version = this.dataVersion();
      const changed = version !== this.lastDataVersion;
      this.lastDataVersion = version;
      return changed;
    });
  }

  /**
   * Appends all of `events` or none. An empty `events` is allowed: it checks `expectedRevision`, writes nothing and
   * returns the stream's current state (`nextRevision` -1 and `position` 0 when the stream does not exist; else its
   * last revision and that event's position), as the port defines.
   */
  appendToStream(
    stream: string,
    events: readonly NewEvent[],
    expectedRevision: ExpectedRevision = 'any',
  ): Promise<AppendResult> {
    if (this.closing) return Promise.reject(new Error('the event store is closed'));
    if (this.writer === null) return Promise.reject(new Error('the event store was opened read-only'));
    let serialized: QueuedAppend['events'];
    try {
      checkAppendArguments(stream, expectedRevision);
      serialized = events.map((event) => ({
        type: event.type,
        data: JSON.stringify(event.data) ?? 'null',
        metadata: JSON.stringify(event.metadata),
      }));
    } catch (error) {
      return Promise.reject(error);
    }
    return new Promise<AppendResult>((resolve, reject) => {
      this.queue.push({ stream, events: serialized, expected: expectedRevision, resolve, reject });
      this.scheduleFlush();
    });
  }

  async readStream(stream: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    const rows = this.stmt.readStream.all(stream, Math.max(0, options.fromRevision ?? 0), limitOf(options.maxCount));
    return rows.map((row) => this.toRecorded(row));
  }

  async readStreams(reads: readonly StreamRead[]): Promise<Map<string, RecordedEvent[]>> {
    const found = new Map<string, RecordedEvent[]>(reads.map(({ stream }) => [stream, []]));
    if (found.size !== reads.length) throw new RangeError('readStreams: a stream is named twice');
    if (reads.length === 0) return found;
    const pairs = reads.map(({ stream, fromRevision }) => [stream, Math.max(0, fromRevision ?? 0)]);
    for (const row of this.stmt.readStreams.all(JSON.stringify(pairs)))
      found.get(row.stream)!.push(this.toRecorded(row));
    return found;
  }

  /** `categories: []` matches nothing; leave it out to read every category. */
  async readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    return this.readPage(this.rowAfter(options), options.categories, limitOf(options.maxCount)).events;
  }

  async headPosition(): Promise<number> {
    return (this.stmt.head.get()?.head ?? 0) * this.spacing;
  }

  /**
   * The head once no append is being recorded: an empty append (nothing written) goes through this store's writer
   * behind the appends queued here and takes the write lock, which the writers of every process sharing the file
   * hold from the moment they read their booking clock until their commit. Any event recorded after it is booked
   * by a clock read after this call. A read-only store has no writer: its plain head.
   */
  async recordedHead(): Promise<number> {
    if (this.writer !== null && !this.closing) await this.appendToStream(HEAD_BARRIER_STREAM, [], 'any');
    return this.headPosition();
  }

  subscribeToAll(options: SubscribeOptions = {}): Subscription {
    if (this.closing) throw new Error('the event store is closed');
    const subscription = new SqliteSubscription(
      () => this.rowAfter(options), // checked on the first next(): a refused start ends the iteration with the error
      options.categories,
      (after, categories, max) => this.readPage(after, categories, max),
      this.waker,
      (s) => this.subscriptions.delete(s),
    );
    this.subscriptions.add(subscription);
    return subscription;
  }

  /** Another process appended to the file (infra calls this on a cross-process wake-up message). */
  notifyAppended(): void {
    this.waker.wake();
  }

  /**
   * Tells `signal` of each commit through this store that wrote events (commit-signal.ts): the writer thread itself
   * sends, as soon as it has committed, or this thread when the store commits here. Once per store.
   */
  signalCommits(signal: CommitSignal): void {
    if (this.writer === null) throw new Error('the event store was opened read-only');
    if (this.writer instanceof WriterThread) this.writer.signalCommits(signal);
    else this.commits = commitSender(signal);
  }

  /** Called after each commit through this store with the highest position written. Listeners must not throw. */
  onAppended(listener: (position: number) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Writes what is queued, ends every subscription, then closes the file. */
  close(): Promise<void> {
    this.closed ??= (async () => {
      this.closing = true;
      if (this.queue.length > 0 || this.inFlight)
        await new Promise<void>((resolve) => this.drainedWaiters.push(resolve));
      await Promise.all([...this.subscriptions].map((s) => s.close()));
      if (this.writer instanceof WriterThread) await this.writer.close();
      this.commits?.close();
      this.db.close();
    })();
    return this.closed;
  }

  /**
   * The row number after which a read starts (exclusive). Rows are dense, so "from row r inclusive" is "after r - 1"
   * here, inside the adapter; the positions handed out are tokens (row × spacing) that callers may not count with.
   */
  private rowAfter(options: Pick<ReadAllOptions, 'afterPosition' | 'fromPosition'>): number {
    const start = startOf(options);
    if (start.position % this.spacing !== 0) {
      throw new RangeError(`${start.position} is not a position of this event store (positions are opaque tokens)`);
    }
    const row = start.position / this.spacing;
    return start.inclusive ? row - 1 : row;
  }

  /** Events after row `afterRow`, and the row of the last one (for the next page). */
  private readPage(
    afterRow: number,
    categories: readonly string[] | undefined,
    maxCount: number,
  ): { events: RecordedEvent[]; lastRow: number } {
    let rows: Row[];
    if (categories === undefined) rows = this.stmt.readAll.all(afterRow, maxCount);
    else {
      const wanted = [...new Set(categories)];
      if (wantsWholeLog(wanted)) {
        // Nearly every event is wanted (the projection runner follows every category): one statement, one
        // snapshot, instead of one index scan per category, each of which found at most a few events, in a
        // transaction (measured: 12 statements and the transaction's two were ~15 µs a read of a live page).
        rows = this.stmt.readListed.all(afterRow, JSON.stringify(wanted), maxCount);
      } else {
        // One index range scan per category, merged by position; rows are parsed only once chosen.
        rows = this.readCategories(afterRow, wanted, maxCount);
        rows.sort((a, b) => a.position - b.position);
        if (maxCount >= 0) rows = rows.slice(0, maxCount);
      }
    }
    return {
      events: rows.map((row) => this.toRecorded(row)),
      lastRow: rows.length > 0 ? rows[rows.length - 1].position : afterRow,
    };
  }

  /**
   * `data` is parsed when first read: several readers only look at the type, stream and position of most events
   * they get (the cover reactor at product events, the batch runner's discovery at a batch's parts, each holding
   * its items), and a part's parse is ~1 ms of the event loop. Still a plain own property to every reader.
   */
  private toRecorded(row: Row): RecordedEvent {
    const recorded = {
      id: row.id,
      stream: row.stream,
      revision: row.revision,
      position: row.position * this.spacing,
      type: row.type,
      data: undefined as unknown, // redefined below, in its place among the keys
      metadata: JSON.parse(row.metadata) as EventMetadata,
    };
    let text: string | null = row.data;
    let data: unknown;
    return Object.defineProperty(recorded, 'data', {
      enumerable: true,
      configurable: true,
      get() {
        if (text !== null) {
          data = JSON.parse(text);
          text = null;
        }
        return data;
      },
      set(value: unknown) {
        data = value;
        text = null;
      },
    });
  }

  private dataVersion(): number {
    return this.stmt.dataVersion.get()!.data_version;
  }

  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    // setImmediate, not a microtask: it also gathers appends made by other I/O callbacks of this loop turn.
    setImmediate(() => {
      this.flushScheduled = false;
      this.flush();
    });
  }

  private flush(): void {
    if (this.inFlight) return; // the writer thread is busy: this group goes when it answers
    const group = this.takeGroup();
    if (group.length === 0) return this.drained();
    const writer = this.writer!;
    if (writer instanceof GroupWriter) {
      if (this.queue.length > 0) this.scheduleFlush();
      const clock = this.clock;
      this.settle(group, writer.commit(group, clock ? () => clock.now().getTime() : null));
      return;
    }
    this.inFlight = true;
    const batch: PendingAppend[] = group.map(({ stream, events, expected }) => ({ stream, events, expected }));
    void writer.commit(batch, this.threadBookingTime()).then(
      (outcomes) => this.afterThread(group, outcomes),
      (error: unknown) =>
        this.afterThread(
          group,
          group.map(() => ({ ok: false, error })),
        ),
    );
  }

  /**
   * The booking time the writer thread gets with a group: the system clock is read by the thread itself under the
   * write lock; another clock (the manual one) is read here, as the group leaves.
   */
  private threadBookingTime(): WireBookingTime {
    if (this.clock === systemClock) return 'system';
    return this.clock ? this.clock.now().getTime() : null;
  }

  private afterThread(group: QueuedAppend[], outcomes: Outcome[]): void {
    this.inFlight = false;
    if (this.queue.length > 0) this.flush(); // send the next group before settling this one's promises
    this.settle(group, outcomes);
  }

  /** Settles each append's promise, then wakes subscribers and tells listeners the highest position written. */
  private settle(group: QueuedAppend[], outcomes: Outcome[]): void {
    let written = 0;
    const categories = new Set<string>();
    group.forEach((append, i) => {
      const outcome = outcomes[i];
      if (outcome.ok) {
        const result = { nextRevision: outcome.result.nextRevision, position: outcome.result.position * this.spacing };
        if (append.events.length > 0) {
          written = Math.max(written, result.position);
          categories.add(categoryOf(append.stream));
        }
        append.resolve(result);
      } else append.reject(outcome.error);
    });
    if (written > 0) {
      this.waker.wake(categories);
      this.commits?.sent();
      for (const listener of this.listeners) {
        try {
          listener(written);
        } catch (error) {
          process.emitWarning(`event-store onAppended listener threw: ${String(error)}`);
        }
      }
    }
    this.drained();
  }

  private drained(): void {
    if (this.queue.length === 0 && !this.inFlight) for (const resolve of this.drainedWaiters.splice(0)) resolve();
  }

  private takeGroup(): QueuedAppend[] {
    let events = 0;
    let count = 0;
    while (count < this.queue.length) {
      events += this.queue[count].events.length;
      if (count > 0 && events > this.maxGroupEvents) break;
      count++;
    }
    return this.queue.splice(0, count);
  }
}

/** The stream of `recordedHead`'s empty append: never written (an empty append writes nothing). */
const HEAD_BARRIER_STREAM = '$head';

function checkAppendArguments(stream: string, expected: ExpectedRevision): void {
  if (typeof stream !== 'string' || stream.length === 0) throw new TypeError('stream must be a non-empty string');
  if (typeof expected === 'number' && !(Number.isSafeInteger(expected) && expected >= 0)) {
    throw new RangeError(`expected revision must be a non-negative integer, got ${expected}`);
  }
}

function limitOf(maxCount: number | undefined): number {
  return maxCount === undefined ? -1 : Math.max(0, Math.floor(maxCount));
}
