/**
 * `yieldWhenBusy` (the main thread's read store beside the projection thread): a write that finds the write lock
 * held by another connection waits for it without stopping the event loop, then lands; a unit of work waits the
 * same way before it starts.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { expect } from 'chai';
import { SqliteReadStore } from '../../infra/adapters/sqlite/read-store.js';
import { removeDir } from '../support/deadline.js';

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('SQLite read store: waiting for another connection’s write lock (yieldWhenBusy)', function () {
  let dir: string;
  let store: SqliteReadStore;
  let other: Database.Database;

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-busy-'));
    store = SqliteReadStore.open({ path: path.join(dir, 'read.db'), yieldWhenBusy: true, sweepIntervalMs: 0 });
    await store.ensureCollections([{ name: 'things', indexes: [] }]);
    other = new Database(path.join(dir, 'read.db'));
  });
  afterEach(async () => {
    other.close();
    await store.close();
    await removeDir(dir);
  });

  it('keeps the event loop turning while another connection holds the lock, then writes', async () => {
    other.exec('BEGIN IMMEDIATE');
    let settled = false;
    const insert = store.insertIfAbsent('things', { _id: 'a', n: 1 }).finally(() => (settled = true));
    const unit = store.transact(async (tx) => tx.put('things', { _id: 'b', n: 2 }));
    for (let i = 0; i < 20; i++) await turn(); // the loop turns: a busy wait would have blocked here
    expect(settled).to.equal(false);
    other.exec('COMMIT');
    expect(await insert).to.equal(true);
    await unit;
    expect((await store.find('things')).map((d) => d._id)).to.deep.equal(['a', 'b']);
  });
});
