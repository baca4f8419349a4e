/**
 * The history file of the SQLite deployments (infra/ops/history-file.ts): entries written by its thread are read
 * back newest first, survive a reopen, and the entries an earlier version kept in read.db are moved over once.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { SqliteHistoryFile } from '../../infra/ops/history-file.js';
import { HISTORY_COLLECTION, HISTORY_SPEC, readHistory, type HistoryEntry } from '../../infra/ops/history.js';
import { SqliteReadStore } from '../../infra/adapters/sqlite/read-store.js';

const entry = (n: number, partner = 'p_a', env: 'live' | 'test' = 'live'): HistoryEntry => ({
  _id: `h_01JC${String(n).padStart(22, '0')}`,
  kind: 'request',
  partner_id: partner,
  env,
  key_id: 'k_1',
  request_id: `req_${n}`,
  method: 'PUT',
  route: '/products/:sku',
  status: 200,
  outcome: null,
  refs: { sku: `sku-${n}` },
  fields: ['store_id', 'title'],
  at: new Date(Date.UTC(2026, 10, 21, 12, 0, n)).toISOString(),
});

describe('history file (SQLite, written by its own thread)', () => {
  let dir: string;
  let file: SqliteHistoryFile | undefined;
  const open = async () => (file = await SqliteHistoryFile.open({ path: path.join(dir, 'history.db') }));

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-history-'));
  });
  afterEach(async () => {
    await file?.close();
    file = undefined;
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('reads back what the thread wrote, newest first, per partner and environment, and keeps it across a reopen', async () => {
    const history = await open();
    await history.sink.append([entry(1), entry(2, 'p_b'), entry(3, 'p_a', 'test')]);
    await history.sink.append([entry(4)]);
    const page = await readHistory(history.reads, 'p_a', { limit: 10 });
    expect(page.entries.map((e) => e.request_id)).to.deep.equal(['req_4', 'req_3', 'req_1']);
    expect(
      (await readHistory(history.reads, 'p_a', { env: 'live', limit: 10 })).entries.map((e) => e.request_id),
    ).to.deep.equal(['req_4', 'req_1']);
    expect(page.entries[0]).to.deep.equal(entry(4));
    await history.close();
    const reopened = await open();
    expect((await readHistory(reopened.reads, 'p_b', { limit: 10 })).entries).to.deep.equal([entry(2, 'p_b')]);
  });

  it('never makes its directory again: a store that must find its file fails where the directory was removed', async () => {
    const gone = path.join(dir, 'removed');
    fs.mkdirSync(gone);
    fs.rmSync(gone, { recursive: true });
    expect(() => SqliteReadStore.open({ path: path.join(gone, 'history.db'), fileMustExist: true })).to.throw();
    expect(() => SqliteReadStore.open({ path: path.join(gone, 'read.db'), readOnly: true })).to.throw();
    expect(fs.existsSync(gone)).to.equal(false);
    // The writer thread opens the file its caller made: removed under it, the directory stays removed.
    const history = await SqliteHistoryFile.open({ path: path.join(gone, 'history.db') });
    fs.rmSync(gone, { recursive: true });
    await history.sink.append([entry(1)]).catch(() => undefined);
    await history.close();
    expect(fs.existsSync(gone)).to.equal(false);
  });

  it('moves the entries an earlier version kept in the read store, once, and drops that collection', async () => {
    const reads = SqliteReadStore.open({ path: path.join(dir, 'read.db'), sweepIntervalMs: 0 });
    try {
      const history = await open();
      expect(await history.adoptFrom(reads)).to.equal(0); // no such collection: nothing to move
      await reads.ensureCollections([HISTORY_SPEC]);
      const old = Array.from({ length: 2500 }, (_, i) => entry(i + 1));
      await reads.transact(async (tx) => {
        for (const e of old) await tx.put(HISTORY_COLLECTION, e);
      });
      expect(await history.adoptFrom(reads)).to.equal(2500);
      await expectRejection(reads.count(HISTORY_COLLECTION), /no such table|unknown collection/); // dropped, not only emptied
      expect(await history.reads.count(HISTORY_COLLECTION)).to.equal(2500);
      const newest = await readHistory(history.reads, 'p_a', { limit: 2 });
      expect(newest.entries).to.deep.equal([entry(2500), entry(2499)]);
      expect(await history.adoptFrom(reads)).to.equal(0);
    } finally {
      await reads.close();
    }
  });

  it('refuses appends once closed', async () => {
    const history = await open();
    await history.close();
    await expectRejection(history.sink.append([entry(1)]), /closed/);
  });
});

async function expectRejection(p: Promise<unknown>, message: RegExp): Promise<void> {
  try {
    await p;
  } catch (err) {
    expect(String(err)).to.match(message);
    return;
  }
  expect.fail('expected a rejection');
}
