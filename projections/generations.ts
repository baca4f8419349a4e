/**
 * Generations of read models, so that a projection can be rebuilt while the current one keeps serving.
 *
 * Every collection a projector owns, and its checkpoint, has a logical name (what projectors and query routes use:
 * `products`) and a physical one per generation: generation 0 is the bare name, generation N > 0 is
 * `<name>__g<N>` (`products__g2`, checkpoint `products__g2`). The current generation of each projector is one
 * document of the read store's `projection_generations` collection. `GenerationalReadStore` wraps a ReadStore and
 * maps logical names to the current physical ones on every call; names no projector owns pass through unchanged.
 *
 * One process (the embedded default) shares one instance, so a switch is seen by every door at once. Other
 * processes refresh their map on the `projections.generation` message and every `refreshMs` (the old generation is
 * kept for a grace period longer than that before it is dropped, so a reader with a stale map still finds it).
 */
import type { Messaging, Unsubscribe } from '../shared-schema/ports/messaging.js';
import type {
  CollectionSpec,
  Doc,
  Query,
  ReadStore,
  ReadTx,
  Scalar,
  SumQuery,
  SumRow,
  Where,
} from '../shared-schema/ports/read-store.js';
import type { Projector } from './projector.js';
import {
  isTextSearchable,
  TextSearchUnavailable,
  type TextQuery,
  type TextSearchable,
} from '../shared-schema/ports/text-search.js';
import { parkedCollection } from './parking.js';

export const GENERATIONS_COLLECTION = 'projection_generations';
export const GENERATION_SWITCHED = 'projections.generation';

export type GenerationDoc = {
  _id: string;
  /** The generation that serves reads. */
  generation: number;
  /** Highest generation ever started (numbers are never reused). */
  highest: number;
  /** Older generations whose collections are still to be dropped. */
  drop_pending: number[];
  switched_at: string | null;
  /** Live checkpoint at the moment of the switch. */
  switched_position: number;
};

/** The physical name of a logical collection or checkpoint in a generation. */
export const physicalName = (name: string, generation: number): string =>
  generation === 0 ? name : `${name}__g${generation}`;

/** Maps logical names (collections, checkpoint names) to physical ones. */
export type NameMap = (name: string) => string;

/** A ReadStore that renames collections and checkpoints on the way to the inner store. */
export abstract class MappedReadStoreBase implements ReadStore, TextSearchable {
  constructor(readonly inner: ReadStore) {}
  protected abstract mapName(name: string): string;
  private readonly map: NameMap = (name) => this.mapName(name);

  ensureCollections(specs: readonly CollectionSpec[]): Promise<void> {
    return this.inner.ensureCollections(specs.map((s) => ({ ...s, name: this.map(s.name) })));
  }
  transact<T>(work: (tx: ReadTx) => Promise<T>): Promise<T> {
    return this.inner.transact((tx) => work(new MappedTx(tx, this.map)));
  }
  getCheckpoint(name: string): Promise<number> {
    return this.inner.getCheckpoint(this.map(name));
  }
  insertIfAbsent(collection: string, doc: Doc): Promise<boolean> {
    return this.inner.insertIfAbsent(this.map(collection), doc);
  }
  replaceIf(collection: string, doc: Doc, match: Record<string, Scalar>): Promise<boolean> {
    return this.inner.replaceIf(this.map(collection), doc, match);
  }
  remove(collection: string, id: string): Promise<void> {
    return this.inner.remove(this.map(collection), id);
  }
  drop(collection: string): Promise<void> {
    return this.inner.drop(this.map(collection));
  }
  get<T extends Doc = Doc>(collection: string, id: string): Promise<T | null> {
    return this.inner.get<T>(this.map(collection), id);
  }
  find<T extends Doc = Doc>(collection: string, query?: Query): Promise<T[]> {
    return this.inner.find<T>(this.map(collection), query);
  }
  count(collection: string, where?: Where): Promise<number> {
    return this.inner.count(this.map(collection), where);
  }
  sum(collection: string, query: SumQuery): Promise<SumRow[]> {
    return this.inner.sum(this.map(collection), query);
  }
  /** Text search through the name map, when the inner store offers it (TextSearchUnavailable otherwise). */
  textSearch<T extends Doc = Doc>(collection: string, query: TextQuery): Promise<T[]> {
    if (!isTextSearchable(this.inner)) return Promise.reject(new TextSearchUnavailable());
    return this.inner.textSearch<T>(this.map(collection), query);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

/** A ReadStore whose names go through a fixed map. */
export class MappedReadStore extends MappedReadStoreBase {
  constructor(
    inner: ReadStore,
    private readonly fixed: NameMap,
  ) {
    super(inner);
  }
  protected mapName(name: string): string {
    return this.fixed(name);
  }
}

export class GenerationalReadStore extends MappedReadStoreBase {
  /** collection or checkpoint name → owning projector name. */
  private readonly owner = new Map<string, string>();
  private readonly generations = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private unsubscribe: Unsubscribe | undefined;
  private ensured = false;

  constructor(
    inner: ReadStore,
    readonly projectors: readonly Projector[],
  ) {
    super(inner);
    for (const p of projectors) {
      this.owner.set(p.name, p.name);
      for (const c of p.collections) this.owner.set(c.name, p.name);
      // Its parked events belong to the generation too: a rebuild starts its list afresh and switches with it.
      this.owner.set(parkedCollection(p.name), p.name);
    }
  }

  /**
   * Reads the generation map; call before anything reads through this store. Generations only move forward, so a
   * read that raced with a switch in this process can never take the map back.
   */
  async load(): Promise<void> {
    if (!this.ensured) {
      await this.inner.ensureCollections([{ name: GENERATIONS_COLLECTION, indexes: [] }]);
      this.ensured = true;
    }
    for (const p of this.projectors) {
      const doc = await this.inner.get<GenerationDoc>(GENERATIONS_COLLECTION, p.name);
      this.setGeneration(p.name, doc?.generation ?? 0);
    }
  }

  /** Keeps the map fresh when other processes switch generations. */
  async follow(options: { messaging?: Messaging; refreshMs?: number }): Promise<void> {
    const reload = () => void this.load().catch(() => undefined);
    if (options.messaging) this.unsubscribe = await options.messaging.subscribe(GENERATION_SWITCHED, reload);
    if (options.refreshMs && options.refreshMs > 0) {
      this.timer = setInterval(reload, options.refreshMs);
      this.timer.unref();
    }
  }

  async stopFollowing(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.unsubscribe?.();
    this.unsubscribe = undefined;
  }

  generationOf(projector: string): number {
    return this.generations.get(projector) ?? 0;
  }

  /** Moves the in-memory map forward (the caller has committed the generation document). */
  setGeneration(projector: string, generation: number): void {
    this.generations.set(projector, Math.max(generation, this.generationOf(projector)));
  }

  /** The logical names (collections and checkpoint) a projector owns. */
  namesOf(projector: string): string[] {
    return [...this.owner].filter(([, p]) => p === projector).map(([n]) => n);
  }

  /** The physical name of a logical one in the current map. */
  protected override mapName(name: string): string {
    const projector = this.owner.get(name);
    return projector === undefined ? name : physicalName(name, this.generationOf(projector));
  }

  resolve(name: string): string {
    return this.mapName(name);
  }

  /** A view of the inner store where one projector's names map to a fixed generation (rebuilds, audits). */
  pinned(projector: string, generation: number): ReadStore {
    const names = new Set(this.namesOf(projector));
    return new MappedReadStore(this.inner, (name) =>
      names.has(name) ? physicalName(name, generation) : this.resolve(name),
    );
  }

  override async close(): Promise<void> {
    await this.stopFollowing();
    await this.inner.close();
  }
}

/** A unit of work whose names go through a map (resolved on each call; the map does not change inside a unit). */
export class MappedTx implements ReadTx {
  constructor(
    private readonly tx: ReadTx,
    private readonly map: NameMap,
  ) {}
  get<T extends Doc = Doc>(collection: string, id: string): Promise<T | null> {
    return this.tx.get<T>(this.map(collection), id);
  }
  find<T extends Doc = Doc>(collection: string, query?: Query): Promise<T[]> {
    return this.tx.find<T>(this.map(collection), query);
  }
  count(collection: string, where?: Where): Promise<number> {
    return this.tx.count(this.map(collection), where);
  }
  sum(collection: string, query: SumQuery): Promise<SumRow[]> {
    return this.tx.sum(this.map(collection), query);
  }
  put(collection: string, doc: Doc): Promise<void> {
    return this.tx.put(this.map(collection), doc);
  }
  delete(collection: string, id: string): Promise<void> {
    return this.tx.delete(this.map(collection), id);
  }
  setCheckpoint(name: string, position: number): Promise<void> {
    return this.tx.setCheckpoint(this.map(name), position);
  }
}
