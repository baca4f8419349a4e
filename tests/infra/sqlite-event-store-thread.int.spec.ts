/** The SQLite event store with `writerThread`: groups committed by a worker thread, the same promises kept. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MessageChannel } from 'node:worker_threads';
import { expect } from 'chai';
import { SqliteEventStore } from '../../infra/adapters/sqlite/event-store.js';
import { WrongExpectedRevisionError, type NewEvent } from '../../shared-schema/ports/event-store.js';
import { checkWriterLog, runWriter } from '../support/sqlite-writer-process.js';
import { waitFor } from '../support/wait-for.js';

const ev = (type: string): NewEvent => ({ type, data: {}, metadata: { recorded_at: '2024-05-01T12:00:00.000Z' } });

describe('SqliteEventStore with a writer thread', function () {
  this.timeout(60_000);
  let dir: string;
  let dbPath: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sqlite-event-store-thread-'));
    dbPath = path.join(dir, 'events.db');
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('appends of one turn see each other in order, a conflicting one fails alone, and appends made meanwhile follow', async () => {
    const store = SqliteEventStore.open({ path: dbPath, writerThread: true });
    try {
      const heard: number[] = [];
      store.onAppended((position) => heard.push(position));
      const first = [
        store.appendToStream('order-1', [ev('A')], 'no_stream'),
        store.appendToStream('order-1', [ev('B'), ev('C')], 0),
        store.appendToStream('order-1', [ev('X')], 'no_stream'),
      ];
      // Queued while the first group is with the thread: they go as the next group, in order.
      await new Promise((resolve) => setImmediate(resolve));
      const second = [store.appendToStream('order-1', [ev('D')], 2), store.appendToStream('order-2', [ev('E')])];
      const results = await Promise.allSettled([...first, ...second]);
      expect(results.map((r) => r.status)).to.deep.equal([
        'fulfilled',
        'fulfilled',
        'rejected',
        'fulfilled',
        'fulfilled',
      ]);
      expect((results[2] as PromiseRejectedResult).reason).to.be.instanceOf(WrongExpectedRevisionError);
      expect((results[2] as PromiseRejectedResult).reason).to.include({
        stream: 'order-1',
        expected: 'no_stream',
        actual: 2,
      });
      expect((await store.readStream('order-1')).map((e) => e.type)).to.deep.equal(['A', 'B', 'C', 'D']);
      expect(heard[heard.length - 1]).to.equal(await store.headPosition());
    } finally {
      await store.close();
    }
  });

  it('its writer thread tells a commit signal of each commit that wrote events, and of no empty append', async () => {
    const store = SqliteEventStore.open({ path: dbPath, writerThread: true });
    const { port1, port2 } = new MessageChannel();
    const pending = new Int32Array(new SharedArrayBuffer(4));
    const arrived: unknown[] = [];
    port1.on('message', (m: unknown) => arrived.push(m));
    try {
      store.signalCommits({ port: port2, pending: pending.buffer });
      await store.appendToStream('order-1', [ev('A')]);
      await waitFor(() => arrived.length === 1, 'the first signal');
      // Not taken yet (the cell still set): the next commit sends nothing.
      await store.appendToStream('order-1', [ev('B')]);
      Atomics.store(pending, 0, 0); // taken
      // Empty appends (the head's barrier) write nothing: the thread leaves the cell alone. It handles one group after
      // another, so once the second has answered, whatever the first would send is sent.
      await store.recordedHead();
      await store.recordedHead();
      expect(Atomics.load(pending, 0)).to.equal(0);
      await store.appendToStream('order-2', [ev('C')]);
      await waitFor(() => arrived.length === 2, 'the second signal');
      expect(Atomics.load(pending, 0)).to.equal(1);
    } finally {
      port1.close();
      await store.close();
    }
  });

  it('with a bound on a group, splits the waiting appends into several groups, never one append, and keeps their order', async () => {
    const store = SqliteEventStore.open({ path: dbPath, writerThread: true, maxGroupEvents: 2 });
    try {
      const commits: number[] = [];
      store.onAppended((position) => commits.push(position));
      const appends = Array.from({ length: 12 }, (_, i) =>
        store.appendToStream(`order-${i % 3}`, [ev(`A${i}`), ev(`B${i}`), ev(`C${i}`)]),
      );
      const results = await Promise.all(appends);
      // Each append of 3 events is whole and its positions follow one another; the log keeps the call order.
      const all = await store.readAll();
      expect(all.map((e) => e.type)).to.deep.equal(
        Array.from({ length: 12 }, (_, i) => [`A${i}`, `B${i}`, `C${i}`]).flat(),
      );
      results.forEach((r, i) =>
        expect(all.slice(3 * i, 3 * i + 3).map((e) => e.position)).to.deep.equal([
          r.position - 2,
          r.position - 1,
          r.position,
        ]),
      );
      // Over the bound, each append went in a group of its own: one commit per append.
      expect(commits).to.have.length(12);
    } finally {
      await store.close();
    }
  });

  it('writes what is queued before close() returns, and refuses appends after', async () => {
    const store = SqliteEventStore.open({ path: dbPath, writerThread: true });
    const appends = Array.from({ length: 50 }, (_, i) => store.appendToStream(`order-${i % 5}`, [ev('A')]));
    await store.close();
    expect((await Promise.allSettled(appends)).every((r) => r.status === 'fulfilled')).to.equal(true);
    let refused: unknown;
    await store.appendToStream('order-1', [ev('B')]).catch((err: unknown) => (refused = err));
    expect(String(refused)).to.contain('closed');
    const again = SqliteEventStore.open({ path: dbPath });
    try {
      expect(await again.readAll()).to.have.length(50);
    } finally {
      await again.close();
    }
  });

  it('keeps every acknowledged append and never half an append when the writer process is SIGKILLed', async () => {
    const run = await runWriter({ dbPath, prefix: 'crash', streams: 300, killAfterAcks: 1500, writerThread: true });
    expect(run.signal, run.stderr).to.equal('SIGKILL');
    const store = SqliteEventStore.open({ path: dbPath });
    try {
      const lengths = checkWriterLog(await store.readAll());
      for (const [stream, revision] of run.acks)
        expect(lengths.get(stream) ?? 0, `${stream}@${revision}`).to.be.greaterThan(revision);
    } finally {
      await store.close();
    }
  });

  it('shares the file with a writer process on its own thread: conflicts are retried, nothing is lost', async () => {
    const runs = await Promise.all(
      [true, false].map((writerThread) =>
        runWriter({ dbPath, prefix: 'shared', streams: 20, maxAcks: 300, writerThread }),
      ),
    );
    for (const run of runs) expect(run.code, run.stderr).to.equal(0);
    const store = SqliteEventStore.open({ path: dbPath });
    try {
      const all = await store.readAll();
      checkWriterLog(all);
      expect(new Set(all.map((e) => (e.data as { pid: number }).pid)).size).to.equal(2);
    } finally {
      await store.close();
    }
  });
});
