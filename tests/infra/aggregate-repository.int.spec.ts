/** command-api/aggregate-repository.ts over infra/adapters/event-store/cached-state.ts on a real event store, with two repositories standing for two writer processes. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { AggregateRepository } from '../../command-api/aggregate-repository.js';
import { ConflictsExhausted, retryOnConflict } from '../../command-api/conflict-retry.js';
import { approximateBytes, CachedAggregateStates } from '../../infra/adapters/event-store/cached-state.js';
import { readAndFold } from '../../shared-schema/ports/aggregate-states.js';
import type { Decider, Decision } from '../../command-api/deciders/decider.js';
import { WrongExpectedRevisionError } from '../../shared-schema/ports/event-store.js';
import { SqliteEventStore } from '../../infra/adapters/sqlite/event-store.js';
import type { EventMetadata, EventStore } from '../../shared-schema/ports/event-store.js';

type Count = { count: number };
type Ticked = { type: 'Ticked'; data: { seen: number } };
/** A counter whose command is the decision itself, so that each test says how the decider behaves. */
type Policy = (s: Count) => Decision<Ticked, number>;
const counter: Decider<Count, Policy, Ticked, number> = {
  name: 'counter',
  initialState: () => ({ count: 0 }),
  evolve: (s) => ({ count: s.count + 1 }),
  decide: (policy, s) => policy(s),
};
const META: EventMetadata = { recorded_at: '2026-01-01T00:00:00.000Z' };
const tick = (seen: number): Ticked => ({ type: 'Ticked', data: { seen } });
const always: Policy = (s) => ({ events: [tick(s.count)], result: s.count });
/** A repository over the cached aggregate states, as the service wires it. */
const cachedRepo = (events: EventStore) => new AggregateRepository(new CachedAggregateStates(events));

describe('AggregateRepository (command handling loop)', () => {
  let dir: string;
  let store: SqliteEventStore;
  let reads: number;
  let counted: EventStore;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-repo-'));
    store = SqliteEventStore.open({ path: path.join(dir, 'events.db') });
    reads = 0;
    // A read is one call to the store, of one stream or of several at once.
    counted = Object.assign(Object.create(store) as EventStore, {
      readStream: (...args: Parameters<EventStore['readStream']>) => {
        reads++;
        return store.readStream(...args);
      },
      readStreams: (...args: Parameters<NonNullable<EventStore['readStreams']>>) => {
        reads++;
        return store.readStreams(...args);
      },
    });
  });
  afterEach(async () => {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('load: callers asking in one turn share one read, and each sees every append made before it asked', async () => {
    const repo = cachedRepo(counted);
    const other = cachedRepo(store); // another writer process
    await other.handle('counter-f', counter, always, META);
    const before = reads;
    const together = await Promise.all(Array.from({ length: 20 }, () => repo.load('counter-f', counter)));
    expect(reads - before).to.equal(1);
    expect(together.map((l) => l.state.count)).to.deep.equal(Array(20).fill(1));
    await other.handle('counter-f', counter, always, META); // appended after the shared read: the next caller must see it
    expect((await repo.load('counter-f', counter)).state.count).to.equal(2);
    expect(reads - before).to.equal(2);
  });

  it('load: a caller never joins a read already made before it asked (slow, asynchronous store)', async () => {
    let release!: () => void;
    let slow = false;
    const gated = Object.assign(Object.create(store) as EventStore, {
      readStreams: undefined, // one read per stream, each waiting at the gate
      readStream: async (...args: Parameters<EventStore['readStream']>) => {
        reads++;
        const rows = await store.readStream(...args);
        if (slow) await new Promise<void>((resolve) => (release = resolve));
        return rows;
      },
    });
    const repo = cachedRepo(gated);
    const other = cachedRepo(store);
    slow = true;
    const first = repo.load('counter-g', counter);
    await new Promise((resolve) => setImmediate(resolve)); // the read has been made, its answer not yet arrived
    await new Promise((resolve) => setImmediate(resolve));
    await other.handle('counter-g', counter, always, META); // appended after the first read was made
    slow = false;
    const second = repo.load('counter-g', counter);
    release();
    expect((await first).state.count).to.equal(0);
    expect((await second).state.count).to.equal(1);
  });

  it('decides on its cached state without reading the stream once it holds it', async () => {
    const repo = cachedRepo(counted);
    await repo.handle('counter-1', counter, always, META);
    const before = reads;
    for (let i = 0; i < 5; i++) await repo.handle('counter-1', counter, always, META);
    expect(reads).to.equal(before);
    expect((await store.readStream('counter-1')).map((e) => (e.data as { seen: number }).seen)).to.deep.equal([
      0, 1, 2, 3, 4, 5,
    ]);
  });

  it('an append through one fold brings the state another fold holds of the stream along: no read, no lost race', async () => {
    /** A second view of the same stream (as the cover check's fold is of a product's). */
    const tally = {
      name: 'tally',
      initialState: () => ({ sum: 0 }),
      evolve: (s: { sum: number }, e: Ticked) => ({ sum: s.sum + e.data.seen }),
    };
    let appends = 0;
    const watched = Object.assign(Object.create(counted) as EventStore, {
      appendToStream: (...args: Parameters<EventStore['appendToStream']>) => {
        appends++;
        return store.appendToStream(...args);
      },
    });
    const repo = cachedRepo(watched);
    await repo.handle('counter-v', counter, always, META); // the counter's state held at revision 0
    const seen = await repo.load('counter-v', tally);
    await repo.serialized('counter-v', () => repo.append('counter-v', tally, seen, [tick(99)], META));
    const [readsBefore, appendsBefore] = [reads, appends];
    expect((await repo.handle('counter-v', counter, always, META)).result).to.equal(2);
    expect([reads - readsBefore, appends - appendsBefore]).to.deep.equal([0, 1]);
    // A state the append did not start from is stale: it goes, and the next decision reads the stream.
    const other = cachedRepo(store); // another writer process
    await other.handle('counter-v', counter, always, META);
    const again = await repo.load('counter-v', tally); // revision 3; the counter's held state is still at 2
    await repo.serialized('counter-v', () => repo.append('counter-v', tally, again, [tick(7)], META));
    expect((await repo.handle('counter-v', counter, always, META)).result).to.equal(5);
    expect((await store.readStream('counter-v')).map((e) => (e.data as { seen: number }).seen)).to.deep.equal([
      0, 99, 2, 3, 7, 5,
    ]);
  });

  it('reads asked for in one turn are made together, each from its own revision', async () => {
    const repo = cachedRepo(counted);
    const other = cachedRepo(store); // another writer process
    await other.handle('counter-b1', counter, always, META);
    await repo.handle('counter-b2', counter, always, META);
    await other.handle('counter-b2', counter, always, META); // repo's cached b2 (revision 0) is one behind
    const before = reads;
    const loaded = await Promise.all(
      ['counter-b1', 'counter-b2', 'counter-b3', 'counter-b2'].map((s) => repo.load(s, counter)),
    );
    expect(reads - before).to.equal(1);
    expect(loaded.map((l) => [l.state.count, l.revision])).to.deep.equal([
      [1, 0],
      [2, 1],
      [0, -1],
      [2, 1],
    ]);
    // 50 new streams decided at once (a batch pass): one read in all, every append checked.
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => repo.handle(`counter-n${i}`, counter, always, META)),
    );
    expect(reads - before).to.equal(2);
    expect(results.every((r) => r.result === 0)).to.equal(true);
    await other.handle('counter-b1', counter, always, META);
    expect((await repo.load('counter-b1', counter)).state.count).to.equal(2); // asked after: sees it
  });

  it('without a cache (read and fold), every decision reads the stream and lands on the current revision', async () => {
    const plain = new AggregateRepository(readAndFold(counted));
    const other = cachedRepo(store); // another writer process
    await plain.handle('counter-p', counter, always, META);
    await other.handle('counter-p', counter, always, META);
    const before = reads;
    expect((await plain.handle('counter-p', counter, always, META)).result).to.equal(2);
    expect(reads - before).to.equal(1);
    expect(await store.readStream('counter-p')).to.have.length(3);
  });

  it('when another writer appended, the append conflicts, and it reads and decides again', async () => {
    const a = cachedRepo(counted);
    const b = cachedRepo(counted);
    await a.handle('counter-2', counter, always, META);
    await b.handle('counter-2', counter, always, META);
    await a.handle('counter-2', counter, always, META); // a's cache was stale: conflict, read, retry
    const r = await b.handle('counter-2', counter, always, META);
    expect(r.result).to.equal(3);
    expect((await store.readStream('counter-2')).map((e) => (e.data as { seen: number }).seen)).to.deep.equal([
      0, 1, 2, 3,
    ]);
  });

  it('checks a refusal or a no-op taken on the unread cache against the stream before answering', async () => {
    const a = cachedRepo(counted);
    const b = cachedRepo(counted);
    await b.load('counter-3', counter); // b caches "no stream"
    await a.handle('counter-3', counter, always, META);
    const refuseEmpty = (s: Count) => {
      if (s.count === 0) throw new Error('no such counter');
      return always(s);
    };
    expect((await b.handle('counter-3', counter, refuseEmpty, META)).result).to.equal(1);

    await a.handle('counter-3', counter, always, META); // count 3 now; b still holds 2
    const onlyWhenOdd = (s: Count) => (s.count % 2 === 1 ? always(s) : { events: [], result: -1 });
    expect((await b.handle('counter-3', counter, onlyWhenOdd, META)).result).to.equal(3);
    expect(await store.readStream('counter-3')).to.have.length(4);
  });

  it('two writer processes, 50 appends each at once on one stream: every one lands, none gives up', async () => {
    const a = cachedRepo(store);
    const b = cachedRepo(store);
    const results = await Promise.allSettled(
      Array.from({ length: 100 }, (_, i) => (i % 2 === 0 ? a : b).handle('counter-burst', counter, always, META)),
    );
    expect(results.filter((r) => r.status === 'rejected')).to.deep.equal([]);
    expect((await store.readStream('counter-burst')).map((e) => (e.data as { seen: number }).seen)).to.deep.equal(
      Array.from({ length: 100 }, (_, i) => i),
    );
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
    const repo = new AggregateRepository(new CachedAggregateStates(counted, 4));
    const readsOf = async (run: () => Promise<unknown>) => {
      const before = reads;
      await run();
      return reads - before;
    };
    expect(await readsOf(() => repo.handle('counter-hot', counter, always, META))).to.equal(1);
    let hotReads = 0;
    for (let i = 0; i < 20; i++) {
      await repo.handle(`counter-cold-${i}`, counter, always, META);
      hotReads += await readsOf(() => repo.handle('counter-hot', counter, always, META));
    }
    expect(hotReads).to.equal(0);
    expect(await readsOf(() => repo.handle('counter-cold-0', counter, always, META))).to.equal(1);
    expect((await repo.handle('counter-hot', counter, always, META)).result).to.equal(21);
  });

  it('holds its bounds in entries and in estimated bytes, and an evicted stream is read again and decides right', async () => {
    // States of ~10 kB each (a large product is ~45 kB): a 50 kB bound keeps at most 5 of them, whatever the count.
    type Note = { count: number; text: string };
    type Noted = { type: 'Noted'; data: { text: string } };
    const notes: Decider<Note, 'note' | 'refuse-after-2', Noted, number> = {
      name: 'notes',
      initialState: () => ({ count: 0, text: '' }),
      evolve: (s, e) => ({ count: s.count + 1, text: e.data.text }),
      decide: (command, s) => {
        if (command === 'refuse-after-2' && s.count >= 2) throw new Error('already two notes');
        return { events: [{ type: 'Noted', data: { text: 'x'.repeat(10_000) } }], result: s.count + 1 };
      },
    };
    const maxBytes = 50_000;
    const states = new CachedAggregateStates(counted, 1_000, maxBytes);
    const repo = new AggregateRepository(states);
    for (let i = 0; i < 40; i++) {
      await repo.handle(`notes-${i}`, notes, 'note', META);
      expect(states.cacheSize.bytes).to.be.at.most(maxBytes);
    }
    expect(states.cacheSize.entries).to.be.within(1, 5);
    // notes-0 was evicted long ago: its next command reads the stream and sees its first note.
    const before = reads;
    expect((await repo.handle('notes-0', notes, 'refuse-after-2', META)).result).to.equal(2);
    expect(reads - before).to.equal(1);
    // And the state read back decides a refusal that depends on it.
    let refused = false;
    await repo.handle('notes-0', notes, 'refuse-after-2', META).catch(() => (refused = true));
    expect(refused).to.equal(true);
    // A count bound holds the same way.
    const fewStates = new CachedAggregateStates(counted, 3, maxBytes * 100);
    const few = new AggregateRepository(fewStates);
    for (let i = 0; i < 10; i++) await few.handle(`counter-n-${i}`, counter, always, META);
    expect(fewStates.cacheSize.entries).to.equal(3);
  });

  it('approximateBytes: grows with the strings a state holds, Maps included', () => {
    const small = approximateBytes({ a: 'x', seen: new Map([['e1', { body_hash: 'h' }]]) });
    const large = approximateBytes({ a: 'x'.repeat(5_000), seen: new Map([['e1', { body_hash: 'h'.repeat(5_000) }]]) });
    expect(large - small).to.be.within(9_998, 10_100);
  });
});
