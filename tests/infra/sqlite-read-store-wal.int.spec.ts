/**
 * The read store's write-ahead log stays bounded (`walBoundBytes`): a reader on an old snapshot keeps SQLite from
 * starting the log over, so the file grows past the bound while it reads; once it is done, later units of work start
 * the log over and the file is truncated back under the bound, instead of keeping its largest size on disk.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { expect } from 'chai';
import { SqliteReadStore } from '../../infra/adapters/sqlite/read-store.js';
import { removeDir, until } from '../support/deadline.js';

const BOUND = 256 * 1024;
const TEXT = 'x'.repeat(4000);

describe('SQLite read store: the write-ahead log stays bounded', function () {
  this.timeout(30_000);
  let dir: string;
  let file: string;
  let store: SqliteReadStore;
  let reader: Database.Database;
  const walSize = () => fs.statSync(`${file}-wal`).size;

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-wal-'));
    file = path.join(dir, 'read.db');
    store = SqliteReadStore.open({ path: file, sweepIntervalMs: 0, walBoundBytes: BOUND });
    await store.ensureCollections([{ name: 'things', indexes: [] }]);
    reader = new Database(file, { readonly: true });
  });
  afterEach(async () => {
    reader.close();
    await store.close();
    await removeDir(dir);
  });

  it('grows past the bound while a reader holds an old snapshot, and is truncated under it once the reader is done', async () => {
    await store.transact(async (tx) => tx.put('things', { _id: 'first', text: TEXT }));
    reader.exec('BEGIN');
    expect(reader.prepare('SELECT count(*) AS n FROM coll_things').get()).to.deep.equal({ n: 1 });
    let written = 0;
    // One document a unit, each on pages of its own: the log passes four times its bound with the reader on it.
    while (walSize() <= 4 * BOUND) {
      written += 1;
      await store.transact(async (tx) => tx.put('things', { _id: `t${written}`, text: TEXT }));
    }
    expect(
      reader.prepare('SELECT count(*) AS n FROM coll_things').get(),
      'the reader keeps its snapshot',
    ).to.deep.equal({ n: 1 });
    reader.exec('COMMIT');
    let n = 0;
    await until(
      async () => {
        n += 1;
        await store.transact(async (tx) => tx.put('things', { _id: `after${n % 8}`, text: TEXT }));
        return walSize() <= BOUND;
      },
      20_000,
      'the log under its bound',
      20,
    );
    expect(await store.count('things')).to.equal(1 + written + Math.min(n, 8));
  });
});
