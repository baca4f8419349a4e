/** command-api/aggregate-repository.ts on a real event store, with two repositories standing for two writer processes. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { AggregateRepository, ConflictsExhausted, retryOnConflict, type Aggregate } from '../../command-api/aggregate-repository.js';
import { WrongExpectedRevisionError } from '../../shared-schema/ports/event-store.js';
import { SqliteEventStore } from '../../infra/sqlite/event-store.js';
import type { EventStore, NewEvent } from '../../shared-schema/ports/event-store.js';

type Count = { count: number };
const counter: Aggregate<Count> = { name: 'counter', initial: () => ({ count: 0 }), evolve: (s) => ({ count: s.count + 1 }) };
const tick = (seen: number): NewEvent => ({ type: 'Ticked', data: { seen }, metadata: { recorded_at: '2026-01-01T00:00:00.000Z' } });
const always = (s: Count) => ({ events: [tick(s.count)], result: s.count });

describe('AggregateRepository (command handling loop)', () => {
  let dir: string;
  let store: SqliteEventStore;
  let reads: number;
  let counted: EventStore;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-repo-'));
    store = SqliteEventStore.open({ path: path.join(dir, 'events.db') });
    reads = 0;
    counted = Object.assign(Object.create(store) as EventStore, {
      readStream: (...args: Parameters<EventStore['readStream']>) => {
        reads++;
        return store.readStream(...args);
      },
    });
  });
  afterEach(async () => {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('loadFresh: callers asking in one turn share one read, and each sees every append made before it asked', async () => {
    const repo = new AggregateRepository(counted);
    const other = new AggregateRepository(store); // another writer process
    await other.handle('counter-f', counter, always);
    const before = reads;
    const together = await Promise.all(Array.from({ length: 20 }, () => repo.loadFresh('counter-f', counter)));
    expect(reads - before).to.equal(1);
    expect(together.map((l) => l.state.count)).to.deep.equal(Array(20).fill(1));
    await other.handle('counter-f', counter, always); // appended after the shared read: the next caller must see it
    expect((await repo.loadFresh('counter-f', counter)).state.count).to.equal(2);
    expect(reads - before).to.equal(2);
  });

  it('loadFresh: a caller never joins a read already made before it asked (slow, asynchronous store)', async () => {
    let release!: () => void;
    let slow = false;
    const gated = Object.assign(Object.create(store) as EventStore, {
      readStream: async (...args: Parameters<EventStore['readStream']>) => {
        reads++;
        const rows = await store.readStream(...args);
        if (slow) await new Promise<void>((resolve) => (release = resolve));
        return rows;
      },
    });
    const repo = new AggregateRepository(gated);
    const other = new AggregateRepository(store);
    slow = true;
    const first = repo.loadFresh('counter-g', counter);
    await new Promise((resolve) => setImmediate(resolve)); // the read has been made, its answer not yet arrived
    await new Promise((resolve) => setImmediate(resolve));
    await other.handle('counter-g', counter, always); // appended after the first read was made
    slow = false;
    const second = repo.loadFresh('counter-g', counter);
    release();
    expect((await first).state.count).to.equal(0);
    expect((await second).state.count).to.equal(1);
  });

  it('decides on its cached state without reading the stream once it holds it', async () => {
    const repo = new AggregateRepository(counted);
    await repo.handle('counter-1', counter, always);
    const before = reads;
    for (let i = 0; i < 5; i++) await repo.handle('counter-1', counter, always);
    expect(reads).to.equal(before);
    expect((await store.readStream('counter-1')).map((e) => (e.data as { seen: number }).seen)).to.deep.equal([0, 1, 2, 3, 4, 5]);
  });

  it('when another writer appended, the append conflicts, and it reads and decides again', async () => {
    const a = new AggregateRepository(counted);
    const b = new AggregateRepository(counted);
    await a.handle('counter-2', counter, always);
    await b.handle('counter-2', counter, always);
    await a.handle('counter-2', counter, always); // a's cache was stale: conflict, read, retry
    const r = await b.handle('counter-2', counter, always);
    expect(r.result).to.equal(3);
    expect((await store.readStream('counter-2')).map((e) => (e.data as { seen: number }).seen)).to.deep.equal([0, 1, 2, 3]);
  });

  it('checks a refusal or a no-op taken on the unread cache against the stream before answering', async () => {
    const a = new AggregateRepository(counted);
    const b = new AggregateRepository(counted);
    await b.load('counter-3', counter); // b caches "no stream"
    await a.handle('counter-3', counter, always);
    const refuseEmpty = (s: Count) => {
      if (s.count === 0) throw new Error('no such counter');
      return always(s);
    };
    expect((await b.handle('counter-3', counter, refuseEmpty)).result).to.equal(1);

    await a.handle('counter-3', counter, always); // count 3 now; b still holds 2
    const onlyWhenOdd = (s: Count) => (s.count % 2 === 1 ? always(s) : { events: [], result: -1 });
    expect((await b.handle('counter-3', counter, onlyWhenOdd)).result).to.equal(3);
    expect(await store.readStream('counter-3')).to.have.length(4);
  });

  it('two writer processes, 50 appends each at once on one stream: every one lands, none gives up', async () => {
    const a = new AggregateRepository(store);
    const b = new AggregateRepository(store);
    const results = await Promise.allSettled(
      Array.from({ length: 100 }, (_, i) => (i % 2 === 0 ? a : b).handle('counter-burst', counter, always)),
    );
    expect(results.filter((r) => r.status === 'rejected')).to.deep.equal([]);
    expect((await store.readStream('counter-burst')).map((e) => (e.data as { seen: number }).seen)).to.deep.equal(Array.from({ length: 100 }, (_, i) => i));
  });

  it('retryOnConflict: a lost race is taken again; after the last attempt a 503 with Retry-After, other errors at once', async () => {
    let calls = 0;
    const lostTwice = await retryOnConflict(async (n) => {
      calls++;
      if (n < 3) throw new WrongExpectedRevisionError('s', 0, 1);
      return n;
    });
    expect([lostTwice, calls]).to.deep.equal([3, 3]);

    calls = 0;
    const policy = { attempts: 4, baseDelayMs: 1, maxDelayMs: 1 };
    const exhausted = await retryOnConflict(async () => {
      calls++;
      throw new WrongExpectedRevisionError('s', 0, 1);
    }, policy).catch((err: unknown) => err);
    expect(exhausted).to.be.instanceOf(ConflictsExhausted);
    expect(calls).to.equal(4);
    const problem = exhausted as ConflictsExhausted;
    expect(problem.status).to.equal(503);
    expect(problem.headers['Retry-After']).to.equal('1');

    calls = 0;
    const other = await retryOnConflict(async () => {
      calls++;
      throw new Error('disk full');
    }).catch((err: unknown) => err);
    expect((other as Error).message).to.equal('disk full');
    expect(calls).to.equal(1);
  });

  it('keeps a stream used often in a small cache while others come and go, and forgets one left unused', async () => {
    const repo = new AggregateRepository(counted, 4);
    const readsOf = async (run: () => Promise<unknown>) => {
      const before = reads;
      await run();
      return reads - before;
    };
    expect(await readsOf(() => repo.handle('counter-hot', counter, always))).to.equal(1);
    let hotReads = 0;
    for (let i = 0; i < 20; i++) {
      await repo.handle(`counter-cold-${i}`, counter, always);
      hotReads += await readsOf(() => repo.handle('counter-hot', counter, always));
    }
    expect(hotReads).to.equal(0);
    expect(await readsOf(() => repo.handle('counter-cold-0', counter, always))).to.equal(1);
    expect((await repo.handle('counter-hot', counter, always)).result).to.equal(21);
  });
});
