/**
 * The aggregate-state port (shared-schema/ports/aggregate-states.ts) with the folded states kept in memory: a load
 * reads only the events after the held state's revision, and `peek` hands the held state without reading, so in the
 * usual case (this process is the stream's only writer) a decision reads nothing at all and costs the same however
 * long the stream is. Reads go through `BatchedReads` (the reads of one event-loop turn made together).
 */
import type { EventMetadata, EventStore } from '../../../shared-schema/ports/event-store.js';
import {
  appendOn,
  foldAfter,
  foldAppended,
  type AggregateStates,
  type Fold,
  type Loaded,
  type TypedEvent,
} from '../../../shared-schema/ports/aggregate-states.js';
import { BatchedReads } from './batched-reads.js';

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

const keyOf = (fold: { name: string }, stream: string): string => `${fold.name}\u0000${stream}`;

export class CachedAggregateStates implements AggregateStates {
  /** Folded states by fold and stream; Map order is the eviction order (oldest first). */
  private readonly cache = new Map<string, Entry>();
  /** Every fold whose states were held, by name: an append through one brings the others' states of the stream along. */
  private readonly folds = new Map<string, Fold<unknown, unknown>>();
  private insertions = 0;
  private bytes = 0;
  private readonly store: EventStore;

  constructor(
    store: EventStore,
    private readonly capacity: number = AGGREGATE_CACHE_BOUNDS.entries,
    private readonly maxBytes: number = AGGREGATE_CACHE_BOUNDS.bytes,
  ) {
    this.store = new BatchedReads(store);
  }

  /** Entries held and their estimated bytes (for the bound's tests and metrics). */
  get cacheSize(): { entries: number; bytes: number } {
    return { entries: this.cache.size, bytes: this.bytes };
  }

  peek<S, E>(stream: string, fold: Fold<S, E>): Loaded<S> | undefined {
    return this.cache.get(keyOf(fold, stream))?.loaded as Loaded<S> | undefined;
  }

  async load<S, E>(stream: string, fold: Fold<S, E>): Promise<Loaded<S>> {
    const from = this.peek(stream, fold) ?? { state: fold.initialState(), revision: -1 };
    const loaded = foldAfter(fold, from, await this.store.readStream(stream, { fromRevision: from.revision + 1 }));
    this.remember(fold, stream, loaded);
    return loaded;
  }

  async append<S, E extends TypedEvent>(
    stream: string,
    fold: Fold<S, E>,
    on: Loaded<S>,
    events: readonly E[],
    metadata: EventMetadata,
  ): Promise<Loaded<S> & { position: number }> {
    const appended = await appendOn(this.store, stream, fold, on, events, metadata);
    this.remember(fold, stream, { state: appended.state, revision: appended.revision });
    this.bringAlong(stream, fold, on.revision, events, metadata);
    return appended;
  }

  /**
   * After an append through `fold` on the state at revision `from`, the other folds' states of the stream: one held
   * at `from` gets the events folded in (the next decision on it needs no read and no lost race); one held at
   * another revision is stale and goes (its next load reads the stream).
   */
  private bringAlong(
    stream: string,
    fold: { name: string },
    from: number,
    events: readonly TypedEvent[],
    metadata: EventMetadata,
  ): void {
    for (const other of this.folds.values()) {
      if (other.name === fold.name) continue;
      const key = keyOf(other, stream);
      const entry = this.cache.get(key);
      if (entry === undefined) continue;
      if (entry.loaded.revision === from)
        this.remember(other, stream, foldAppended(other as Fold<unknown, TypedEvent>, entry.loaded, events, metadata));
      else this.drop(key, entry);
    }
  }

  /**
   * Nearly LRU at a fraction of the cost: an entry in the younger half of the cache is updated in place; one in the
   * older half is moved to the young end. A stream used at least once per `capacity / 2` insertions is never evicted,
   * and a hot stream costs no Map reordering per command. Past either bound (entries, estimated bytes) the oldest
   * entries go; an evicted stream is read again by its next command. A state larger than the whole byte bound is
   * not kept.
   */
  private remember<S, E>(fold: Fold<S, E>, stream: string, loaded: Loaded<S>): void {
    const key = keyOf(fold, stream);
    if (!this.folds.has(fold.name)) this.folds.set(fold.name, fold as Fold<unknown, unknown>);
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

  /**
   * Past either bound, the oldest entries go until the cache is a sixteenth under both, in one walk from the old end.
   * A Map keeps the slots of deleted entries at that end until it is rehashed, so a walk from there for each single
   * eviction passes all of them: at 100,000 entries that cost about 37 µs an insertion, against 0.4 µs so.
   */
  private evictPastBounds(): void {
    if (this.cache.size <= this.capacity && this.bytes <= this.maxBytes) return;
    const keepEntries = this.capacity - Math.floor(this.capacity / 16);
    const keepBytes = this.maxBytes - Math.floor(this.maxBytes / 16);
    for (const [key, entry] of this.cache) {
      if (this.cache.size <= keepEntries && this.bytes <= keepBytes) return;
      this.drop(key, entry);
    }
  }

  private drop(key: string, entry: Entry): void {
    this.cache.delete(key);
    this.bytes -= entry.bytes;
  }
}
