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
 * so reads see the unit's own writes, and the checkpoint (collection `checkpoints`) commits with them.
 * MongoDB transactions need a replica set (or a sharded cluster): infra/deploy/compose.yaml starts MongoDB as a
 * one-node replica set for that reason. Against a standalone server `transactional` is false and units are applied
 * write by write with the checkpoint last: safe to replay for idempotent projectors after a crash, but a unit
 * that throws halfway keeps its earlier writes. The contract suite needs the replica set.
 *
 * Units run one at a time per instance (projector semantics), behind a small mutex.
 */
import { MongoClient, MongoServerError } from 'mongodb';
import type { ClientSession, Db, Document } from 'mongodb';
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
} from '../../shared-schema/ports/read-store.js';
import {
  EXPIRES_FIELD,
  andFilters,
  encodeKey,
  fromMongoDoc,
  idFilter,
  keysetFilter,
  matchFilter,
  sortKeys,
  sumPipeline,
  toBigInt,
  toMongoDoc,
  toScalar,
  toSort,
  whereToFilter,
} from './query.js';

const CHECKPOINTS = 'checkpoints';
const DUPLICATE_KEY = 11000;
const NAMESPACE_EXISTS = 48;
const DEFAULT_DB = 'partner_commerce';

/** Every stored document has a string `_id` (the port's), never an ObjectId. */
interface Stored extends Document {
  _id: string;
}
const coll = (db: Db, name: string) => db.collection<Stored>(name);

export class MongoReadStore implements ReadStore {
  private queue: Promise<unknown> = Promise.resolve();
  private readonly outside: SessionView;

  /**
   * Connects and asks the server whether it can run transactions. `dbName` defaults to the database named in
   * the URL, else `partner_commerce`.
   */
  static async connect(url: string, dbName?: string): Promise<MongoReadStore> {
    const client = new MongoClient(url, { ignoreUndefined: true });
    await client.connect();
    try {
      const hello = await client.db('admin').command({ hello: 1 });
      const transactional = typeof hello.setName === 'string' || hello.msg === 'isdbgrid';
      return new MongoReadStore(client, client.db(dbName ?? dbNameFromUrl(url) ?? DEFAULT_DB), transactional);
    } catch (err) {
      await client.close();
      throw err;
    }
  }

  constructor(
    private readonly client: MongoClient,
    private readonly db: Db,
    /** True when units run in MongoDB transactions (replica set or sharded cluster). */
    readonly transactional: boolean,
  ) {
    this.outside = new SessionView(db, undefined);
  }

  async ensureCollections(specs: readonly CollectionSpec[]): Promise<void> {
    for (const spec of [...specs, { name: CHECKPOINTS, indexes: [] }]) {
      try {
        await this.db.createCollection(spec.name);
      } catch (err) {
        if (!(err instanceof MongoServerError && err.code === NAMESPACE_EXISTS)) throw err;
      }
      const c = coll(this.db, spec.name);
      for (const fields of spec.indexes) {
        if (fields.length > 0) await c.createIndex(fields.map((f) => [encodeKey(f), 1] as [string, 1]));
      }
      if ('expires' in spec && spec.expires) await c.createIndex([[EXPIRES_FIELD, 1]], { expireAfterSeconds: 0 });
    }
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
    const run = this.queue.then(() => (this.transactional ? this.inTransaction(work) : this.writeByWrite(work)));
    this.queue = run.catch(() => undefined);
    return run;
  }

  /**
   * The unit runs once (not through `withTransaction`, which may run it again): a transient failure reaches the
   * caller, who retries from its checkpoint. Only the commit is retried when its outcome is unknown, which is
   * safe because committing twice commits once.
   */
  private async inTransaction<T>(work: (tx: ReadTx) => Promise<T>): Promise<T> {
    const session = this.client.startSession();
    const tx = new UnitTx(this.db, session);
    try {
      session.startTransaction({
        readConcern: { level: 'snapshot' },
        writeConcern: { w: 'majority' },
        readPreference: 'primary',
      });
      let result: T;
      try {
        result = await work(tx);
      } catch (err) {
        tx.end();
        await session.abortTransaction().catch(() => undefined);
        throw err;
      }
      tx.end();
      await tx.flushCheckpoints();
      for (let attempt = 1; ; attempt++) {
        try {
          await session.commitTransaction();
          break;
        } catch (err) {
          const unknown = err instanceof Error && 'hasErrorLabel' in err &&
            (err as MongoServerError).hasErrorLabel('UnknownTransactionCommitResult');
          if (!unknown || attempt >= 5) throw err;
        }
      }
      return result;
    } finally {
      await session.endSession();
    }
  }

  private async writeByWrite<T>(work: (tx: ReadTx) => Promise<T>): Promise<T> {
    const tx = new UnitTx(this.db, undefined);
    try {
      const result = await work(tx);
      tx.end();
      await tx.flushCheckpoints();
      return result;
    } finally {
      tx.end();
    }
  }

  async getCheckpoint(name: string): Promise<number> {
    const row = await coll(this.db, CHECKPOINTS).findOne({ _id: name });
    return row ? Number(row.position) : 0;
  }

  async insertIfAbsent(collection: string, doc: Doc): Promise<boolean> {
    try {
      await coll(this.db, collection).insertOne(toMongoDoc(doc));
      return true;
    } catch (err) {
      if (err instanceof MongoServerError && err.code === DUPLICATE_KEY) return false;
      throw err;
    }
  }

  async replaceIf(collection: string, doc: Doc, match: Record<string, Scalar>): Promise<boolean> {
    const { _id, ...rest } = toMongoDoc(doc);
    const result = await coll(this.db, collection).replaceOne(matchFilter(doc._id, match), rest);
    return result.matchedCount === 1;
  }

  async remove(collection: string, id: string): Promise<void> {
    await coll(this.db, collection).deleteOne(idFilter(id));
  }

  async drop(collection: string): Promise<void> {
    await coll(this.db, collection).deleteMany({});
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

/** Reads through one session (or none), so that reads inside a unit see the unit's writes. */
class SessionView implements ReadView {
  constructor(
    protected readonly db: Db,
    protected readonly session: ClientSession | undefined,
  ) {}

  protected opts(): { session?: ClientSession } {
    return this.session ? { session: this.session } : {};
  }

  async get<T extends Doc = Doc>(collection: string, id: string): Promise<T | null> {
    const doc = await coll(this.db, collection).findOne(idFilter(id), this.opts());
    return doc ? fromMongoDoc<T>(doc) : null;
  }

  async find<T extends Doc = Doc>(collection: string, query: Query = {}): Promise<T[]> {
    if (query.limit !== undefined && query.limit <= 0) return [];
    const keys = sortKeys(query.orderBy);
    const filter = andFilters(whereToFilter(query.where), query.after ? keysetFilter(keys, query.after) : {});
    const cursor = coll(this.db, collection).find(filter, { ...this.opts(), sort: toSort(keys) });
    if (query.limit !== undefined) cursor.limit(query.limit);
    return (await cursor.toArray()).map((d) => fromMongoDoc<T>(d));
  }

  count(collection: string, where?: Where): Promise<number> {
    return coll(this.db, collection).countDocuments(whereToFilter(where), this.opts());
  }

  async sum(collection: string, query: SumQuery): Promise<SumRow[]> {
    const rows = await coll(this.db, collection).aggregate(sumPipeline(query), this.opts()).toArray();
    return rows.map((row) => {
      const sums: Record<string, bigint> = {};
      query.fields.forEach((f, i) => {
        sums[f] = toBigInt(row[`s${i}`]);
      });
      return { key: toScalar(row._id), count: Number(row.count), sums };
    });
  }
}

/** The unit's view: reads and writes through the session; checkpoints are written last. */
class UnitTx extends SessionView implements ReadTx {
  private ended = false;
  private readonly checkpoints = new Map<string, number>();

  end(): void {
    this.ended = true;
  }

  private open(): void {
    if (this.ended) throw new Error('this unit of work has ended; use the tx only inside transact()');
  }

  async put(collection: string, doc: Doc): Promise<void> {
    this.open();
    const { _id, ...rest } = toMongoDoc(doc);
    await coll(this.db, collection).replaceOne(idFilter(doc._id), rest, { ...this.opts(), upsert: true });
  }

  async delete(collection: string, id: string): Promise<void> {
    this.open();
    await coll(this.db, collection).deleteOne(idFilter(id), this.opts());
  }

  async setCheckpoint(name: string, position: number): Promise<void> {
    this.open();
    this.checkpoints.set(name, position);
  }

  async flushCheckpoints(): Promise<void> {
    for (const [name, position] of this.checkpoints) {
      await coll(this.db, CHECKPOINTS).updateOne({ _id: name }, { $set: { position } }, { ...this.opts(), upsert: true });
    }
  }
}

function dbNameFromUrl(url: string): string | undefined {
  const m = /^mongodb(?:\+srv)?:\/\/[^/]*\/([^?]*)/.exec(url);
  return m && m[1] ? decodeURIComponent(m[1]) : undefined;
}
