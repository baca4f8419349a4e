/**
 * The embedded event store: one SQLite file (better-sqlite3, WAL), shared by every process that opens it.
 *
 * Group commit: appends are queued and written by one flush per event-loop turn (setImmediate), in ONE
 * `BEGIN IMMEDIATE` transaction and one fsync for the whole group. Each append is checked against its own expected
 * revision inside that transaction, in arrival order (so appends to one stream in one group see each other), under
 * its own savepoint: a failing append writes nothing and fails alone. Every promise settles only after COMMIT.
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
  categoryOf,
  WrongExpectedRevisionError,
  type AppendResult,
  type EventMetadata,
  type EventStore,
  type ExpectedRevision,
  type NewEvent,
  type ReadAllOptions,
  type ReadStreamOptions,
  type RecordedEvent,
  type SubscribeOptions,
  type Subscription,
} from '../../shared-schema/ports/event-store.js';
import { ulid } from '../../shared-schema/ids.js';
import { openConnection } from './event-store-schema.js';
import { AppendWaker, SqliteSubscription } from './event-store-subscription.js';

export interface SqliteEventStoreOptions {
  path: string;
  /** FULL (default): a commit survives a power loss. NORMAL: survives a process crash, not a power loss. */
  synchronous?: 'FULL' | 'NORMAL';
  /** How often waiting subscriptions look for commits made by other processes. Default 50 ms. */
  pollIntervalMs?: number;
  /** How long a write waits for another process's write lock before failing with SQLITE_BUSY. Default 5000 ms. */
  busyTimeoutMs?: number;
  /** Upper bound on the events of one group commit (an append is never split). 1 disables grouping. Default 5000. */
  maxGroupEvents?: number;
  /** Reads and subscriptions only (the file must exist); every append is refused. Default false. */
  readOnly?: boolean;
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

interface StreamRow {
  revision: number;
  position: number;
}

interface QueuedAppend {
  stream: string;
  events: { type: string; data: string; metadata: string }[];
  expected: ExpectedRevision;
  resolve: (result: AppendResult) => void;
  reject: (error: unknown) => void;
}

type Outcome = { ok: true; result: AppendResult } | { ok: false; error: unknown };

const COLUMNS = 'position, id, stream, revision, type, data, metadata';

export class SqliteEventStore implements EventStore {
  private queue: QueuedAppend[] = [];
  private flushScheduled = false;
  private closing = false;
  private closed: Promise<void> | undefined;
  private readonly drainedWaiters: (() => void)[] = [];
  private readonly listeners = new Set<(position: number) => void>();
  private readonly subscriptions = new Set<SqliteSubscription>();
  private readonly waker: AppendWaker;
  private lastDataVersion: number;
  private readonly stmt;

  static open(options: SqliteEventStoreOptions): SqliteEventStore {
    const db = openConnection({
      path: options.path,
      synchronous: options.synchronous ?? 'FULL',
      busyTimeoutMs: options.busyTimeoutMs ?? 5000,
      readOnly: options.readOnly ?? false,
    });
    return new SqliteEventStore(db, options.pollIntervalMs ?? 50, Math.max(1, options.maxGroupEvents ?? 5000), options.readOnly ?? false);
  }

  private constructor(
    private readonly db: Database.Database,
    pollIntervalMs: number,
    private readonly maxGroupEvents: number,
    private readonly readOnly: boolean,
  ) {
    this.stmt = {
      streamHead: db.prepare<[string], StreamRow>('SELECT revision, position FROM streams WHERE stream = ?'),
      setStreamHead: db.prepare<[string, number, number]>(
        'INSERT INTO streams (stream, revision, position) VALUES (?, ?, ?) ' +
          'ON CONFLICT (stream) DO UPDATE SET revision = excluded.revision, position = excluded.position',
      ),
      insert: db.prepare<[string, string, number, string, string, string, string]>(
        'INSERT INTO events (id, stream, revision, category, type, data, metadata) VALUES (?, ?, ?, ?, ?, ?, ?)',
      ),
      readStream: db.prepare<[string, number, number], Row>(
        `SELECT ${COLUMNS} FROM events WHERE stream = ? AND revision >= ? ORDER BY revision LIMIT ?`,
      ),
      readAll: db.prepare<[number, number], Row>(`SELECT ${COLUMNS} FROM events WHERE position > ? ORDER BY position LIMIT ?`),
      readCategory: db.prepare<[string, number, number], Row>(
        `SELECT ${COLUMNS} FROM events WHERE category = ? AND position > ? ORDER BY position LIMIT ?`,
      ),
      head: db.prepare<[], { head: number | null }>('SELECT max(position) AS head FROM events'),
      dataVersion: db.prepare<[], { data_version: number }>('PRAGMA data_version'),
    };
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
   * last revision and that event's position).
   */
  appendToStream(stream: string, events: readonly NewEvent[], expectedRevision: ExpectedRevision = 'any'): Promise<AppendResult> {
    if (this.closing) return Promise.reject(new Error('the event store is closed'));
    if (this.readOnly) return Promise.reject(new Error('the event store was opened read-only'));
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
    return rows.map(toRecorded);
  }

  /** `categories: []` matches nothing; leave it out to read every category. */
  async readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    return this.readPage(options.afterPosition ?? 0, options.categories, limitOf(options.maxCount));
  }

  async headPosition(): Promise<number> {
    return this.stmt.head.get()?.head ?? 0;
  }

  subscribeToAll(options: SubscribeOptions = {}): Subscription {
    if (this.closing) throw new Error('the event store is closed');
    const subscription = new SqliteSubscription(
      options.afterPosition ?? 0,
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
    this.waker.wakeAll();
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
      if (this.queue.length > 0) await new Promise<void>((resolve) => this.drainedWaiters.push(resolve));
      await Promise.all([...this.subscriptions].map((s) => s.close()));
      this.db.close();
    })();
    return this.closed;
  }

  private readPage(afterPosition: number, categories: readonly string[] | undefined, maxCount: number): RecordedEvent[] {
    if (categories === undefined) return this.stmt.readAll.all(afterPosition, maxCount).map(toRecorded);
    // One index range scan per category, merged by position; rows are parsed only once chosen.
    const rows = [...new Set(categories)].flatMap((category) => this.stmt.readCategory.all(category, afterPosition, maxCount));
    rows.sort((a, b) => a.position - b.position);
    return (maxCount < 0 ? rows : rows.slice(0, maxCount)).map(toRecorded);
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
    const group = this.takeGroup();
    if (this.queue.length > 0) this.scheduleFlush();
    const outcomes = this.commitGroup(group);
    let written = 0;
    group.forEach((append, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) {
        if (append.events.length > 0) written = Math.max(written, outcome.result.position);
        append.resolve(outcome.result);
      } else append.reject(outcome.error);
    });
    if (written > 0) {
      this.waker.wakeAll();
      for (const listener of this.listeners) {
        try {
          listener(written);
        } catch (error) {
          process.emitWarning(`event-store onAppended listener threw: ${String(error)}`);
        }
      }
    }
    if (this.queue.length === 0) for (const resolve of this.drainedWaiters.splice(0)) resolve();
  }

  private takeGroup(): QueuedAppend[] {
    let events = 0;
    let count = 0;
    while (count < this.queue.length) {
      events += this.queue[count]!.events.length;
      if (count > 0 && events > this.maxGroupEvents) break;
      count++;
    }
    return this.queue.splice(0, count);
  }

  /** One transaction for the whole group; outcomes are only final once COMMIT has returned. */
  private commitGroup(group: QueuedAppend[]): Outcome[] {
    const failAll = (error: unknown): Outcome[] => group.map(() => ({ ok: false, error }));
    try {
      this.db.exec('BEGIN IMMEDIATE');
    } catch (error) {
      return failAll(error);
    }
    try {
      const outcomes = group.map((append) => this.applyOne(append));
      this.db.exec('COMMIT');
      return outcomes;
    } catch (error) {
      try {
        if (this.db.inTransaction) this.db.exec('ROLLBACK');
      } catch {
        // the transaction is gone either way
      }
      return failAll(error);
    }
  }

  private applyOne(append: QueuedAppend): Outcome {
    const head = this.stmt.streamHead.get(append.stream);
    const actual = head ? head.revision : 'no_stream';
    if (!revisionMatches(append.expected, actual)) {
      return { ok: false, error: new WrongExpectedRevisionError(append.stream, append.expected, actual) };
    }
    if (append.events.length === 0) return { ok: true, result: { nextRevision: head?.revision ?? -1, position: head?.position ?? 0 } };
    this.db.exec('SAVEPOINT append');
    try {
      const category = categoryOf(append.stream);
      let revision = head ? head.revision : -1;
      let position = 0;
      for (const event of append.events) {
        revision++;
        const info = this.stmt.insert.run(ulid(), append.stream, revision, category, event.type, event.data, event.metadata);
        position = Number(info.lastInsertRowid);
      }
      this.stmt.setStreamHead.run(append.stream, revision, position);
      this.db.exec('RELEASE append');
      return { ok: true, result: { nextRevision: revision, position } };
    } catch (error) {
      if (!this.db.inTransaction) throw error; // SQLite rolled the whole transaction back: the group fails
      this.db.exec('ROLLBACK TO append');
      this.db.exec('RELEASE append');
      return { ok: false, error };
    }
  }
}

function revisionMatches(expected: ExpectedRevision, actual: number | 'no_stream'): boolean {
  switch (expected) {
    case 'any':
      return true;
    case 'no_stream':
      return actual === 'no_stream';
    case 'stream_exists':
      return actual !== 'no_stream';
    default:
      return actual === expected;
  }
}

function checkAppendArguments(stream: string, expected: ExpectedRevision): void {
  if (typeof stream !== 'string' || stream.length === 0) throw new TypeError('stream must be a non-empty string');
  if (typeof expected === 'number' && !(Number.isSafeInteger(expected) && expected >= 0)) {
    throw new RangeError(`expected revision must be a non-negative integer, got ${expected}`);
  }
}

function limitOf(maxCount: number | undefined): number {
  return maxCount === undefined ? -1 : Math.max(0, Math.floor(maxCount));
}

function toRecorded(row: Row): RecordedEvent {
  return {
    id: row.id,
    stream: row.stream,
    revision: row.revision,
    position: row.position,
    type: row.type,
    data: JSON.parse(row.data) as unknown,
    metadata: JSON.parse(row.metadata) as EventMetadata,
  };
}
