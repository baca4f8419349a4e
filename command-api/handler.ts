/**
 * Command handling, the whole loop in one place:
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
import { WrongExpectedRevisionError, type EventStore, type NewEvent, type RecordedEvent } from '../shared-schema/ports/event-store.js';

export interface Aggregate<S> {
  /** Distinguishes cache entries when two aggregates fold the same stream. */
  name: string;
  initial: () => S;
  evolve: (state: S, event: RecordedEvent) => S;
}

export interface Loaded<S> {
  state: S;
  /** Revision of the last event folded; -1 when the stream does not exist. */
  revision: number;
}

export interface Decision<R> {
  events: NewEvent[];
  result: R;
}

export interface Handled<S, R> extends Loaded<S> {
  result: R;
  /** Log position of the last appended event, or undefined when nothing was appended. */
  position?: number;
}

const MAX_ATTEMPTS = 8;

/** A cache entry, and the count of insertions when it was last moved to the young end of the cache. */
interface Entry {
  loaded: Loaded<unknown>;
  touched: number;
}

/** A short random wait after a lost race with another process, growing with the attempt. */
export const backoff = (attempt: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, Math.random() * 2 * attempt));

export class AggregateRepository {
  /** Folded states by aggregate and stream; Map order is the eviction order (oldest first). */
  private readonly cache = new Map<string, Entry>();
  private insertions = 0;
  private readonly locks = new Map<string, Promise<void>>();
  /** Reads scheduled for the next turn of the event loop, by aggregate and stream (see `loadFresh`). */
  private readonly scheduled = new Map<string, Promise<Loaded<unknown>>>();

  constructor(
    private readonly store: EventStore,
    private readonly capacity = 100_000,
  ) {}

  async load<S>(stream: string, aggregate: Aggregate<S>): Promise<Loaded<S>> {
    const key = `${aggregate.name}\u0000${stream}`;
    const cached = this.cache.get(key)?.loaded as Loaded<S> | undefined;
    let state = cached ? cached.state : aggregate.initial();
    let revision = cached ? cached.revision : -1;
    const events = await this.store.readStream(stream, { fromRevision: revision + 1 });
    for (const e of events) {
      state = aggregate.evolve(state, e);
      revision = e.revision;
    }
    const loaded = { state, revision };
    this.remember(key, loaded);
    return loaded;
  }

  /**
   * The stream's state as read after this call: callers that ask for the same stream in one turn of the event loop
   * share one read, made in the next turn (a burst of writes to the products of one store reads the store stream
   * once, not once per write). A caller only joins a read not yet made, so every caller sees what the log held at
   * some moment after it asked, as if it had read alone.
   */
  loadFresh<S>(stream: string, aggregate: Aggregate<S>): Promise<Loaded<S>> {
    const key = `${aggregate.name}\u0000${stream}`;
    let read = this.scheduled.get(key);
    if (!read) {
      read = new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
        this.scheduled.delete(key); // later callers wait for a read made after they asked
        return this.load(stream, aggregate);
      });
      this.scheduled.set(key, read);
    }
    return read as Promise<Loaded<S>>;
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

  /** Decide and append on the cached state, reading the stream when nothing is cached or the cache proved stale. */
  handle<S, R>(stream: string, aggregate: Aggregate<S>, decide: (state: S, revision: number) => Decision<R>): Promise<Handled<S, R>> {
    return this.exclusive(stream, () => this.handleAlone(stream, aggregate, decide));
  }

  private async handleAlone<S, R>(stream: string, aggregate: Aggregate<S>, decide: (state: S, revision: number) => Decision<R>): Promise<Handled<S, R>> {
    const key = `${aggregate.name}\u0000${stream}`;
    let mustRead = false;
    for (let attempt = 1; ; attempt++) {
      const cached = mustRead ? undefined : (this.cache.get(key)?.loaded as Loaded<S> | undefined);
      const { state, revision } = cached ?? (await this.load(stream, aggregate));
      let decision: Decision<R>;
      try {
        decision = decide(state, revision);
      } catch (err) {
        if (cached === undefined) throw err;
        mustRead = true; // refused on the unread cache: check against the stream first
        continue;
      }
      const { events, result } = decision;
      if (events.length === 0) {
        if (cached === undefined) return { state, revision, result };
        mustRead = true; // nothing to append means nothing checks the cache: read, then decide again
        continue;
      }
      try {
        const appended = await this.store.appendToStream(stream, events, revision < 0 ? 'no_stream' : revision);
        // Fold our own events into the cache without re-reading them.
        let next = state;
        let rev = revision;
        events.forEach((e, i) => {
          rev = revision + 1 + i;
          next = aggregate.evolve(next, { ...e, id: '', stream, revision: rev, position: appended.position });
        });
        this.remember(key, { state: next, revision: rev });
        return { state: next, revision: rev, result, position: appended.position };
      } catch (err) {
        if (err instanceof WrongExpectedRevisionError && attempt < MAX_ATTEMPTS) {
          mustRead = true;
          await backoff(attempt);
          continue;
        }
        throw err;
      }
    }
  }

  /**
   * Nearly LRU at a fraction of the cost: an entry in the younger half of the cache is updated in place; one in the
   * older half is moved to the young end. A stream used at least once per `capacity / 2` insertions is never evicted,
   * and a hot stream costs no Map reordering per command.
   */
  private remember(key: string, loaded: Loaded<unknown>): void {
    const entry = this.cache.get(key);
    if (entry !== undefined && this.insertions - entry.touched < this.capacity / 2) {
      entry.loaded = loaded;
      return;
    }
    if (entry !== undefined) this.cache.delete(key);
    this.cache.set(key, { loaded, touched: ++this.insertions });
    if (this.cache.size > this.capacity) {
      const oldest = this.cache.keys().next().value;
      if (oldest !== undefined) this.cache.delete(oldest);
    }
  }
}
