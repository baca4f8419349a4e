/**
 * The read-model port: collections of JSON documents keyed by `_id`, queried on declared top-level fields,
 * written by projectors in atomic units of work together with their checkpoint.
 *
 * Shaped so that a SQLite table per collection (JSON column + indexes on extracted fields) and a MongoDB
 * collection (one compound index per declared index) both implement it without translation tricks.
 *
 * Comparison values — `where` values, range bounds, `in` elements, `ne`, `after`, `replaceIf`'s match — must be
 * scalars (string, finite number, boolean, null) and ids strings, whatever a caller's types said: an adapter checks
 * them and rejects anything else with a TypeError before it queries. It never passes an object or an array to its
 * engine as a value (to MongoDB, `{"$ne": null}` in a value's place is an operator), and an unknown operator key in
 * a condition is refused, not ignored.
 * Keys below the top level are data: a document may hold partner maps whose keys are any string — `$where`, `a.b`,
 * `""`, NUL, `__proto__`, `_bsontype` — and every adapter stores and returns them exactly (the MongoDB adapter
 * encodes them; the contract suite checks it). Fields that are queried, indexed, sorted on or projected are plain
 * identifiers.
 * Strings must be well-formed Unicode (no lone surrogate): MongoDB stores UTF-8, and the doors refuse the rest.
 */

export type Scalar = string | number | boolean | null;

export interface Doc {
  _id: string;
  [field: string]: unknown;
}

export interface CollectionSpec {
  name: string;
  /**
   * Each entry is one compound index over top-level fields, in order. `_id` is always unique and indexed. An index a
   * store holds from an earlier declaration of the collection and no longer declared is dropped.
   */
  indexes: readonly (readonly string[])[];
  /**
   * The entries of `indexes` that the projector owning the collection reads through while it applies events (default:
   * every one). A bulk load of the collection (a rebuild's catch-up, an audit's replay) declares only these, and the
   * others once the documents are in: an index built in one pass over the rows costs a fraction of keeping it row by
   * row.
   */
  applyIndexes?: readonly (readonly string[])[];
  /** Documents whose `expires_at` (ISO string or epoch ms) is in the past may be removed by the store. */
  expires?: boolean;
  /**
   * Top-level string fields kept in a text index, for stores that offer `textSearch` (text-search.ts); others
   * ignore it. Plain identifiers, at most 8.
   */
  text?: readonly string[];
  /**
   * Top-level scalar fields that queries test often without an index of their own (the search's freshness bound):
   * a store may keep them beside the document so that a test reads no JSON (SQLite: a column, like an indexed
   * field's, with no index); others ignore it. Plain identifiers.
   */
  filtered?: readonly string[];
  /**
   * Top-level fields that reads ask for alone often (`Query.fields`), such as text written ahead for a download: a
   * store may keep them beside the document so that such a read reads no JSON (SQLite: a column, like an indexed
   * field's, with no index); others ignore it. Plain identifiers.
   */
  projected?: readonly string[];
}

/** A condition on one top-level field: equality, or a range / set. */
export type Condition =
  Scalar | { gt?: Scalar; gte?: Scalar; lt?: Scalar; lte?: Scalar; in?: readonly Scalar[]; ne?: Scalar };

export type Where = Record<string, Condition>;

export interface SortKey {
  field: string;
  dir?: 'asc' | 'desc';
}

export interface Query {
  where?: Where;
  /** Sort order; `_id` ascending is always appended as the final tie-breaker. */
  orderBy?: readonly SortKey[];
  /**
   * Keyset pagination: the sort values (one per `orderBy` key, then `_id`) of the last row of the previous page.
   * Only rows strictly after it in sort order are returned.
   */
  after?: readonly Scalar[];
  limit?: number;
  /**
   * Read only these top-level fields of each document, and `_id` (a projection: a store need not read or decode the
   * rest). Each must hold a string, a finite number or null in every document read so (a boolean, an object or an
   * array may come back in another form); a field a document lacks comes back as null. Plain identifiers.
   */
  fields?: readonly string[];
}

export interface SumQuery {
  where?: Where;
  /** Group rows by this field; absent = one group for everything (key `null`). */
  groupBy?: string;
  /** Integer fields to add up; sums are exact (BigInt), since totals of cents can pass 2^53. */
  fields: readonly string[];
}

export interface SumRow {
  key: Scalar;
  count: number;
  sums: Record<string, bigint>;
}

export interface ReadView {
  get<T extends Doc = Doc>(collection: string, id: string): Promise<T | null>;
  find<T extends Doc = Doc>(collection: string, query?: Query): Promise<T[]>;
  count(collection: string, where?: Where): Promise<number>;
  sum(collection: string, query: SumQuery): Promise<SumRow[]>;
}

export interface ReadTx extends ReadView {
  /** Insert or replace a whole document. */
  put(collection: string, doc: Doc): Promise<void>;
  delete(collection: string, id: string): Promise<void>;
  setCheckpoint(name: string, position: number): Promise<void>;
}

export interface ReadStore extends ReadView {
  /** Create collections and their indexes if missing (idempotent). */
  ensureCollections(specs: readonly CollectionSpec[]): Promise<void>;
  /**
   * Runs `work` as one atomic unit: every put/delete/setCheckpoint inside is committed together or not at all.
   * Reads inside the unit see its own writes. Units run one at a time per store instance. A unit of 100 000 puts
   * commits (the contract checks it); callers still keep units bounded (a fan-out goes in pages, projector.ts).
   * After a transient failure of the store (a write conflict) an adapter may run `work` again from the start in a
   * new transaction: `work` has no effects outside `tx` that a second run would harm.
   */
  transact<T>(work: (tx: ReadTx) => Promise<T>): Promise<T>;
  /** Last position saved by `setCheckpoint` for this name (0 when none). */
  getCheckpoint(name: string): Promise<number>;
  /** Insert unless a document with this `_id` exists; true when inserted. Atomic (for reservations, idempotency). */
  insertIfAbsent(collection: string, doc: Doc): Promise<boolean>;
  /** Replace the document only when its current fields equal `match`; true when replaced. */
  replaceIf(collection: string, doc: Doc, match: Record<string, Scalar>): Promise<boolean>;
  /** Delete outside a projection unit (records such as idempotency entries). */
  remove(collection: string, id: string): Promise<void>;
  /**
   * Remove a collection: its documents and its indexes (a missing collection is dropped quietly). It no longer exists
   * until `ensureCollections` declares it again; reading it meanwhile fails or answers empty, depending on the adapter.
   * Used by projection rebuilds (a new generation starts from nothing; an old one goes once switched away from).
   */
  drop(collection: string): Promise<void>;
  close(): Promise<void>;
}
