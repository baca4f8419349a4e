/** What the SQLite adapter promises beyond the port: group commit, wake-ups, several connections and processes. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import Database from 'better-sqlite3';
import { SqliteEventStore } from '../../infra/adapters/sqlite/event-store.js';
import {
  WrongExpectedRevisionError,
  type NewEvent,
  type RecordedEvent,
} from '../../shared-schema/ports/event-store.js';
import { until, within } from '../support/deadline.js';
import { checkWriterLog, runWriter } from '../support/sqlite-writer-process.js';

const ev = (type: string): NewEvent => ({ type, data: {}, metadata: { recorded_at: '2024-05-01T12:00:00.000Z' } });

describe('SqliteEventStore', function () {
  this.timeout(30_000);
  let dir: string;
  let dbPath: string;
  const opened: SqliteEventStore[] = [];
  const open = (pollIntervalMs?: number) => {
    const store = SqliteEventStore.open({ path: dbPath, pollIntervalMs });
    opened.push(store);
    return store;
  };
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sqlite-event-store-'));
    dbPath = path.join(dir, 'events.db');
  });
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((s) => s.close()));
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('appends made in one turn to one stream see each other in order, and a conflicting one fails alone', async () => {
    const store = open();
    const results = await Promise.allSettled([
      store.appendToStream('order-1', [ev('A')], 'no_stream'),
      store.appendToStream('order-1', [ev('B'), ev('C')], 0),
      store.appendToStream('order-1', [ev('X')], 'no_stream'),
      store.appendToStream('order-1', [ev('D')], 2),
    ]);
    expect(results.map((r) => r.status)).to.deep.equal(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect((results[2] as PromiseRejectedResult).reason).to.be.instanceOf(WrongExpectedRevisionError);
    expect((await store.readStream('order-1')).map((e) => e.type)).to.deep.equal(['A', 'B', 'C', 'D']);
  });

  it('returns -1 and position 0 for an empty append to a missing stream, and refuses bad arguments', async () => {
    const store = open();
    expect(await store.appendToStream('order-none', [])).to.deep.equal({ nextRevision: -1, position: 0 });
    expect(await store.readStream('order-none')).to.deep.equal([]);
    for (const [stream, expected] of [
      ['', 'any'],
      ['order-1', -1],
      ['order-1', 1.5],
    ] as const) {
      const outcome = await store.appendToStream(stream, [ev('A')], expected).then(
        () => 'accepted',
        (e: Error) => e.name,
      );
      expect(outcome, `${stream} / ${expected}`).to.match(/TypeError|RangeError/);
    }
  });

  it('tells onAppended listeners the highest position after each commit, until they unsubscribe', async () => {
    const store = open();
    const heard: number[] = [];
    const unsubscribe = store.onAppended((position) => heard.push(position));
    const results = await Promise.all([
      store.appendToStream('a-1', [ev('A')]),
      store.appendToStream('b-1', [ev('B'), ev('C')]),
    ]);
    expect(heard).to.deep.equal([Math.max(...results.map((r) => r.position))]);
    unsubscribe();
    await store.appendToStream('a-1', [ev('D')]);
    expect(heard).to.have.length(1);
  });

  it('wakes a subscription on another connection by polling, and at once on notifyAppended()', async () => {
    const writer = open();
    const polling = open(10).subscribeToAll();
    const notified = open(600_000).subscribeToAll();
    await writer.appendToStream('order-1', [ev('A')]);
    expect((await within(polling[Symbol.asyncIterator]().next(), 5000, 'polled delivery')).value).to.include({
      type: 'A',
    });
    const next = notified[Symbol.asyncIterator]().next();
    opened[2].notifyAppended();
    expect((await within(next, 20_000, 'notified delivery')).value).to.include({ type: 'A' });
  });

  it('ends subscriptions when the store closes', async () => {
    const store = open();
    const pending = store.subscribeToAll()[Symbol.asyncIterator]().next();
    await store.close();
    expect((await within(pending, 20_000, 'next() after store close')).done).to.equal(true);
  });

  it('with two writer processes on one file, a subscriber sees every event once, in position order, with no gap', async () => {
    const store = open(5);
    const seen: RecordedEvent[] = [];
    const subscription = store.subscribeToAll();
    const loop = (async () => {
      for await (const event of subscription) seen.push(event);
    })();
    // 20 shared streams: the two processes conflict often and retry with the revision they re-read.
    const runs = await Promise.all(
      [1, 2].map(() => runWriter({ dbPath, prefix: 'shared', streams: 20, maxAcks: 300 })),
    );
    for (const run of runs) expect(run.code, run.stderr).to.equal(0);
    const all = await store.readAll();
    checkWriterLog(all);
    expect(new Set(all.map((e) => (e.data as { pid: number }).pid)).size).to.equal(2);
    await until(() => seen.length >= all.length, 10_000, 'subscriber caught up');
    await subscription.close();
    await within(loop, 20_000, 'subscription loop end');
    expect(seen.map((e) => e.id)).to.deep.equal(all.map((e) => e.id));
  });

  it('reads a page filtered by categories in one snapshot: a commit elsewhere between its reads skips nothing', async () => {
    const store = open();
    // White-box, to place the other connection's commits exactly between the read of `alpha` and that of `beta`
    // (between processes this happens only by chance, when the reader is descheduled there).
    const other = new Database(dbPath);
    const insert = other.prepare(
      "INSERT INTO events (id, stream, revision, category, type, data, metadata) VALUES (?, ?, 0, ?, 'T', '{}', '{}')",
    );
    const inner = store as unknown as { stmt: { readCategory: { all: (...args: unknown[]) => unknown[] } } };
    const readCategory = inner.stmt.readCategory;
    let committed = false;
    inner.stmt.readCategory = {
      all: (...args: unknown[]) => {
        if (args[0] === 'beta' && !committed) {
          committed = true;
          insert.run('evt-alpha', 'alpha-1', 'alpha'); // lower position, category already read
          insert.run('evt-beta', 'beta-1', 'beta'); // higher position, category not yet read
        }
        return readCategory.all(...args);
      },
    };
    try {
      const page = await store.readAll({ categories: ['alpha', 'beta'] });
      expect(committed).to.equal(true);
      const after = page.at(-1)?.position ?? 0;
      const rest = await store.readAll({ categories: ['alpha', 'beta'], afterPosition: after });
      expect([...page, ...rest].map((e) => e.stream)).to.deep.equal(['alpha-1', 'beta-1']);
    } finally {
      inner.stmt.readCategory = readCategory;
      other.close();
    }
  });
});
