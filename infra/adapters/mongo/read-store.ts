/**
 * The read-store port on MongoDB through the `mongodb` driver (v7).
 *
 * One MongoDB collection per port collection, documents stored as they are (their `_id` is the port's `_id`) but for
 * their keys, encoded at every depth so that partner map keys (`$where`, `a.b`, NUL, `_bsontype`) are stored and
 * read back exactly (query.ts `encodeKey`; field names the service queries encode to themselves),
 * one compound index per declared index, and for `expires` collections a TTL index on `_expires`, a Date copy of
 * `expires_at` kept in a side field and stripped on every read.
 *
 * `transact` runs the unit in a MongoDB transaction: every read and write of the unit goes through the session,
 * so reads see the unit's own writes, and the checkpoint (collection `checkpoints`) commits with them. Writes are
 * buffered and sent as ordered bulk writes (at most `FLUSH_OPS` at a time, and before every read of the unit), so a
 * unit of 10^5 puts is a hundred round trips, not 10^5. A unit that meets a transient transaction error (a write
 * conflict, an election: label TransientTransactionError) is run again from the start in a new transaction, a few
 * times, as the driver's documented pattern does; a commit whose outcome is unknown is committed again.
 * MongoDB transactions need a replica set (or a sharded cluster): `connect` refuses a standalone server with a
 * message saying what to do (infra/topology/deploy/compose.yaml starts MongoDB as a one-node replica set for that reason).
 * There is no write-by-write fallback: it lost atomicity silently, and not every projector is idempotent per write.
 *
 * Units run one at a time per instance (projector semantics), behind a small mutex.
 *
 * Text search (`textSearch`, for collections that declare `text` fields): the folded words of those fields in a
 * side field `_text` with a multikey index, written with the document in the same unit (text.ts says why not `$text`).
 * The fields are learnt from `ensureCollections`, which every process writing a collection calls at start; it also
 * gives the words to documents written before the collection declared them. A query's `sharing` documents are a
 * second read by that field (an index of the collection serves it, e.g. the offers' `gtin`), after the matches: not
 * the same snapshot as theirs outside a unit (the reads of a search answer are not one snapshot on MongoDB).
 */
import { BSON, MongoClient, MongoError, MongoServerError } from 'mongodb';
import type { AnyBulkWriteOperation, ClientSession, Db, Document } from 'mongodb';
import type {
  CollectionSpec,
  Doc,
  Query,
  ReadStore,
  ReadTx,
  ReadView,
  Scalar,
  SumQuery,
  SumRow,
  Where,
} from '../../../shared-schema/ports/read-store.js';
import { sharedValues, type TextQuery, type TextSearchable } from '../../../shared-schema/ports/text-search.js';
import { TEXT_FIELD, TEXT_INDEX, TEXT_INDEX_NAME, textFilter, textWordsOf } from './text.js';
import {
  EXPIRES_FIELD,
  andFilters,
  encodeKey,
  fromMongoDoc,
  fromProjected,
  idFilter,
  keysetFilter,
  matchFilter,
  sortKeys,
  sumPipeline,
  sumRows,
  toMongoDoc,
  toProjection,
  toSort,
  whereToFilter,
} from './query.js';

const CHECKPOINTS = 'checkpoints';
const DUPLICATE_KEY = 11000;
const NAMESPACE_EXISTS = 48;
const NAMESPACE_NOT_FOUND = 26;
const DEFAULT_DB = 'partner_commerce';
/** Buffered writes of a unit sent in one bulk write at most. */
export const FLUSH_OPS = 1000;
/** MongoDB's largest document (BSON), checked at `put` so that an oversized document fails its own event's apply. */
const MAX_DOCUMENT_BYTES = 16 * 1024 * 1024;

export interface MongoReadStoreOptions {
  /** Runs of a unit that meets transient transaction errors, the first included (default 5). */
  unitAttempts?: number;
  /** Pause before the second run, doubling after (default 20 ms). */
  retryPauseMs?: number;
}

/** Whether the driver labelled this error as worth retrying the whole transaction for. */
function isTransientTransactionError(err: unknown): boolean {
  return err instanceof MongoError && err.hasErrorLabel('TransientTransactionError');
}

function isUnknownCommitResult(err: unknown): boolean {
  return err instanceof MongoError && err.hasErrorLabel('UnknownTransactionCommitResult');
}

/**
 * Why a server cannot run the read store's units (null when it can), from its `hello` answer: transactions need a
 * replica set member (`setName`) or a mongos (`msg: "isdbgrid"`).
 */
export function transactionsUnsupported(hello: Document): string | null {
  if (hello.msg === 'isdbgrid' || typeof hello.setName === 'string') return null;
  const fix =
    'The read store commits each unit of work (documents and checkpoint) in one multi-document transaction, which MongoDB runs only on a ' +
    'replica set or a sharded cluster; it does not fall back to unsafe write-by-write units. A one-node replica set is enough: ' +
    'start mongod with --replSet rs0, run rs.initiate() once, and connect with ?replicaSet=rs0 in MONGO_URL (infra/topology/deploy/compose.yaml does all three).';
  if (hello.isreplicaset === true)
    return `MongoDB was started with --replSet but the replica set is not initiated: run rs.initiate() once. ${fix}`;
  return `MongoDB is a standalone server. ${fix}`;
}

/** Asks the server (`hello` on `admin`) and throws when it cannot run transactions (see `transactionsUnsupported`). */
export async function assertTransactions(admin: Pick<Db, 'command'>): Promise<void> {
  const hello = await admin.command({ hello: 1 });
  const why = transactionsUnsupported(hello);
  if (why !== null) throw new Error(`refusing to start the MongoDB read store: ${why}`);
}

/** Every stored document has a string `_id` (the port's), never an ObjectId. */
interface Stored extends Document {
  _id: string;
}
const coll = (db: Db, name: string) => db.collection<Stored>(name);

/** The declared text fields of each collection (collection → fields), shared by a store and its units. */
type TextFields = Map<string, readonly string[]>;

/** A document as stored: keys encoded, `_expires` and, for a text collection, `_text` beside it. */
function stored(doc: Doc, text: TextFields, collection: string): Document & { _id: string } {
  const out = toMongoDoc(doc);
  const fields = text.get(collection);
  if (fields) out[TEXT_FIELD] = textWordsOf(doc, fields);
  return out;
}

export class MongoReadStore implements ReadStore, TextSearchable {
  private queue: Promise<unknown> = Promise.resolve();
  private readonly outside: SessionView;
  private readonly text: TextFields = new Map();

  /**
   * Connects and checks that the server runs transactions (refusing a standalone server). `dbName` defaults to the
   * database named in the URL, else `partner_commerce`.
   */
  static async connect(url: string, dbName?: string, options: MongoReadStoreOptions = {}): Promise<MongoReadStore> {
    const client = new MongoClient(url, { ignoreUndefined: true });
    await client.connect();
    try {
      await assertTransactions(client.db('admin'));
      return new MongoReadStore(client, client.db(dbName ?? dbNameFromUrl(url) ?? DEFAULT_DB), options);
    } catch (err) {
      await client.close();
      throw err;
    }
  }

  constructor(
    private readonly client: MongoClient,
    private readonly db: Db,
    private readonly options: MongoReadStoreOptions = {},
  ) {
    this.outside = new SessionView(db, undefined, this.text);
  }

  async ensureCollections(specs: readonly CollectionSpec[]): Promise<void> {
    for (const spec of [...specs, { name: CHECKPOINTS, indexes: [] }]) {
      try {
        await this.db.createCollection(spec.name);
      } catch (err) {
        if (!(err instanceof MongoServerError && err.code === NAMESPACE_EXISTS)) throw err;
      }
      const c = coll(this.db, spec.name);
      const declared = new Set(['_id_']);
      for (const fields of spec.indexes) {
        if (fields.length > 0) declared.add(await c.createIndex(fields.map((f) => [encodeKey(f), 1] as [string, 1])));
      }
      if ('expires' in spec && spec.expires) {
        declared.add(await c.createIndex([[EXPIRES_FIELD, 1]], { expireAfterSeconds: 0 }));
      }
      const text = 'text' in spec ? spec.text : undefined;
      if (text && text.length > 0) {
        this.text.set(spec.name, [...text]);
        declared.add(await c.createIndex(TEXT_INDEX, { name: TEXT_INDEX_NAME }));
        await this.giveWords(spec.name, text);
      } else {
        this.text.delete(spec.name);
      }
      // An index left by an earlier declaration of the collection would only cost every write.
      for (const { name } of await c.listIndexes().toArray()) {
        if (typeof name === 'string' && !declared.has(name)) await c.dropIndex(name);
      }
    }
  }

  /** Documents without words yet (written before the collection declared its text fields) get them, in batches. */
  private async giveWords(collection: string, fields: readonly string[]): Promise<void> {
    const c = coll(this.db, collection);
    const projection = Object.fromEntries(fields.map((f) => [encodeKey(f), 1]));
    const cursor = c.find({ [TEXT_FIELD]: { $exists: false } }, { projection, batchSize: FLUSH_OPS });
    let ops: AnyBulkWriteOperation<Stored>[] = [];
    const send = async () => {
      if (ops.length > 0) await c.bulkWrite(ops, { ordered: false });
      ops = [];
    };
    for await (const row of cursor) {
      const words = textWordsOf(fromMongoDoc(row), fields);
      // Only if still without words: a unit that wrote the document meanwhile gave it the current ones.
      ops.push({
        updateOne: {
          filter: { ...idFilter(row._id), [TEXT_FIELD]: { $exists: false } },
          update: { $set: { [TEXT_FIELD]: words } },
        },
      });
      if (ops.length >= FLUSH_OPS) await send();
    }
    await send();
  }

  /**
   * Documents whose text fields hold every word (the last as a prefix when asked), at most `limit`, in no promised
   * order; then those sharing their `sharing` field's values.
   */
  textSearch<T extends Doc = Doc>(collection: string, query: TextQuery): Promise<T[]> {
    return this.outside.textSearch<T>(collection, query);
  }

  get<T extends Doc = Doc>(collection: string, id: string): Promise<T | null> {
    return this.outside.get<T>(collection, id);
  }
  find<T extends Doc = Doc>(collection: string, query?: Query): Promise<T[]> {
    return this.outside.find<T>(collection, query);
  }
  count(collection: string, where?: Where): Promise<number> {
    return this.outside.count(collection, where);
  }
  sum(collection: string, query: SumQuery): Promise<SumRow[]> {
    return this.outside.sum(collection, query);
  }

  transact<T>(work: (tx: ReadTx) => Promise<T>): Promise<T> {
    const run = this.queue.then(() => this.withRetries(work));
    this.queue = run.catch(() => undefined);
    return run;
  }

  /**
   * The driver's documented pattern (what `session.withTransaction` does, with bounded runs and pauses): a unit whose
   * transaction failed with the TransientTransactionError label is run again from the start, in a new transaction.
   * A failure of the unit's own reads or writes counts even when `work` caught it or threw another error for it
   * (the runner wraps a projector's errors): the transaction is aborted then anyway.
   */
  private async withRetries<T>(work: (tx: ReadTx) => Promise<T>): Promise<T> {
    const attempts = Math.max(1, this.options.unitAttempts ?? 5);
    let pause = this.options.retryPauseMs ?? 20;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.inTransaction(work);
      } catch (err) {
        const transient = err instanceof UnitFailure ? err.transient : isTransientTransactionError(err);
        const cause = err instanceof UnitFailure ? err.error : err;
        if (!transient || attempt >= attempts) throw cause;
        await new Promise((resolve) => setTimeout(resolve, pause));
        pause = Math.min(pause * 2, 1000);
      }
    }
  }

  /** One run of the unit in one transaction. Only the commit is retried when its outcome is unknown (committing twice commits once). */
  private async inTransaction<T>(work: (tx: ReadTx) => Promise<T>): Promise<T> {
    const session = this.client.startSession();
    const tx = new UnitTx(this.db, session, this.text);
    try {
      session.startTransaction({
        readConcern: { level: 'snapshot' },
        writeConcern: { w: 'majority' },
        readPreference: 'primary',
      });
      let result: T;
      try {
        result = await work(tx);
        tx.end();
        await tx.flush();
        await tx.flushCheckpoints();
      } catch (err) {
        tx.end();
        await session.abortTransaction().catch(() => undefined);
        throw new UnitFailure(err, tx.transient || isTransientTransactionError(err));
      }
      for (let attempt = 1; ; attempt++) {
        try {
          await session.commitTransaction();
          break;
        } catch (err) {
          if (isUnknownCommitResult(err) && attempt < 5) continue;
          throw new UnitFailure(err, isTransientTransactionError(err));
        }
      }
      return result;
    } finally {
      await session.endSession();
    }
  }

  async getCheckpoint(name: string): Promise<number> {
    const row = await coll(this.db, CHECKPOINTS).findOne({ _id: name });
    return row ? Number(row.position) : 0;
  }

  async insertIfAbsent(collection: string, doc: Doc): Promise<boolean> {
    try {
      await coll(this.db, collection).insertOne(stored(doc, this.text, collection));
      return true;
    } catch (err) {
      if (err instanceof MongoServerError && err.code === DUPLICATE_KEY) return false;
      throw err;
    }
  }

  async replaceIf(collection: string, doc: Doc, match: Record<string, Scalar>): Promise<boolean> {
    const { _id, ...rest } = stored(doc, this.text, collection);
    const result = await coll(this.db, collection).replaceOne(matchFilter(doc._id, match), rest);
    return result.matchedCount === 1;
  }

  async remove(collection: string, id: string): Promise<void> {
    await coll(this.db, collection).deleteOne(idFilter(id));
  }

  /** Drops the collection with its indexes (a missing one quietly); `ensureCollections` declares it again. */
  async drop(collection: string): Promise<void> {
    try {
      await coll(this.db, collection).drop();
    } catch (err) {
      if (!(err instanceof MongoServerError && err.code === NAMESPACE_NOT_FOUND)) throw err;
    }
  }

  /** Removes the whole database (tests use one database per store). */
  async dropDatabase(): Promise<void> {
    await this.db.dropDatabase();
  }

  async close(): Promise<void> {
    await this.queue;
    await this.client.close();
  }
}

/** A unit's failure, with whether its transaction met a transient error (then the unit may run again). */
class UnitFailure extends Error {
  constructor(
    readonly error: unknown,
    readonly transient: boolean,
  ) {
    super('unit of work failed');
  }
}

/** Reads through one session (or none), so that reads inside a unit see the unit's writes. */
class SessionView implements ReadView {
  constructor(
    protected readonly db: Db,
    protected readonly session: ClientSession | undefined,
    protected readonly text: TextFields,
  ) {}

  protected opts(): { session?: ClientSession } {
    return this.session ? { session: this.session } : {};
  }

  /** Runs one operation of the view (the unit sends its buffered writes first and notes transient failures). */
  protected async op<R>(run: () => Promise<R>): Promise<R> {
    return run();
  }

  get<T extends Doc = Doc>(collection: string, id: string): Promise<T | null> {
    return this.op(async () => {
      const doc = await coll(this.db, collection).findOne(idFilter(id), this.opts());
      return doc ? fromMongoDoc<T>(doc) : null;
    });
  }

  find<T extends Doc = Doc>(collection: string, query: Query = {}): Promise<T[]> {
    if (query.limit !== undefined && query.limit <= 0) return Promise.resolve([]);
    const keys = sortKeys(query.orderBy);
    const filter = andFilters(whereToFilter(query.where), query.after ? keysetFilter(keys, query.after) : {});
    const fields = query.fields;
    const projection = fields === undefined ? undefined : toProjection(fields);
    return this.op(async () => {
      const cursor = coll(this.db, collection).find(filter, {
        ...this.opts(),
        sort: toSort(keys),
        ...(projection ? { projection } : {}),
      });
      if (query.limit !== undefined) cursor.limit(query.limit);
      const stored = await cursor.toArray();
      return fields === undefined
        ? stored.map((d) => fromMongoDoc<T>(d))
        : stored.map((d) => fromProjected<T>(d, fields));
    });
  }

  count(collection: string, where?: Where): Promise<number> {
    const filter = whereToFilter(where);
    return this.op(() => coll(this.db, collection).countDocuments(filter, this.opts()));
  }

  sum(collection: string, query: SumQuery): Promise<SumRow[]> {
    const pipeline = sumPipeline(query);
    return this.op(async () =>
      sumRows(query, await coll(this.db, collection).aggregate(pipeline, this.opts()).toArray()),
    );
  }

  async textSearch<T extends Doc = Doc>(collection: string, query: TextQuery): Promise<T[]> {
    const filter =
      query.where === undefined ? textFilter(query) : andFilters(textFilter(query), whereToFilter(query.where));
    return this.op(async () => {
      const c = coll(this.db, collection);
      const docs = (await c.find(filter, { ...this.opts(), limit: query.limit }).toArray()).map((d) =>
        fromMongoDoc<T>(d),
      );
      const values = query.sharing === undefined ? [] : sharedValues(docs, query.sharing);
      if (query.sharing === undefined || values.length === 0) return docs;
      // The documents sharing a value, those already found left out by the server (`$nin` on `_id`).
      const sharing = andFilters(whereToFilter({ [query.sharing]: { in: values } }), {
        _id: { $nin: docs.map((d) => d._id) },
      });
      for (const d of await c.find(sharing, this.opts()).toArray()) docs.push(fromMongoDoc<T>(d));
      return docs;
    });
  }
}

/**
 * The unit's view: reads and writes through the session. Writes wait in a buffer, sent as ordered bulk writes when
 * it holds `FLUSH_OPS`, before any read, and at the end; checkpoints are written last.
 */
class UnitTx extends SessionView implements ReadTx {
  private ended = false;
  private readonly checkpoints = new Map<string, number>();
  /** Buffered writes, in order, grouped by collection (consecutive writes to one collection share a group). */
  private readonly pending: { collection: string; ops: AnyBulkWriteOperation<Stored>[] }[] = [];
  private pendingOps = 0;
  /** True once an operation of this unit failed with TransientTransactionError (the transaction is then aborted). */
  transient = false;

  end(): void {
    this.ended = true;
  }

  private open(): void {
    if (this.ended) throw new Error('this unit of work has ended; use the tx only inside transact()');
  }

  protected override async op<R>(run: () => Promise<R>): Promise<R> {
    this.open();
    await this.flush();
    return this.noting(run);
  }

  private async noting<R>(run: () => Promise<R>): Promise<R> {
    try {
      return await run();
    } catch (err) {
      if (isTransientTransactionError(err)) this.transient = true;
      throw err;
    }
  }

  private async buffer(collection: string, op: AnyBulkWriteOperation<Stored>): Promise<void> {
    const last = this.pending[this.pending.length - 1];
    if (last && last.collection === collection) last.ops.push(op);
    else this.pending.push({ collection, ops: [op] });
    this.pendingOps += 1;
    if (this.pendingOps >= FLUSH_OPS) await this.flush();
  }

  /** Sends the buffered writes, in order. */
  async flush(): Promise<void> {
    while (this.pending.length > 0) {
      const group = this.pending.shift()!;
      this.pendingOps -= group.ops.length;
      await this.noting(() => coll(this.db, group.collection).bulkWrite(group.ops, { ...this.opts(), ordered: true }));
    }
  }

  async put(collection: string, doc: Doc): Promise<void> {
    this.open();
    const { _id, ...rest } = stored(doc, this.text, collection);
    const size = BSON.calculateObjectSize(rest) + BSON.calculateObjectSize({ _id });
    if (size > MAX_DOCUMENT_BYTES)
      throw new RangeError(
        `document ${collection}/${doc._id} is ${size} bytes as BSON; MongoDB stores at most ${MAX_DOCUMENT_BYTES}`,
      );
    await this.buffer(collection, { replaceOne: { filter: idFilter(doc._id), replacement: rest, upsert: true } });
  }

  async delete(collection: string, id: string): Promise<void> {
    this.open();
    await this.buffer(collection, { deleteOne: { filter: idFilter(id) } });
  }

  async setCheckpoint(name: string, position: number): Promise<void> {
    this.open();
    this.checkpoints.set(name, position);
  }

  async flushCheckpoints(): Promise<void> {
    for (const [name, position] of this.checkpoints) {
      await this.noting(() =>
        coll(this.db, CHECKPOINTS).updateOne({ _id: name }, { $set: { position } }, { ...this.opts(), upsert: true }),
      );
    }
  }
}

function dbNameFromUrl(url: string): string | undefined {
  const m = /^mongodb(?:\+srv)?:\/\/[^/]*\/([^?]*)/.exec(url);
  return m && m[1] ? decodeURIComponent(m[1]) : undefined;
}
