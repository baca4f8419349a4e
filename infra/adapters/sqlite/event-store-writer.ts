/**
 * The write half of the SQLite event store: one group of appends in ONE `BEGIN IMMEDIATE` transaction (one fsync for
 * the whole group), each append checked against its own expected revision in arrival order under its own savepoint,
 * so a failing append writes nothing and fails alone. Outcomes are final only once COMMIT has returned.
 *
 * It runs either on the caller's thread or in a worker thread (`WriterThread`), so that the commit's fsync does not
 * stop the event loop. Both run the same `GroupWriter` on their own connection.
 */
import type Database from 'better-sqlite3';
import {
  categoryOf,
  WrongExpectedRevisionError,
  type AppendResult,
  type ExpectedRevision,
} from '../../../shared-schema/ports/event-store.js';
import { ulid } from '../../../shared-schema/domain/ids.js';
import { WorkerCalls } from '../worker-calls.js';
import type { CommitSignal } from '../commit-signal.js';

/** One append as the writer receives it: events already serialized. */
export interface PendingAppend {
  stream: string;
  events: { type: string; data: string; metadata: string }[];
  expected: ExpectedRevision;
}

export type Outcome = { ok: true; result: AppendResult } | { ok: false; error: unknown };

/** Whether a committed group wrote any event (an empty append, such as the head's barrier, writes none). */
export const wroteEvents = (group: readonly PendingAppend[], outcomes: readonly Outcome[]): boolean =>
  group.some((append, i) => append.events.length > 0 && outcomes[i].ok);

/**
 * The clock's time a group is booked at (`GroupWriter.commit`): a function, read once the write lock is held; a time
 * read before; or null, no clock (each event keeps its own time, raised to the log's last).
 */
export type BookingTime = (() => number) | number | null;

/** A booking time as it crosses to the writer thread: `system` is the system clock, read there under the lock. */
export type WireBookingTime = number | null | 'system';

interface StreamRow {
  revision: number;
  position: number;
}

export class GroupWriter {
  private readonly stmt;

  constructor(private readonly db: Database.Database) {
    this.stmt = {
      streamHead: db.prepare<[string], StreamRow>('SELECT revision, position FROM streams WHERE stream = ?'),
      setStreamHead: db.prepare<[string, number, number]>(
        'INSERT INTO streams (stream, revision, position) VALUES (?, ?, ?) ' +
          'ON CONFLICT (stream) DO UPDATE SET revision = excluded.revision, position = excluded.position',
      ),
      lastMetadata: db.prepare<[], { metadata: string }>('SELECT metadata FROM events ORDER BY position DESC LIMIT 1'),
      insert: db.prepare<[string, string, number, string, string, string, string]>(
        'INSERT INTO events (id, stream, revision, category, type, data, metadata) VALUES (?, ?, ?, ?, ?, ?, ?)',
      ),
    };
  }

  /**
   * One transaction for the whole group; outcomes are only final once COMMIT has returned.
   *
   * Every event is booked here, under the write lock: its `recorded_at` becomes max(`now`, the last `recorded_at` of
   * the log), so recording order and `recorded_at` never disagree, and a write held up before this point is booked
   * at the time it is recorded, not at the time its command read the clock (a window that has ended never gains an
   * event). `now` null (stores opened without a clock: tools, tests that write their own times) books each event at
   * max(its own `recorded_at`, the last of the log).
   */
  commit(group: readonly PendingAppend[], now: BookingTime = null): Outcome[] {
    const failAll = (error: unknown): Outcome[] => group.map(() => ({ ok: false, error }));
    try {
      this.db.exec('BEGIN IMMEDIATE');
    } catch (error) {
      return failAll(error);
    }
    try {
      const at = typeof now === 'function' ? now() : now; // read under the lock when it can be
      this.booked = Math.max(at ?? -Infinity, this.lastRecordedAt());
      this.bookNow = at !== null;
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

  private booked = -Infinity;
  private bookNow = false;

  private lastRecordedAt(): number {
    const row = this.stmt.lastMetadata.get();
    if (!row) return -Infinity;
    const at = Date.parse(String((JSON.parse(row.metadata) as { recorded_at?: unknown }).recorded_at));
    return Number.isNaN(at) ? -Infinity : at;
  }

  /** The event's metadata with its booking time (see `commit`). */
  private book(metadata: string): string {
    const parsed = JSON.parse(metadata) as Record<string, unknown>;
    const own = Date.parse(String(parsed.recorded_at));
    if (!this.bookNow && !Number.isNaN(own)) this.booked = Math.max(this.booked, own);
    if (!Number.isFinite(this.booked)) return metadata; // no time at all: nothing to book against
    const recordedAt = new Date(this.booked).toISOString();
    if (parsed.recorded_at === recordedAt) return metadata;
    return JSON.stringify({ ...parsed, recorded_at: recordedAt });
  }

  private applyOne(append: PendingAppend): Outcome {
    const head = this.stmt.streamHead.get(append.stream);
    const actual = head ? head.revision : 'no_stream';
    if (!revisionMatches(append.expected, actual)) {
      return { ok: false, error: new WrongExpectedRevisionError(append.stream, append.expected, actual) };
    }
    if (append.events.length === 0)
      return { ok: true, result: { nextRevision: head?.revision ?? -1, position: head?.position ?? 0 } };
    this.db.exec('SAVEPOINT append');
    try {
      const category = categoryOf(append.stream);
      let revision = head ? head.revision : -1;
      let position = 0;
      for (const event of append.events) {
        revision++;
        const info = this.stmt.insert.run(
          ulid(),
          append.stream,
          revision,
          category,
          event.type,
          event.data,
          this.book(event.metadata),
        );
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

/** An outcome as it crosses threads: errors become plain data and are rebuilt on the other side. */
export type WireOutcome =
  | { ok: true; result: AppendResult }
  | { ok: false; conflict: { stream: string; expected: ExpectedRevision; actual: number | 'no_stream' } }
  | { ok: false; message: string; code?: string };

export function toWire(outcome: Outcome): WireOutcome {
  if (outcome.ok) return outcome;
  const error = outcome.error;
  if (error instanceof WrongExpectedRevisionError) {
    return { ok: false, conflict: { stream: error.stream, expected: error.expected, actual: error.actual } };
  }
  const code = (error as { code?: unknown }).code;
  return {
    ok: false,
    message: error instanceof Error ? error.message : String(error),
    ...(typeof code === 'string' ? { code } : {}),
  };
}

export function fromWire(wire: WireOutcome): Outcome {
  if (wire.ok) return wire;
  if ('conflict' in wire)
    return {
      ok: false,
      error: new WrongExpectedRevisionError(wire.conflict.stream, wire.conflict.expected, wire.conflict.actual),
    };
  return { ok: false, error: Object.assign(new Error(wire.message), wire.code ? { code: wire.code } : {}) };
}

/**
 * A group as it crosses to the writer thread: one string of length-prefixed fields (`<length>:<text>`), since
 * posting one flat string costs a copy where the structured clone of many small objects walks each of them.
 */
export function packGroup(group: readonly PendingAppend[]): string {
  const parts: string[] = [String(group.length), ':'];
  const field = (text: string) => parts.push(String(text.length), ':', text);
  for (const append of group) {
    field(append.stream);
    field(String(append.expected));
    field(String(append.events.length));
    for (const event of append.events) {
      field(event.type);
      field(event.data);
      field(event.metadata);
    }
  }
  return parts.join('');
}

export function unpackGroup(packed: string): PendingAppend[] {
  let at = 0;
  const count = (): number => {
    const colon = packed.indexOf(':', at);
    const n = Number(packed.slice(at, colon));
    at = colon + 1;
    return n;
  };
  const field = (): string => {
    const length = count();
    const text = packed.slice(at, at + length);
    at += length;
    return text;
  };
  const expectedOf = (text: string): ExpectedRevision =>
    text === 'any' || text === 'no_stream' || text === 'stream_exists' ? text : Number(text);
  const group: PendingAppend[] = [];
  for (let i = count(); i > 0; i--) {
    const stream = field();
    const expected = expectedOf(field());
    const events: PendingAppend['events'] = [];
    for (let n = Number(field()); n > 0; n--) events.push({ type: field(), data: field(), metadata: field() });
    group.push({ stream, expected, events });
  }
  return group;
}

/** Outcomes as they come back: `[nextRevision, position]` per append (NaN where it failed), failures apart. */
export interface WireOutcomes {
  results: Float64Array;
  failures: [number, WireOutcome][];
}

export function packOutcomes(outcomes: readonly Outcome[]): WireOutcomes {
  const results = new Float64Array(outcomes.length * 2).fill(NaN);
  const failures: [number, WireOutcome][] = [];
  outcomes.forEach((outcome, i) => {
    if (outcome.ok) {
      results[2 * i] = outcome.result.nextRevision;
      results[2 * i + 1] = outcome.result.position;
    } else failures.push([i, toWire(outcome)]);
  });
  return { results, failures };
}

export function unpackOutcomes(wire: WireOutcomes): Outcome[] {
  const failed = new Map(wire.failures);
  return Array.from({ length: wire.results.length / 2 }, (_, i) => {
    const failure = failed.get(i);
    if (failure) return fromWire(failure);
    return { ok: true as const, result: { nextRevision: wire.results[2 * i], position: wire.results[2 * i + 1] } };
  });
}

export interface WriterThreadOptions {
  path: string;
  synchronous: 'FULL' | 'NORMAL';
  busyTimeoutMs: number;
}

/**
 * A GroupWriter in a worker thread, on its own connection (event-store-writer-thread.ts). One group at a time; the
 * thread keeps the process alive only while a group is in flight. If the thread dies, every pending and later
 * commit fails.
 */
export class WriterThread {
  private readonly calls: WorkerCalls<{ id: number; outcomes: WireOutcomes }>;

  constructor(options: WriterThreadOptions) {
    this.calls = new WorkerCalls(
      new URL('./event-store-writer-thread.js', import.meta.url),
      options,
      'event-store writer thread',
    );
  }

  async commit(group: readonly PendingAppend[], now: WireBookingTime = null): Promise<Outcome[]> {
    return unpackOutcomes((await this.calls.call({ group: packGroup(group), now })).outcomes);
  }

  /** The thread itself tells `signal` of each commit that wrote events (commit-signal.ts). */
  signalCommits(signal: CommitSignal): void {
    this.calls.send({ signal }, [signal.port]);
  }

  /** Closes the thread's connection and ends the thread (after the groups already sent). */
  close(): Promise<void> {
    return this.calls.close();
  }
}
