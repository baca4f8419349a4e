import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { ManualClock } from '../../shared-schema/ports/clock.js';
import { SqliteReadStore, type SqliteReadStoreOptions } from '../../infra/adapters/sqlite/read-store.js';
import { readStoreContract } from './read-store-contract.js';
import { indexName, narrowedByKeyset } from '../../infra/adapters/sqlite/read-store-sql.js';
import { until } from '../support/deadline.js';
import { LEDGER, LEDGER_COLLECTIONS, csvLine, type MovementDoc } from '../../shared-schema/read-models/ledger.js';
import { closingCsv } from '../../query-api/ledger.js';

function tempDir(): { dir: string; remove: () => void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'read-store-'));
  return { dir, remove: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

readStoreContract('sqlite', async () => {
  const { dir, remove } = tempDir();
  const file = path.join(dir, 'read.db');
  const store = SqliteReadStore.open({ path: file, sweepIntervalMs: 0 });
  const { default: Database } = await import('better-sqlite3');
  const schema = new Database(file, { readonly: true });
  return {
    store,
    cleanup: async () => {
      schema.close();
      await store.close();
      remove();
    },
    inspect: {
      async collection(name: string) {
        const table = `coll_${name}`;
        const count = (type: string) =>
          (
            schema
              .prepare(
                "SELECT COUNT(*) AS n FROM sqlite_master WHERE type = ? AND tbl_name = ? AND name NOT LIKE 'sqlite_autoindex_%'",
              )
              .get(type, table) as { n: number }
          ).n;
        return { exists: count('table') === 1, indexes: count('index') };
      },
    },
  };
});

describe('SqliteReadStore', () => {
  let dir: string;
  let remove: () => void;
  const opened: SqliteReadStore[] = [];
  const open = (options: Partial<SqliteReadStoreOptions> = {}): SqliteReadStore => {
    const store = SqliteReadStore.open({ path: path.join(dir, 'read.db'), sweepIntervalMs: 0, ...options });
    opened.push(store);
    return store;
  };
  beforeEach(() => ({ dir, remove } = tempDir()));
  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
    remove();
  });

  it('keeps documents and checkpoints across close and reopen', async () => {
    const first = open({ synchronous: 'FULL' });
    await first.ensureCollections([{ name: 'orders', indexes: [['store_id', 'paid_at']] }]);
    await first.transact(async (tx) => {
      await tx.put('orders', { _id: 'o1', store_id: 's1', paid_at: '2024-05-01T10:00:00.000Z', lines: [{ sku: 'a' }] });
      await tx.setCheckpoint('orders', 17);
    });
    await first.insertIfAbsent('orders', { _id: 'o2', store_id: 's1', paid_at: '2024-05-02T10:00:00.000Z' });
    await first.close();

    const second = open();
    expect(await second.getCheckpoint('orders')).to.equal(17);
    expect(await second.get('orders', 'o1')).to.deep.equal({
      _id: 'o1',
      store_id: 's1',
      paid_at: '2024-05-01T10:00:00.000Z',
      lines: [{ sku: 'a' }],
    });
    expect(await second.count('orders', { store_id: 's1' })).to.equal(2);
  });

  it('a second store on the same file (another process) reads what the first commits', async () => {
    const writer = open();
    const reader = open();
    await writer.ensureCollections([{ name: 'stores', indexes: [] }]);
    await writer.transact(async (tx) => {
      await tx.put('stores', { _id: 's1', name: 'Loja' });
      expect(await reader.get('stores', 's1')).to.equal(null);
    });
    expect(await reader.get('stores', 's1')).to.deep.equal({ _id: 's1', name: 'Loja' });
  });

  it('units from two processes on the same file serialize through the file lock', async () => {
    const file = path.join(dir, 'read.db');
    const store = open();
    await store.ensureCollections([{ name: 'counters', indexes: [] }]);
    await store.insertIfAbsent('counters', { _id: 'n', v: 0 });
    let childDone = false;
    const child = runIncrements(file, 40).finally(() => (childDone = true));
    let mine = 0;
    while (!childDone) {
      await increment(store, 1);
      mine += 1;
      await new Promise((resolve) => setTimeout(resolve, 1)); // leave the lock free for a moment, as projectors do
    }
    await child;
    expect(mine).to.be.greaterThan(0);
    expect(await store.get('counters', 'n')).to.deep.equal({ _id: 'n', v: 40 + mine });
  });

  it('sums integers up to about 1e18 exactly', async () => {
    const store = open();
    await store.ensureCollections([{ name: 'big', indexes: [] }]);
    await store.transact(async (tx) => {
      await tx.put('big', { _id: 'a', v: 9e17 });
      await tx.put('big', { _id: 'b', v: 9e17 });
      await tx.put('big', { _id: 'c', v: 123 });
    });
    const [row] = await store.sum('big', { fields: ['v'] });
    expect(row.sums.v).to.equal(1_800_000_000_000_000_123n);
  });

  it('the main query shapes search an index instead of scanning the table', async () => {
    const store = open();
    await store.ensureCollections([
      { name: 'clicks', indexes: [['partner_id', 'at', 'store_id'], ['store_id']] },
      { name: 'orders', indexes: [['partner_id', 'paid_at']] },
    ]);
    const page = { where: { partner_id: 'p1', at: { gte: '2024-01-01', lt: '2024-02-01' } }, limit: 50 };
    const asc = { ...page, orderBy: [{ field: 'at' }, { field: 'store_id' }] };
    const plans: string[][] = [
      store.explain('clicks', { find: asc }),
      store.explain('clicks', { find: { ...asc, after: ['2024-01-05T00:00:00Z', 's1', 'c9'] } }),
      store.explain('clicks', {
        find: { where: { partner_id: 'p1' }, orderBy: [{ field: 'at', dir: 'desc' }], after: ['x', 'c9'] },
      }),
      store.explain('clicks', { find: { where: { store_id: { in: ['s1', 's2'] } } } }),
      store.explain('clicks', { find: { where: { _id: 'c1' } } }),
      store.explain('clicks', { count: { partner_id: 'p1' } }),
      store.explain('orders', {
        sum: { where: { partner_id: 'p1', paid_at: { gte: 'a', lt: 'b' } }, fields: ['amount'] },
      }),
    ];
    for (const plan of plans) {
      expect(plan.join(' | ')).to.match(/^SEARCH coll_\w+ USING (COVERING )?(INDEX|PRIMARY KEY)/);
      expect(plan.join(' | ')).not.to.match(/SCAN coll_/);
    }
    // Ascending pages are read straight off the index, with no sort at all.
    expect(plans[0].join(' | ')).not.to.match(/TEMP B-TREE/);
    expect(plans[1].join(' | ')).not.to.match(/TEMP B-TREE/);
    // Descending pages only sort rows that tie on the indexed key by _id. (A second statement reads the rows whose
    // `at` is null, which come last in descending order.)
    const secondStatement = plans[2].findIndex((line, i) => i > 0 && line.startsWith('SEARCH'));
    expect(secondStatement).to.be.greaterThan(0);
    expect(plans[2].slice(0, secondStatement).join(' | ')).to.match(/USE TEMP B-TREE FOR LAST TERM OF ORDER BY$/);
  });

  it("a page after a keyset starts its index range at the keyset's value when that implies the query's own bound, with the same rows", async () => {
    const window = { partner_id: 'p1', at: { gte: '2024-01-01', lt: '2024-02-01' } };
    const byAt = [{ field: 'at' }];
    // The keyset's value implies the window's start: the range starts at it.
    expect(narrowedByKeyset(window, byAt, ['2024-01-20', 'c5'])).to.deep.equal({
      partner_id: 'p1',
      at: { gte: '2024-01-20', lt: '2024-02-01' },
    });
    // It does not (a cursor before the window) or cannot be compared: the query is left as it is.
    expect(narrowedByKeyset(window, byAt, ['2023-12-31', 'c5'])).to.equal(window);
    expect(narrowedByKeyset(window, byAt, [7, 'c5'])).to.equal(window);
    expect(narrowedByKeyset({ at: { gt: '2024-01-20' } }, byAt, ['2024-01-20', 'c5'])).to.deep.equal({
      at: { gt: '2024-01-20' },
    });
    // Descending: the upper bound is the one the keyset implies.
    expect(narrowedByKeyset({ n: { gte: 1, lt: 100 } }, [{ field: 'n', dir: 'desc' }], [40, 'c5'])).to.deep.equal({
      n: { lte: 40, gte: 1 },
    });

    // Pages read with the narrowed ranges hold exactly the rows of one read, in both directions.
    const store = open();
    await store.ensureCollections([
      {
        name: 'ticks',
        indexes: [
          ['partner_id', 'at'],
          ['partner_id', 'n'],
        ],
      },
    ]);
    await store.transact(async (tx) => {
      for (let i = 0; i < 300; i++) {
        const day = String(1 + ((i * 7) % 40)).padStart(2, '0');
        const at = Number(day) > 31 ? `2024-02-${String(Number(day) - 31).padStart(2, '0')}` : `2024-01-${day}`;
        await tx.put('ticks', {
          _id: `t${String(i).padStart(3, '0')}`,
          partner_id: i % 3 ? 'p1' : 'p2',
          at,
          n: (i * 13) % 97,
        });
      }
    });
    for (const query of [
      { where: window, orderBy: byAt },
      { where: { partner_id: 'p1', n: { gt: 10, lte: 80 } }, orderBy: [{ field: 'n', dir: 'desc' as const }] },
      { where: { partner_id: 'p1', n: { gt: 10, lte: 80 } }, orderBy: [{ field: 'n' }] },
    ]) {
      const whole = (await store.find<{ _id: string }>('ticks', query)).map((d) => d._id);
      const paged: string[] = [];
      let after: (string | number)[] | undefined;
      for (;;) {
        const page = await store.find<{ _id: string } & Record<string, string | number>>('ticks', {
          ...query,
          after,
          limit: 7,
        });
        if (page.length === 0) break;
        paged.push(...page.map((d) => d._id));
        const last = page[page.length - 1];
        after = [last[query.orderBy[0].field], last._id];
      }
      expect(whole.length).to.be.greaterThan(20);
      expect(paged).to.deep.equal(whole);
    }
  });

  it('answers a filter or an order on an indexed or `filtered` field (own column) exactly as on the same field in the document only', async () => {
    const store = open();
    await store.ensureCollections([
      { name: 'indexed', indexes: [['v']] },
      { name: 'filtered', indexes: [], filtered: ['v'] },
      { name: 'plain', indexes: [] },
      { name: 'later', indexes: [] },
    ]);
    const values: unknown[] = [
      'b',
      'a',
      '',
      7,
      -2,
      2.5,
      1e21,
      true,
      false,
      null,
      undefined,
      { k: 1 },
      [1, 'x'],
      new Date('2024-01-02T03:04:05Z'),
      NaN,
    ];
    const docs = values.map((v, i) => ({ _id: `d${String(i).padStart(2, '0')}`, v, i }));
    for (const name of ['indexed', 'filtered', 'plain', 'later'])
      await store.transact(async (tx) => {
        for (const doc of docs) await tx.put(name, doc);
      });
    // Declared `filtered` once its documents are there: the column is filled from them.
    await store.ensureCollections([{ name: 'later', indexes: [], filtered: ['v'] }]);
    const ids = async (name: string, query: Parameters<SqliteReadStore['find']>[1]) =>
      (await store.find(name, query)).map((d) => d._id);
    const queries: Parameters<SqliteReadStore['find']>[1][] = [
      { orderBy: [{ field: 'v' }] },
      { orderBy: [{ field: 'v', dir: 'desc' }] },
      { orderBy: [{ field: 'v' }], after: [2.5, 'd05'] },
      { orderBy: [{ field: 'v', dir: 'desc' }], after: ['a', 'd01'], limit: 4 },
      { where: { v: true } },
      { where: { v: 1 } },
      { where: { v: null } },
      { where: { v: { gte: 0 } } },
      { where: { v: { lt: 'b' } } },
      { where: { v: { in: ['a', 7, null] } } },
      { where: { v: { ne: 'a' } } },
      { where: { v: '2024-01-02T03:04:05.000Z' } },
    ];
    for (const name of ['indexed', 'filtered', 'later']) {
      for (const query of queries)
        expect(await ids(name, query), `${name} ${JSON.stringify(query)}`).to.deep.equal(await ids('plain', query));
      expect(await store.count(name, { v: { gte: 0 } })).to.equal(await store.count('plain', { v: { gte: 0 } }));
    }
    // The field has a column of its own where declared (no JSON read to test it), and no index.
    const { default: Database } = await import('better-sqlite3');
    const check = new Database(path.join(dir, 'read.db'), { readonly: true });
    const columns = (table: string) =>
      (check.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).map((c) => c.name);
    expect(columns('coll_filtered')).to.include('f_v');
    expect(columns('coll_later')).to.include('f_v');
    expect(columns('coll_plain')).not.to.include('f_v');
    const indexes = check
      .prepare(
        "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = 'coll_filtered' AND sql IS NOT NULL",
      )
      .pluck()
      .get();
    check.close();
    expect(indexes).to.equal(0);
    // A replaced document moves in the index; a conditional replace and an insert-if-absent keep the column too.
    await store.transact(async (tx) => tx.put('indexed', { _id: 'd00', v: 'zz' }));
    expect(await ids('indexed', { where: { v: 'zz' } })).to.deep.equal(['d00']);
    expect(await ids('indexed', { where: { v: 'b' } })).to.deep.equal([]);
    expect(await store.replaceIf('indexed', { _id: 'd00', v: 'yy' }, { v: 'zz' })).to.equal(true);
    expect(await store.insertIfAbsent('indexed', { _id: 'new', v: 'yy' })).to.equal(true);
    expect(await ids('indexed', { where: { v: 'yy' } })).to.deep.equal(['d00', 'new']);
  });

  it('moves a file written with json_extract expression indexes to field columns, keeping every answer', async () => {
    const file = path.join(dir, 'read.db');
    const { default: Database } = await import('better-sqlite3');
    const old = new Database(file);
    old.pragma('journal_mode = WAL');
    old.exec(`CREATE TABLE coll_items (_id TEXT PRIMARY KEY, doc TEXT NOT NULL)`);
    old.exec(`CREATE INDEX ${indexName('items', ['store_id'])} ON coll_items (json_extract(doc, '$.store_id'), _id)`); // as earlier versions named it
    const insert = old.prepare('INSERT INTO coll_items (_id, doc) VALUES (?, ?)');
    insert.run('i1', JSON.stringify({ _id: 'i1', store_id: 's2', on: true }));
    insert.run('i2', JSON.stringify({ _id: 'i2', store_id: 's1', on: false }));
    insert.run('i3', JSON.stringify({ _id: 'i3', on: true }));
    old.close();

    const store = open();
    await store.ensureCollections([{ name: 'items', indexes: [['store_id'], ['on', 'store_id']] }]);
    expect((await store.find('items', { orderBy: [{ field: 'store_id' }] })).map((d) => d._id)).to.deep.equal([
      'i3',
      'i2',
      'i1',
    ]);
    expect(
      (await store.find('items', { where: { on: true }, orderBy: [{ field: 'store_id' }] })).map((d) => d._id),
    ).to.deep.equal(['i3', 'i1']);
    const plan = store.explain('items', { find: { where: { store_id: 's1' } } }).join(' | ');
    expect(plan).to.match(/USING (COVERING )?INDEX "?ix_items__store_id__\w+__c/);
    const check = new Database(file, { readonly: true });
    const indexes = (
      check.prepare("SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'coll_items'").all() as {
        sql: string | null;
      }[]
    ).map((r) => r.sql ?? '');
    check.close();
    expect(indexes.join('\n')).not.to.contain('json_extract');
  });

  it("upgrades a movements table written before the CSV lines: the column is added, the month's bytes are unchanged, the lines are read from the column", async () => {
    const store = open();
    const tenant = { partnerId: 'pt_UPGRADE', env: 'live' as const };
    const movement = (n: number): MovementDoc => {
      const at = new Date(Date.UTC(2026, 9, 10, 12, n)).toISOString();
      return {
        _id: `live:pt_UPGRADE:m:ev-${n}`,
        partner_id: tenant.partnerId,
        env: 'live',
        position: n,
        event_id: `ev-${n}`,
        store_id: 's"1',
        order_id: `o,${n}`,
        type: 'paid',
        occurred_at: at,
        recorded_at: at,
        net_delta: '100',
        known_delta: '10',
        expected_delta: n % 2 === 0 ? null : '10',
        net_balance: String(100 * n),
        known_balance: String(10 * n),
        store_net_balance: String(100 * n),
        store_known_balance: String(10 * n),
      };
    };
    const csv = async (page?: number) => {
      let text = '';
      for await (const chunk of closingCsv(store, tenant, '2026-10', page)) text += chunk;
      return text;
    };
    // The collection as a build before the lines declared it, holding movements without a line.
    await store.ensureCollections(LEDGER_COLLECTIONS.map(({ projected: _kept, ...spec }) => spec));
    await store.transact(async (tx) => {
      for (let n = 1; n <= 6; n++) await tx.put(LEDGER.movements, movement(n));
    });
    const before = await csv();
    await store.ensureCollections(LEDGER_COLLECTIONS);
    const { default: Database } = await import('better-sqlite3');
    const check = new Database(path.join(dir, 'read.db'), { readonly: true });
    const lines = () => check.prepare(`SELECT f_csv FROM coll_${LEDGER.movements} ORDER BY _id`).pluck().all();
    expect(lines()).to.deep.equal([null, null, null, null, null, null]);
    for (const page of [undefined, 1, 2, 4]) expect(await csv(page), `pages of ${page}`).to.equal(before);
    // Movements projected after the upgrade carry their line, in the column too.
    await store.transact(async (tx) => {
      for (let n = 4; n <= 6; n++) await tx.put(LEDGER.movements, { ...movement(n), csv: csvLine(movement(n)) });
    });
    expect(lines().filter((line) => line !== null)).to.have.length(3);
    check.close();
    for (const page of [undefined, 1, 2, 4]) expect(await csv(page), `mixed, pages of ${page}`).to.equal(before);
  });

  it('refuses collection and field names that are not plain identifiers, before any SQL', async () => {
    const store = open();
    await store.ensureCollections([{ name: 'ok', indexes: [] }]);
    await expectRejected(store.ensureCollections([{ name: 'Bad', indexes: [] }]), /invalid collection name/);
    await expectRejected(store.ensureCollections([{ name: 'x"; DROP TABLE checkpoints; --', indexes: [] }]), /invalid/);
    await expectRejected(store.find('ok', { where: { "a') OR 1=1 --": 1 } }), /invalid field name/);
    await expectRejected(store.find('ok', { orderBy: [{ field: 'a.b' }] }), /invalid field name/);
    await expectRejected(store.get('missing_one', 'x'), /unknown collection "missing_one"/);
  });

  it('refuses to call the store from inside its own unit instead of waiting forever (detectReentry)', async () => {
    const store = open({ detectReentry: true });
    await store.ensureCollections([{ name: 'keys', indexes: [] }]);
    await expectRejected(
      store.transact(async (tx) => {
        await tx.put('keys', { _id: 'a' });
        await store.insertIfAbsent('keys', { _id: 'b' });
      }),
      /inside its own unit/,
    );
    expect(await store.count('keys')).to.equal(0);
  });

  it('sweeps documents whose expires_at (ISO or epoch ms) has passed', async () => {
    const clock = new ManualClock(new Date('2024-06-01T12:00:00.000Z'));
    const store = open({ clock });
    await store.ensureCollections([{ name: 'idem', indexes: [], expires: true }]);
    await store.transact(async (tx) => {
      await tx.put('idem', { _id: 'iso-past', expires_at: '2024-06-01T11:59:59.999Z' });
      await tx.put('idem', { _id: 'iso-offset-past', expires_at: '2024-06-01T14:30:00+03:00' });
      await tx.put('idem', { _id: 'iso-future', expires_at: '2024-06-01T12:00:01Z' });
      await tx.put('idem', { _id: 'ms-past', expires_at: clock.now().getTime() - 1 });
      await tx.put('idem', { _id: 'ms-future', expires_at: clock.now().getTime() + 60_000 });
      await tx.put('idem', { _id: 'no-expiry' });
    });
    expect(await store.sweepExpired()).to.equal(3);
    expect((await store.find('idem')).map((d) => d._id)).to.deep.equal(['iso-future', 'ms-future', 'no-expiry']);
    clock.advance(60_001);
    expect(await store.sweepExpired()).to.equal(2);
    expect((await store.find('idem')).map((d) => d._id)).to.deep.equal(['no-expiry']);
  });

  it('sweeps on its own timer', async () => {
    const clock = new ManualClock(new Date('2024-06-01T12:00:00.000Z'));
    const store = open({ clock, sweepIntervalMs: 10 });
    await store.ensureCollections([{ name: 'holds', indexes: [], expires: true }]);
    await store.insertIfAbsent('holds', { _id: 'h', expires_at: '2024-06-01T12:00:05.000Z' });
    clock.advance(10_000);
    await until(async () => (await store.get('holds', 'h')) === null, 30_000, 'the expired document swept');
  });
});

/** Read-modify-write of counters/n in `times` units, each yielding to the event loop before it writes. */
async function increment(store: SqliteReadStore, times: number): Promise<void> {
  for (let i = 0; i < times; i++) {
    await store.transact(async (tx) => {
      const counter = (await tx.get('counters', 'n')) as { _id: string; v: number };
      await new Promise((resolve) => setImmediate(resolve));
      await tx.put('counters', { _id: 'n', v: counter.v + 1 });
    });
  }
}

/** The same increments from a child process (its own connections and locks). */
function runIncrements(file: string, times: number): Promise<void> {
  const storeModule = new URL('../../infra/adapters/sqlite/read-store.js', import.meta.url).href;
  const script = `
    const { SqliteReadStore } = await import(${JSON.stringify(storeModule)});
    const store = SqliteReadStore.open({ path: process.argv[1], sweepIntervalMs: 0 });
    for (let i = 0; i < ${times}; i++) {
      await store.transact(async (tx) => {
        const counter = await tx.get('counters', 'n');
        await new Promise((resolve) => setImmediate(resolve));
        await tx.put('counters', { _id: 'n', v: counter.v + 1 });
      });
    }
    await store.close();`;
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['--input-type=module', '-e', script, file], (err, _stdout, stderr) =>
      err ? reject(new Error(`child failed: ${stderr}`, { cause: err })) : resolve(),
    );
  });
}

async function expectRejected(promise: Promise<unknown>, message: RegExp): Promise<void> {
  let caught: unknown;
  try {
    await promise;
  } catch (err) {
    caught = err;
  }
  expect(caught, 'expected a rejection').to.be.instanceOf(Error);
  expect((caught as Error).message).to.match(message);
}
