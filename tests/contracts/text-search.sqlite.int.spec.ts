import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { SqliteReadStore } from '../../infra/adapters/sqlite/read-store.js';
import { ftsModuleArgs } from '../../infra/adapters/sqlite/read-store-sql.js';
import { textSearchContract } from './text-search-contract.js';

const dirs: string[] = [];
after(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));
textSearchContract('SQLite FTS5', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-text-'));
  dirs.push(dir);
  return SqliteReadStore.open({ path: path.join(dir, 'read.db'), sweepIntervalMs: 0 });
});

describe('SQLite text search: which documents a bounded search keeps', () => {
  it('documents whose first text field holds every word come before the others, whatever their order in the index', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-text-'));
    dirs.push(dir);
    const store = SqliteReadStore.open({ path: path.join(dir, 'read.db'), sweepIntervalMs: 0 });
    try {
      await store.ensureCollections([{ name: 'texts', indexes: [], text: ['title', 'other'] }]);
      await store.transact(async (tx) => {
        // Written first, so first in the index: the words only partly (or not at all) in the title.
        await tx.put('texts', { _id: 'o1', title: 'Caneca', other: 'Café Azul' });
        await tx.put('texts', { _id: 'o2', title: 'Café', other: 'azulejo' });
        await tx.put('texts', { _id: 'o3', title: 'Xícara', other: 'café azul' });
        await tx.put('texts', { _id: 't1', title: 'Café Azul', other: '' });
        await tx.put('texts', { _id: 't2', title: 'café azulado', other: 'Marca' });
      });
      const ids = async (words: string[], limit: number) =>
        (await store.textSearch('texts', { words, prefixLast: true, limit })).map((d) => d._id);
      expect((await ids(['cafe', 'azul'], 2)).sort()).to.deep.equal(['t1', 't2']);
      const three = await ids(['cafe', 'azul'], 3);
      expect(three.slice(0, 2).sort()).to.deep.equal(['t1', 't2']);
      expect(three[2]).to.equal('o1'); // then the others in the index's order

      expect(new Set(await ids(['cafe', 'azul'], 10))).to.deep.equal(new Set(['o1', 'o2', 'o3', 't1', 't2']));
      expect(await ids(['cafe', 'azul'], 10)).to.have.length(5);
      expect(await ids(['cafe', 'azulado'], 1)).to.deep.equal(['t2']);
    } finally {
      await store.close();
    }
  });
});

describe('SQLite text index declared over documents already stored', () => {
  it('takes in every document, in several units, and the writes made between those units as they stand', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-text-'));
    dirs.push(dir);
    const store = SqliteReadStore.open({ path: path.join(dir, 'read.db'), sweepIntervalMs: 0 });
    try {
      const n = 45_000; // more rows than one unit of the fill takes (20,000)
      await store.ensureCollections([{ name: 'texts', indexes: [] }]);
      await store.transact(async (tx) => {
        for (let i = 0; i < n; i++) await tx.put('texts', { _id: `d${i}`, title: `word${i} common`, other: '' });
      });
      const declared = store.ensureCollections([{ name: 'texts', indexes: [], text: ['title', 'other'] }]);
      // Queued behind the declaration's first unit: a row the fill has not reached yet is changed, one is removed,
      // one is added.
      const changed = store.transact(async (tx) => {
        await tx.put('texts', { _id: 'd44000', title: 'renamed', other: '' });
        await tx.delete('texts', 'd44001');
        await tx.put('texts', { _id: 'late', title: 'late word', other: '' });
      });
      await Promise.all([declared, changed]);
      const ids = async (word: string) =>
        (await store.textSearch('texts', { words: [word], prefixLast: false, limit: 10 })).map((d) => d._id);
      for (const i of [0, 19_999, 20_000, 20_001, 39_999, 40_000, 43_999])
        expect(await ids(`word${i}`), `word${i}`).to.deep.equal([`d${i}`]);
      expect(await ids('word44000')).to.deep.equal([]);
      expect(await ids('renamed')).to.deep.equal(['d44000']);
      expect(await ids('word44001')).to.deep.equal([]);
      expect(await ids('late')).to.deep.equal(['late']);
      expect(await ids('common')).to.have.length(10);
    } finally {
      await store.close();
    }
  });

  it('goes on at the next start with a fill cut short (a crash between two units)', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-text-'));
    dirs.push(dir);
    const file = path.join(dir, 'read.db');
    const spec = { name: 'texts', indexes: [], text: ['title', 'other'] };
    let store = SqliteReadStore.open({ path: file, sweepIntervalMs: 0 });
    await store.ensureCollections([{ name: 'texts', indexes: [] }]);
    await store.transact(async (tx) => {
      for (let i = 0; i < 30_000; i++) await tx.put('texts', { _id: `d${i}`, title: `word${i}`, other: '' });
    });
    await store.ensureCollections([spec]);
    await store.close();
    // What a crash after the first unit leaves: the first 20,000 rows in the index and the mark saying so.
    const raw = new Database(file);
    raw.prepare('DELETE FROM fts_texts WHERE rowid > 20000').run();
    raw.prepare("INSERT INTO checkpoints (name, position) VALUES ('text-index-fill:texts', 20000)").run();
    raw.close();
    store = SqliteReadStore.open({ path: file, sweepIntervalMs: 0 });
    try {
      const ids = async (word: string) =>
        (await store.textSearch('texts', { words: [word], prefixLast: false, limit: 10 })).map((d) => d._id);
      expect(await ids('word29999'), 'before the next start').to.deep.equal([]);
      await store.ensureCollections([spec]);
      for (const i of [0, 19_999, 20_000, 29_999]) expect(await ids(`word${i}`)).to.deep.equal([`d${i}`]);
    } finally {
      await store.close();
    }
  });
});

describe('SQLite text search: an index made with other options', () => {
  it('is made again at ensureCollections with every document, and keeps following writes', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-text-'));
    dirs.push(dir);
    const file = path.join(dir, 'read.db');
    const spec = { name: 'texts', indexes: [], text: ['title', 'other'] };
    let store = SqliteReadStore.open({ path: file, sweepIntervalMs: 0 });
    await store.ensureCollections([spec]);
    await store.transact(async (tx) => {
      await tx.put('texts', { _id: 'a', title: 'Cafeteira elétrica', other: 'Marca' });
      await tx.put('texts', { _id: 'b', title: 'Chaleira', other: 'inox' });
    });
    await store.close();
    // The index as an older version made it (a prefix index of 3 characters only), holding one of the documents.
    const old = new Database(file);
    old.exec('DROP TABLE "fts_texts"');
    old.exec(`CREATE VIRTUAL TABLE "fts_texts" USING fts5(t_title, t_other, tokenize = 'unicode61', prefix = '3')`);
    old.exec(
      `INSERT INTO "fts_texts" (rowid, t_title, t_other) SELECT rowid, 'Chaleira', 'inox' FROM coll_texts WHERE _id = 'b'`,
    );
    old.close();

    store = SqliteReadStore.open({ path: file, sweepIntervalMs: 0 });
    try {
      await store.ensureCollections([spec]);
      const ids = async (words: string[]) =>
        (await store.textSearch('texts', { words, prefixLast: true, limit: 10 })).map((d) => d._id).sort();
      expect(await ids(['eletr'])).to.deep.equal(['a']); // folded (the old index kept the accent) and re-indexed
      expect(await ids(['inox'])).to.deep.equal(['b']);
      await store.transact((tx) => tx.put('texts', { _id: 'c', title: 'Cafeteira italiana', other: '' }));
      expect(await ids(['cafet'])).to.deep.equal(['a', 'c']);
      const check = new Database(file, { readonly: true });
      const sql = check.prepare("SELECT sql FROM sqlite_master WHERE name = 'fts_texts'").pluck().get() as string;
      check.close();
      expect(sql.endsWith(ftsModuleArgs(spec.text))).to.equal(true);
    } finally {
      await store.close();
    }
  });
});
