/**
 * Command handling for the deciders of `deciders/` (one shape, `deciders/decider.ts`), the whole loop in one place:
 *   1. take the aggregate's state: the cached state of the stream as it is (no read), or, when nothing is cached or
 *      the cache must be checked, the cached state plus the events after the cached revision;
 *   2. decide with a pure function;
 *   3. append with the revision the state was folded to as the expected revision: the append itself checks that the
 *      cached state was current;
 *   4. on a concurrency conflict, go back to 1 and read (a bounded number of times). A decision taken on the
 *      unread cache that appends nothing or refuses is taken again on a read state, so every answer rests on either
 *      a checked append or a fresh read.
 * A decision costs the same however long the stream is: the cache keeps the folded state by stream and revision,
 * and in the usual case (this process is the stream's only writer) a decision reads nothing at all.
 */
import {
  WrongExpectedRevisionError,
  type EventMetadata,
  type EventStore,
  type RecordedEvent,
} from '../shared-schema/ports/event-store.js';
import { ProblemError } from '../shared-schema/problems.js';
import { event, stored, type Decider, type Fold, type TypedEvent } from './deciders/decider.js';

export interface Loaded<S> {
  state: S;
  /** Revision of the last event folded; -1 when the stream does not exist. */
  revision: number;
}

export interface Handled<S, R> extends Loaded<S> {
  result: R;
  /** Log position of the last appended event, or undefined when nothing was appended. */
  position?: number;
}

/** A cache entry, its estimated size, and the count of insertions when it was last moved to the young end. */
interface Entry {
  loaded: Loaded<unknown>;
  bytes: number;
  touched: number;
}

/**
 * The cache's bounds. Entries vary a lot in size (a product's state is ~1.5 kB typically, ~45 kB at the schema's
 * limits: description, 50 attributes, 11 URLs), so the count alone does not bound memory: the bytes do.
 */
export const AGGREGATE_CACHE_BOUNDS = { entries: 100_000, bytes: 256 * 1024 * 1024 } as const;

/**
 * A cheap estimate of the heap a folded state holds: string lengths plus a fixed cost per value and property (V8
 * keeps ASCII strings at a byte a character). A few µs for a product, where JSON.stringify costs several times that.
 */
export function approximateBytes(value: unknown): number {
  if (typeof value === 'string') return 16 + value.length;
  if (value === null || typeof value !== 'object') return 8;
  let bytes = 16;
  if (value instanceof Map) {
    for (const [k, v] of value as Map<unknown, unknown>) bytes += approximateBytes(k) + approximateBytes(v);
  } else if (Array.isArray(value)) {
    for (const v of value as unknown[]) bytes += 8 + approximateBytes(v);
  } else {
    for (const k in value) bytes += 8 + approximateBytes((value as Record<string, unknown>)[k]);
  }
  return bytes;
}

/**
 * How a decision that lost a race on its streams is taken again. Every attempt that fails proves that another
 * writer succeeded, so the attempts bound how many writers may overtake one request, not how long it waits.
 */
export interface ConflictRetry {
  attempts: number;
  /** Upper bound of the first wait; each later attempt doubles it, up to `maxDelayMs` ("full jitter"). */
  baseDelayMs: number;
  maxDelayMs: number;
}

export const CONFLICT_RETRY: ConflictRetry = { attempts: 16, baseDelayMs: 2, maxDelayMs: 200 };

/**
 * The answer when every attempt lost its race: 503 with `Retry-After`, never a 500. The contract tells clients to
 * repeat a 5xx with the same `Idempotency-Key`; nothing was written by the refused request.
 */
export class ConflictsExhausted extends ProblemError {
  constructor(attempts: number) {
    super(
      503,
      [],
      `Too many concurrent writes to the same resource (${attempts} attempts). Repeat the request with the same Idempotency-Key.`,
      {
        'Retry-After': '1',
      },
    );
    this.name = 'ConflictsExhausted';
  }
}

/** A random wait in [0, min(max, base × 2^(attempt−1))) ms: writers that collided spread apart. */
export const jitteredBackoff = (attempt: number, policy: ConflictRetry = CONFLICT_RETRY): Promise<void> => {
  const bound = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  return new Promise((resolve) => setTimeout(resolve, Math.random() * bound));
};

/**
 * Runs `attempt` until it does not lose a race: a `WrongExpectedRevisionError` (another writer appended to a
 * stream the attempt read) makes it wait a jittered, growing pause and run again on fresh reads; after
 * `policy.attempts` lost races it throws `ConflictsExhausted`. Any other error passes through at once.
 * The one retry loop of the write side: every command path goes through it (most through `handle` below).
 */
export async function retryOnConflict<T>(
  attempt: (n: number) => Promise<T>,
  policy: ConflictRetry = CONFLICT_RETRY,
): Promise<T> {
  for (let n = 1; ; n++) {
    try {
      return await attempt(n);
    } catch (err) {
      if (!(err instanceof WrongExpectedRevisionError)) throw err;
      if (n >= policy.attempts) throw new ConflictsExhausted(n);
      await jitteredBackoff(n, policy);
    }
  }
}

export class AggregateRepository {
  /** Folded states by aggregate and stream; Map order is the eviction order (oldest first). */
  private readonly cache = new Map<string, Entry>();
  private insertions = 0;
  private bytes = 0;
  private readonly locks = new Map<string, Promise<void>>();
  /** Stream reads asked for in this turn, made together in the next (`readAfter`), by stream. */
  private pendingReads = new Map<string, PendingRead>();

  constructor(
    private readonly store: EventStore,
    private readonly capacity: number = AGGREGATE_CACHE_BOUNDS.entries,
    private readonly maxBytes: number = AGGREGATE_CACHE_BOUNDS.bytes,
  ) {}

  /** Entries held and their estimated bytes (for the bound's tests and metrics). */
  get cacheSize(): { entries: number; bytes: number } {
    return { entries: this.cache.size, bytes: this.bytes };
  }

  /**
   * The stream's state as read after this call: the cached state with the events appended after its revision. The
   * reads asked for in one turn of the event loop are made together at the start of the next (`readAfter`), so
   * callers asking for one stream in one turn share one read (a burst of writes to the products of one store reads
   * the store stream once, not once per write). A caller only joins a read not yet made, so every caller sees what
   * the log held at some moment after it asked, as if it had read alone.
   */
  async load<S, E>(stream: string, fold: Fold<S, E>): Promise<Loaded<S>> {
    const key = `${fold.name}\u0000${stream}`;
    const cached = this.cache.get(key)?.loaded as Loaded<S> | undefined;
    const from = cached ?? { state: fold.initialState(), revision: -1 };
    const events = await this.readAfter(stream, from.revision + 1);
    const loaded = folded(fold, from, events);
    this.remember(key, loaded);
    return loaded;
  }

  /**
   * The events of `stream` from `fromRevision`, read at the start of the next turn of the event loop together with
   * every other read asked for in this one: one read per stream, and with a store that reads many streams at once
   * (`readStreams`) one call for all of them — a batch pass's 50 product streams, the concurrent PUTs' and cover
   * checks' streams cost one statement, not one each (a statement's fixed cost is most of a read).
   */
  private readAfter(stream: string, fromRevision: number): Promise<readonly RecordedEvent[]> {
    return new Promise((resolve, reject) => {
      let pending = this.pendingReads.get(stream);
      if (!pending) {
        if (this.pendingReads.size === 0) setImmediate(() => void this.readPending());
        pending = { fromRevision, waiters: [] };
        this.pendingReads.set(stream, pending);
      }
      pending.fromRevision = Math.min(pending.fromRevision, fromRevision);
      pending.waiters.push({ fromRevision, resolve, reject });
    });
  }

  private async readPending(): Promise<void> {
    const batch = this.pendingReads;
    this.pendingReads = new Map();
    const settle = (pending: PendingRead, events: readonly RecordedEvent[]) => {
      for (const waiter of pending.waiters)
        waiter.resolve(
          waiter.fromRevision === pending.fromRevision
            ? events
            : events.filter((e) => e.revision >= waiter.fromRevision),
        );
    };
    const fail = (pending: PendingRead, err: unknown) => {
      for (const waiter of pending.waiters) waiter.reject(err);
    };
    const readStreams = this.store.readStreams?.bind(this.store);
    if (!readStreams) {
      // One read per stream; a failed read fails only its own callers.
      await Promise.all(
        [...batch].map(([stream, pending]) =>
          this.store.readStream(stream, { fromRevision: pending.fromRevision }).then(
            (events) => settle(pending, events),
            (err: unknown) => fail(pending, err),
          ),
        ),
      );
      return;
    }
    try {
      const read = await readStreams([...batch].map(([stream, { fromRevision }]) => ({ stream, fromRevision })));
      for (const [stream, pending] of batch) settle(pending, read.get(stream) ?? []);
    } catch (err) {
      for (const pending of batch.values()) fail(pending, err);
    }
  }

  /**
   * Runs `work` alone among this process's callers for `key`; other keys run freely. Writers of one stream in one
   * process then never race each other (a burst of N writes would otherwise need N attempts for the last one);
   * the expected revision still guards against other processes.
   */
  async exclusive<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.locks.get(key) ?? Promise.resolve();
    let release!: () => void;
    const tail = previous.then(() => new Promise<void>((resolve) => (release = resolve)));
    this.locks.set(key, tail);
    await previous;
    try {
      return await work();
    } finally {
      release();
      if (this.locks.get(key) === tail) this.locks.delete(key);
    }
  }

  /**
   * `work` alone among this process's callers for `lockKey`, taken again on a lost race (`retryOnConflict`): the
   * lock keeps this process's writers of a stream from racing each other; the retry settles races with other
   * processes. The shape of every command path that appends with expected revisions.
   */
  serialized<T>(lockKey: string, work: (attempt: number) => Promise<T>): Promise<T> {
    return this.exclusive(lockKey, () => retryOnConflict(work));
  }

  /**
   * Decide `command` on the stream and append the events with `metadata`. The first attempt decides on the cached
   * state without reading; the append's expected revision checks that it was current. A decision on the unread
   * cache that refuses or appends nothing is taken again on a read state (nothing else would check the cache), and
   * so is every attempt after a lost race.
   */
  handle<S, C, E extends TypedEvent, R>(
    stream: string,
    decider: Decider<S, C, E, R>,
    command: C,
    metadata: EventMetadata,
  ): Promise<Handled<S, R>> {
    const key = `${decider.name}\u0000${stream}`;
    return this.serialized(stream, async (attempt) => {
      const cached = attempt === 1 ? (this.cache.get(key)?.loaded as Loaded<S> | undefined) : undefined;
      if (cached !== undefined) {
        const decision = decidedOrUndefined(() => decider.decide(command, cached.state));
        if (decision !== undefined && decision.events.length > 0) {
          return {
            ...(await this.append(stream, decider, cached, decision.events, metadata)),
            result: decision.result,
          };
        }
      }
      const loaded = await this.load(stream, decider);
      const decision = decider.decide(command, loaded.state);
      if (decision.events.length === 0) return { ...loaded, result: decision.result };
      return { ...(await this.append(stream, decider, loaded, decision.events, metadata)), result: decision.result };
    });
  }

  /**
   * Appends events decided on `on` at the revision it was folded to (a WrongExpectedRevisionError when the stream
   * moved) and folds them into the cache without reading them. For commands that span several streams and run their
   * own attempt inside `serialized`.
   */
  async append<S, E extends TypedEvent>(
    stream: string,
    fold: Fold<S, E>,
    on: Loaded<S>,
    events: readonly E[],
    metadata: EventMetadata,
  ): Promise<Loaded<S> & { position: number }> {
    const appended = await this.store.appendToStream(
      stream,
      events.map((e) => event(e, metadata)),
      on.revision < 0 ? 'no_stream' : on.revision,
    );
    let state = on.state;
    let revision = on.revision;
    for (const e of events) state = fold.evolve(state, { ...e, revision: ++revision, metadata });
    this.remember(`${fold.name}\u0000${stream}`, { state, revision });
    return { state, revision, position: appended.position };
  }

  /**
   * Nearly LRU at a fraction of the cost: an entry in the younger half of the cache is updated in place; one in the
   * older half is moved to the young end. A stream used at least once per `capacity / 2` insertions is never evicted,
   * and a hot stream costs no Map reordering per command. Past either bound (entries, estimated bytes) the oldest
   * entries go; an evicted stream is read again by its next command. A state larger than the whole byte bound is
   * not kept.
   */
  private remember(key: string, loaded: Loaded<unknown>): void {
    const bytes = approximateBytes(loaded.state);
    const entry = this.cache.get(key);
    if (entry !== undefined) {
      this.bytes -= entry.bytes;
      if (this.insertions - entry.touched < this.capacity / 2 && bytes <= this.maxBytes) {
        entry.loaded = loaded;
        entry.bytes = bytes;
        this.bytes += bytes;
        this.evictPastBounds();
        return;
      }
      this.cache.delete(key);
    }
    if (bytes > this.maxBytes) return;
    this.cache.set(key, { loaded, bytes, touched: ++this.insertions });
    this.bytes += bytes;
    this.evictPastBounds();
  }

  private evictPastBounds(): void {
    while (this.cache.size > this.capacity || this.bytes > this.maxBytes) {
      const oldest = this.cache.entries().next().value;
      if (oldest === undefined) return;
      this.cache.delete(oldest[0]);
      this.bytes -= oldest[1].bytes;
    }
  }
}

/** The read of one stream asked for in this turn: from the lowest revision any of its callers wants. */
interface PendingRead {
  fromRevision: number;
  waiters: {
    fromRevision: number;
    resolve: (events: readonly RecordedEvent[]) => void;
    reject: (err: unknown) => void;
  }[];
}

/** `from` with `events` (read from its stream after its revision) folded in. */
function folded<S, E>(fold: Fold<S, E>, from: Loaded<S>, events: readonly RecordedEvent[]): Loaded<S> {
  let { state, revision } = from;
  for (const e of events) {
    state = fold.evolve(state, stored<E & TypedEvent>(e));
    revision = e.revision;
  }
  return { state, revision };
}

/** The decision, or undefined when it refuses (the caller decides again on a read state, where a refusal stands). */
function decidedOrUndefined<D>(decide: () => D): D | undefined {
  try {
    return decide();
  } catch {
    return undefined;
  }
}
