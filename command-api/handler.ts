/**
 * Command handling, the whole loop in one place:
 *   1. load the aggregate: the cached state of the stream, plus the events after the cached revision;
 *   2. decide with a pure function;
 *   3. append with the revision read as the expected revision;
 *   4. on a concurrency conflict, go back to 1 (a bounded number of times).
 * A decision costs the same however long the stream is: the cache keeps the folded state by stream and revision.
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

/** A short random wait after a lost race with another process, growing with the attempt. */
export const backoff = (attempt: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, Math.random() * 2 * attempt));

export class AggregateRepository {
  private readonly cache = new Map<string, Loaded<unknown>>();
  private readonly locks = new Map<string, Promise<void>>();

  constructor(
    private readonly store: EventStore,
    private readonly capacity = 100_000,
  ) {}

  async load<S>(stream: string, aggregate: Aggregate<S>): Promise<Loaded<S>> {
    const key = `${aggregate.name}\u0000${stream}`;
    const cached = this.cache.get(key) as Loaded<S> | undefined;
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

  /** Load, decide, append; retries the whole loop when another writer appended first. */
  handle<S, R>(stream: string, aggregate: Aggregate<S>, decide: (state: S, revision: number) => Decision<R>): Promise<Handled<S, R>> {
    return this.exclusive(stream, () => this.handleAlone(stream, aggregate, decide));
  }

  private async handleAlone<S, R>(stream: string, aggregate: Aggregate<S>, decide: (state: S, revision: number) => Decision<R>): Promise<Handled<S, R>> {
    for (let attempt = 1; ; attempt++) {
      const { state, revision } = await this.load(stream, aggregate);
      const { events, result } = decide(state, revision);
      if (events.length === 0) return { state, revision, result };
      try {
        const appended = await this.store.appendToStream(stream, events, revision < 0 ? 'no_stream' : revision);
        // Fold our own events into the cache without re-reading them.
        let next = state;
        let rev = revision;
        events.forEach((e, i) => {
          rev = revision + 1 + i;
          next = aggregate.evolve(next, { ...e, id: '', stream, revision: rev, position: appended.position });
        });
        this.remember(`${aggregate.name}\u0000${stream}`, { state: next, revision: rev });
        return { state: next, revision: rev, result, position: appended.position };
      } catch (err) {
        if (!(err instanceof WrongExpectedRevisionError) || attempt >= MAX_ATTEMPTS) throw err;
        await backoff(attempt);
      }
    }
  }

  private remember(key: string, loaded: Loaded<unknown>): void {
    this.cache.delete(key);
    this.cache.set(key, loaded);
    if (this.cache.size > this.capacity) {
      const oldest = this.cache.keys().next().value;
      if (oldest !== undefined) this.cache.delete(oldest);
    }
  }
}
