/**
 * The MongoDB read store's behaviour that needs a replica set to see on a server, checked against fakes of
 * the driver's objects (MongoClient, Db, Collection, ClientSession): which servers it refuses, how a unit meets
 * transient transaction errors, how its writes reach the server, what drop and an empty sum do. The fakes record the
 * calls; the server's side of each case is what MongoDB documents (hello fields, error labels, NamespaceNotFound).
 */
import { expect } from 'chai';
import { MongoServerError } from 'mongodb';
import type { Db, Document, MongoClient } from 'mongodb';
import {
  assertTransactions,
  FLUSH_OPS,
  MongoReadStore,
  transactionsUnsupported,
  type MongoReadStoreOptions,
} from '../../infra/adapters/mongo/read-store.js';

type Call = { op: string; collection?: string; detail?: unknown };

const transientError = (what = 'WriteConflict'): MongoServerError =>
  new MongoServerError({
    errmsg: what,
    code: 112,
    codeName: 'WriteConflict',
    errorLabels: ['TransientTransactionError'],
  });
const unknownCommit = (): MongoServerError =>
  new MongoServerError({
    errmsg: 'timed out waiting for majority',
    code: 50,
    errorLabels: ['UnknownTransactionCommitResult'],
  });

/** A scripted fake of the driver: failures are taken from the front of each queue, one per call. */
class FakeDriver {
  readonly calls: Call[] = [];
  readonly docs = new Map<string, Map<string, Document>>();
  bulkFailures: (Error | null)[] = [];
  commitFailures: (Error | null)[] = [];
  dropFailures: (Error | null)[] = [];
  aggregateRows: Document[] = [];

  private fail(queue: (Error | null)[]): void {
    const next = queue.shift();
    if (next) throw next;
  }

  private table(name: string): Map<string, Document> {
    let t = this.docs.get(name);
    if (!t) this.docs.set(name, (t = new Map()));
    return t;
  }

  collection(name: string): unknown {
    const driver = this;
    return {
      async bulkWrite(ops: Document[], options: Document) {
        driver.calls.push({
          op: 'bulkWrite',
          collection: name,
          detail: { size: ops.length, ordered: options.ordered, session: options.session !== undefined },
        });
        driver.fail(driver.bulkFailures);
        for (const op of ops) {
          if (op.replaceOne)
            driver
              .table(name)
              .set(op.replaceOne.filter._id, { _id: op.replaceOne.filter._id, ...op.replaceOne.replacement });
          if (op.deleteOne) driver.table(name).delete(op.deleteOne.filter._id);
        }
        return {};
      },
      async findOne(filter: { _id: string }) {
        driver.calls.push({ op: 'findOne', collection: name });
        return driver.table(name).get(filter._id) ?? null;
      },
      find(filter: Document, options: Document) {
        driver.calls.push({
          op: 'find',
          collection: name,
          detail: { filter, sort: options.sort, projection: options.projection },
        });
        // As the server projects: `_id` and the fields named with 1 that the document has, nothing else.
        const projection = options.projection as Record<string, 1> | undefined;
        const rows = [...driver.table(name).values()].map((d) =>
          projection ? Object.fromEntries(Object.entries(d).filter(([k]) => projection[k] === 1)) : d,
        );
        const cursor = { limit: () => cursor, toArray: async () => rows };
        return cursor;
      },
      async countDocuments() {
        driver.calls.push({ op: 'countDocuments', collection: name });
        return driver.table(name).size;
      },
      aggregate(pipeline: Document[]) {
        driver.calls.push({ op: 'aggregate', collection: name, detail: pipeline });
        return { toArray: async () => driver.aggregateRows };
      },
      async updateOne(filter: { _id: string }, update: { $set: Document }) {
        driver.calls.push({ op: 'updateOne', collection: name, detail: update.$set });
        driver.table(name).set(filter._id, { _id: filter._id, ...update.$set });
        return {};
      },
      async drop() {
        driver.calls.push({ op: 'drop', collection: name });
        driver.fail(driver.dropFailures);
        driver.docs.delete(name);
        return true;
      },
    };
  }

  session(): unknown {
    const driver = this;
    return {
      startTransaction() {
        driver.calls.push({ op: 'startTransaction' });
      },
      async commitTransaction() {
        driver.calls.push({ op: 'commitTransaction' });
        driver.fail(driver.commitFailures);
      },
      async abortTransaction() {
        driver.calls.push({ op: 'abortTransaction' });
      },
      async endSession() {
        driver.calls.push({ op: 'endSession' });
      },
    };
  }

  store(options: MongoReadStoreOptions = {}): MongoReadStore {
    const client = { startSession: () => this.session(), close: async () => undefined } as unknown as MongoClient;
    const db = { collection: (name: string) => this.collection(name) } as unknown as Db;
    return new MongoReadStore(client, db, { retryPauseMs: 0, ...options });
  }

  count(op: string): number {
    return this.calls.filter((c) => c.op === op).length;
  }
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
}

describe('MongoReadStore (fakes of the driver)', () => {
  describe('needs a server that runs transactions', () => {
    const admin = (hello: Document): Pick<Db, 'command'> => ({ command: async () => hello });

    it('refuses a standalone server, saying how to start a one-node replica set', async () => {
      const err = await rejection(assertTransactions(admin({ isWritablePrimary: true, maxWireVersion: 21, ok: 1 })));
      expect(err).to.be.instanceOf(Error);
      const message = (err as Error).message;
      expect(message).to.match(/refusing to start the MongoDB read store: MongoDB is a standalone server/);
      expect(message).to.contain('--replSet rs0');
      expect(message).to.contain('rs.initiate()');
      expect(message).to.contain('?replicaSet=rs0');
    });

    it('refuses a member started with --replSet whose set is not initiated', async () => {
      const err = await rejection(assertTransactions(admin({ isWritablePrimary: false, isreplicaset: true, ok: 1 })));
      expect((err as Error).message).to.match(/not initiated: run rs\.initiate\(\) once/);
    });

    it('accepts a replica set member and a mongos', async () => {
      await assertTransactions(admin({ isWritablePrimary: true, setName: 'rs0', ok: 1 }));
      await assertTransactions(admin({ isWritablePrimary: true, msg: 'isdbgrid', ok: 1 }));
      expect(transactionsUnsupported({ setName: 'rs0' })).to.equal(null);
    });
  });

  describe('a projection (`fields`)', () => {
    it('is sent with find as `{_id: 1, field: 1, …}`; a field the document lacks comes back as null, BSON numbers as numbers', async () => {
      const driver = new FakeDriver();
      const store = driver.store();
      const { Long } = await import('mongodb');
      driver.docs.set(
        'ledger_movements',
        new Map<string, Document>([
          [
            'm1',
            { _id: 'm1', recorded_at: 't1', position: Long.fromNumber(7), csv: 'a,b\r\n', net_delta: '5', _text: 'x' },
          ],
          ['m2', { _id: 'm2', recorded_at: 't2', position: 8, net_delta: '6' }],
        ]),
      );
      const rows = await store.find('ledger_movements', {
        where: { partner_id: 'p' },
        orderBy: [{ field: 'recorded_at' }, { field: 'position' }],
        fields: ['recorded_at', 'position', 'csv'],
      });
      expect(rows).to.deep.equal([
        { _id: 'm1', recorded_at: 't1', position: 7, csv: 'a,b\r\n' },
        { _id: 'm2', recorded_at: 't2', position: 8, csv: null },
      ]);
      const call = driver.calls.find((c) => c.op === 'find')!;
      expect((call.detail as Document).projection).to.deep.equal({ _id: 1, recorded_at: 1, position: 1, csv: 1 });
      // Without `fields` the whole document is read, as before.
      await store.find('ledger_movements', { where: { partner_id: 'p' } });
      expect((driver.calls.filter((c) => c.op === 'find')[1].detail as Document).projection).to.equal(undefined);
      let error: unknown;
      try {
        await store.find('ledger_movements', { fields: ['a.b'] });
      } catch (err) {
        error = err;
      }
      expect(error).to.be.instanceOf(RangeError);
    });
  });

  describe('an ungrouped sum over no documents', () => {
    it('is one row of zeros although $group outputs nothing; a grouped one is no rows', async () => {
      const driver = new FakeDriver();
      const store = driver.store();
      driver.aggregateRows = [];
      expect(await store.sum('orders', { where: { store: 'none' }, fields: ['amount', 'fee'] })).to.deep.equal([
        { key: null, count: 0, sums: { amount: 0n, fee: 0n } },
      ]);
      expect(await store.sum('orders', { groupBy: 'store', fields: ['amount'] })).to.deep.equal([]);
      driver.aggregateRows = [{ _id: null, count: 2, s0: 5 }];
      expect(await store.sum('orders', { fields: ['amount'] })).to.deep.equal([
        { key: null, count: 2, sums: { amount: 5n } },
      ]);
    });
  });

  describe('transient transaction errors', () => {
    it('runs the unit again, in a new transaction, when a write meets a TransientTransactionError', async () => {
      const driver = new FakeDriver();
      const store = driver.store();
      driver.bulkFailures = [transientError()];
      let runs = 0;
      const result = await store.transact(async (tx) => {
        runs += 1;
        await tx.put('products', { _id: 'p1', v: runs });
        await tx.setCheckpoint('products', 7);
        return `run ${runs}`;
      });
      expect(result).to.equal('run 2');
      expect(runs).to.equal(2);
      expect(driver.count('startTransaction')).to.equal(2);
      expect(driver.count('abortTransaction')).to.equal(1);
      expect(driver.count('commitTransaction')).to.equal(1);
      expect(driver.count('endSession')).to.equal(2);
      expect(driver.docs.get('products')!.get('p1')).to.deep.equal({ _id: 'p1', v: 2 });
      expect(driver.docs.get('checkpoints')!.get('products')).to.deep.equal({ _id: 'products', position: 7 });
    });

    it('runs it again also when the work caught the error and threw its own (the runner wraps a projector error)', async () => {
      const driver = new FakeDriver();
      const store = driver.store();
      driver.bulkFailures = [null, transientError()];
      let runs = 0;
      await store.transact(async (tx) => {
        runs += 1;
        for (let i = 0; i < FLUSH_OPS; i++) await tx.put('a', { _id: `x${i}` });
        try {
          for (let i = 0; i < FLUSH_OPS; i++) await tx.put('a', { _id: `y${i}` });
        } catch (err) {
          throw new Error(`projector failed: ${(err as Error).message}`, { cause: err });
        }
      });
      expect(runs).to.equal(2);
      expect(driver.docs.get('a')!.size).to.equal(2 * FLUSH_OPS);
    });

    it('runs it again when the commit fails with a TransientTransactionError; commits again when the outcome is unknown', async () => {
      const driver = new FakeDriver();
      const store = driver.store();
      driver.commitFailures = [transientError('NoSuchTransaction'), unknownCommit(), unknownCommit()];
      let runs = 0;
      await store.transact(async (tx) => {
        runs += 1;
        await tx.put('a', { _id: 'k' });
      });
      expect(runs).to.equal(2);
      expect(driver.count('commitTransaction')).to.equal(4);
    });

    it('does not run it again after any other error, and rethrows that error itself', async () => {
      const driver = new FakeDriver();
      const store = driver.store();
      const other = new MongoServerError({ errmsg: 'bad value', code: 2 });
      driver.bulkFailures = [other];
      let runs = 0;
      const err = await rejection(
        store.transact(async (tx) => {
          runs += 1;
          await tx.put('a', { _id: 'k' });
        }),
      );
      expect(err).to.equal(other);
      expect(runs).to.equal(1);
      const mine = new Error('projector failed');
      expect(await rejection(store.transact(async () => Promise.reject(mine)))).to.equal(mine);
      expect(driver.count('commitTransaction')).to.equal(0);
    });

    it('gives up after `unitAttempts` runs with the last transient error', async () => {
      const driver = new FakeDriver();
      const store = driver.store({ unitAttempts: 3 });
      const errors = [transientError('one'), transientError('two'), transientError('three'), transientError('four')];
      driver.bulkFailures = [...errors];
      let runs = 0;
      const err = await rejection(
        store.transact(async (tx) => {
          runs += 1;
          await tx.put('a', { _id: 'k' });
        }),
      );
      expect(runs).to.equal(3);
      expect(err).to.equal(errors[2]);
    });
  });

  describe('writes of a unit', () => {
    it(`go as ordered bulk writes of at most ${FLUSH_OPS}, sent before any read of the unit, in order across collections`, async () => {
      const driver = new FakeDriver();
      const store = driver.store();
      await store.transact(async (tx) => {
        for (let i = 0; i < 2500; i++) await tx.put('big', { _id: `d${i}`, v: i });
        await tx.put('other', { _id: 'o1' });
        await tx.delete('big', 'd0');
        expect(await tx.get('big', 'd0')).to.equal(null);
        expect(await tx.get('other', 'o1')).to.deep.equal({ _id: 'o1' });
        await tx.put('big', { _id: 'd0', v: 'again' });
        await tx.setCheckpoint('big', 3);
      });
      const writes = driver.calls.filter(
        (c) => c.op === 'bulkWrite' || c.op === 'findOne' || c.op === 'updateOne' || c.op === 'commitTransaction',
      );
      expect(
        writes.map((c) => `${c.op}:${c.collection ?? ''}:${(c.detail as { size?: number } | undefined)?.size ?? ''}`),
      ).to.deep.equal([
        'bulkWrite:big:1000',
        'bulkWrite:big:1000',
        'bulkWrite:big:500',
        'bulkWrite:other:1',
        'bulkWrite:big:1',
        'findOne:big:',
        'findOne:other:',
        'bulkWrite:big:1',
        'updateOne:checkpoints:',
        'commitTransaction::',
      ]);
      expect(
        driver.calls
          .filter((c) => c.op === 'bulkWrite')
          .every(
            (c) =>
              (c.detail as { ordered: boolean; session: boolean }).ordered &&
              (c.detail as { session: boolean }).session,
          ),
      ).to.equal(true);
      expect(driver.docs.get('big')!.get('d0')).to.deep.equal({ _id: 'd0', v: 'again' });
    });

    it('refuses a document larger than MongoDB stores at its put (so its own event fails, not a later read)', async () => {
      const driver = new FakeDriver();
      const store = driver.store();
      const err = await rejection(
        store.transact((tx) => tx.put('big', { _id: 'huge', text: 'x'.repeat(16 * 1024 * 1024) })),
      );
      expect((err as Error).message).to.match(/huge is \d+ bytes as BSON; MongoDB stores at most 16777216/);
      expect(driver.count('bulkWrite')).to.equal(0);
    });
  });

  describe('drop', () => {
    it('drops the collection with its indexes, a missing one quietly, and reports other failures', async () => {
      const driver = new FakeDriver();
      const store = driver.store();
      await store.drop('products__g1');
      driver.dropFailures = [new MongoServerError({ errmsg: 'ns not found', code: 26, codeName: 'NamespaceNotFound' })];
      await store.drop('products__g2');
      const denied = new MongoServerError({ errmsg: 'not authorized', code: 13 });
      driver.dropFailures = [denied];
      expect(await rejection(store.drop('products__g3'))).to.equal(denied);
      expect(driver.calls.map((c) => `${c.op}:${c.collection}`)).to.deep.equal([
        'drop:products__g1',
        'drop:products__g2',
        'drop:products__g3',
      ]);
    });
  });
});
