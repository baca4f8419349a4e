/**
 * EsdbEventStore's own logic (paging through `$all`, exclusive start positions, the position of an append, error
 * translation), driven by an in-memory stand-in for the driver's client. The stand-in interleaves system events,
 * spaces positions like byte offsets, and starts reads AT the given position (inclusive) or after it, since the
 * adapter must be right either way. The real driver and server run in the contract suite (EVENTSTORE_URL).
 */
import { expect } from 'chai';
import { Readable } from 'node:stream';
import { StreamNotFoundError, WrongExpectedVersionError } from '@eventstore/db-client';
import type {
  AppendToStreamOptions,
  SubscribeToAllOptions,
  EventData,
  EventStoreDBClient,
  ReadAllOptions,
  ReadStreamOptions,
  ResolvedEvent,
} from '@eventstore/db-client';
import { WrongExpectedRevisionError } from '../../shared-schema/ports/event-store.js';
import type { NewEvent } from '../../shared-schema/ports/event-store.js';
import { EsdbEventStore } from '../../infra/adapters/esdb/event-store.js';
import { AppendTooLargeError, BARRIER_EVENT_TYPE, BARRIER_STREAM } from '../../infra/adapters/esdb/mapping.js';

interface Rec {
  stream: string;
  type: string;
  revision: bigint;
  pos: bigint;
  data: unknown;
  metadata: unknown;
  id: string;
}

/**
 * A filtered catch-up subscription as the server and driver 6.2 run it: the server scans the log after the start
 * (exclusive), sends only events whose stream name starts with a prefix, a checkpoint every `window` records
 * considered and one at the end of the catch-up, then "caught up" (servers >= 24.2; `caughtUp: false` plays an older
 * one), then stays live. The checkpoint callback is awaited and 'caughtUp' emitted in order with the events, as
 * the driver's Transform does.
 */
class FakeFilteredSub extends Readable {
  constructor(
    private readonly fake: FakeEsdb,
    options: SubscribeToAllOptions,
  ) {
    super({ objectMode: true });
    void this.feed(options);
  }

  private async feed(options: SubscribeToAllOptions): Promise<void> {
    const filter = options.filter;
    if (!filter || !('prefixes' in filter)) throw new Error('the stand-in plays stream-name prefix filters only');
    const from = options.fromPosition;
    const start = from === undefined || from === 'start' || from === 'end' ? -1n : from.commit;
    const window = filter.maxSearchWindow ?? 32;
    let considered = 0;
    let checkpoint = start;
    await Promise.resolve();
    for (const r of [...this.fake.log]) {
      if (this.destroyed) return;
      if (r.pos <= start) continue;
      considered++;
      checkpoint = r.pos;
      if (filter.prefixes.some((p) => r.stream.startsWith(p))) {
        this.fake.wire++;
        this.push(this.fake.resolved(r));
      }
      if (considered % (window * filter.checkpointInterval) === 0)
        await filter.checkpointReached?.(this, { commit: r.pos, prepare: r.pos });
      await Promise.resolve();
    }
    if (this.destroyed) return;
    await filter.checkpointReached?.(this, { commit: checkpoint, prepare: checkpoint });
    if (this.fake.caughtUp) this.emit('caughtUp');
    // live from here: nothing more unless the test writes
  }

  override _read(): void {}

  async unsubscribe(): Promise<void> {
    this.fake.unsubscribed++;
  }
}

class FakeEsdb {
  readonly log: Rec[] = [];
  private next = 1000n;
  /** Events a filtered subscription sent, records the reads of `$all` sent, subscriptions closed. */
  wire = 0;
  readAllRecords = 0;
  unsubscribed = 0;
  caughtUp = true;
  readonly subscribeCalls: SubscribeToAllOptions[] = [];
  constructor(private readonly inclusive: boolean) {
    this.write('$settings', '$settings', {});
  }

  write(
    stream: string,
    type: string,
    data: unknown,
    metadata: unknown = { recorded_at: 'x' },
    id = `id${this.next}`,
  ): Rec {
    const revision = BigInt(this.log.filter((r) => r.stream === stream).length);
    const rec = { stream, type, revision, pos: this.next, data, metadata, id };
    this.next += 137n;
    this.log.push(rec);
    return rec;
  }

  subscribeToAll(options: SubscribeToAllOptions): FakeFilteredSub {
    this.subscribeCalls.push(options);
    return new FakeFilteredSub(this, options);
  }

  resolved(r: Rec): ResolvedEvent {
    return {
      event: {
        streamId: r.stream,
        id: r.id,
        isJson: true,
        revision: r.revision,
        type: r.type,
        created: new Date(0),
        data: r.data,
        metadata: r.metadata,
        position: { commit: r.pos, prepare: r.pos },
      },
      commitPosition: r.pos,
    } as unknown as ResolvedEvent;
  }

  /** Metadata writes (`$$` streams), and whether the next one is refused (denied by an ACL, say). */
  metadataWrites = 0;
  refuseMetadata = false;

  async setStreamMetadata(stream: string, metadata: { maxCount?: number }) {
    if (this.refuseMetadata) throw new Error('access denied');
    this.metadataWrites++;
    const rec = this.write(`$$${stream}`, '$metadata', { $maxCount: metadata.maxCount });
    return { success: true, nextExpectedRevision: rec.revision, position: { commit: rec.pos, prepare: rec.pos } };
  }

  async appendToStream(stream: string, one: EventData | EventData[], options: AppendToStreamOptions = {}) {
    const events = Array.isArray(one) ? one : [one];
    const current = this.log.filter((r) => r.stream === stream);
    const cur = current.length === 0 ? ('no_stream' as const) : BigInt(current.length - 1);
    const exp = options.expectedRevision ?? 'any';
    const ok =
      exp === 'any' ||
      (exp === 'no_stream' ? cur === 'no_stream' : exp === 'stream_exists' ? cur !== 'no_stream' : cur === exp);
    if (!ok) throw new WrongExpectedVersionError(undefined, { streamName: stream, expected: exp, current: cur });
    const written = events.map((e) => {
      this.write('$stats-node', '$statistics-collected', {}); // something else lands in between
      return this.write(stream, e.type, e.data, e.metadata, e.id);
    });
    const first = written[0];
    // Like the server may: report the FIRST event's position for a multi-event append.
    return {
      success: true,
      nextExpectedRevision: written[written.length - 1].revision,
      position: first && { commit: first.pos, prepare: first.pos },
    };
  }

  async *readStream(stream: string, options: ReadStreamOptions = {}) {
    let recs = this.log.filter((r) => r.stream === stream);
    if (recs.length === 0) throw new StreamNotFoundError(undefined, stream);
    if (options.direction === 'backwards') recs = [...recs].reverse(); // only from END in these tests
    const from = typeof options.fromRevision === 'bigint' ? options.fromRevision : 0n;
    let n = 0;
    for (const r of recs) {
      if (r.revision < from || n >= Number(options.maxCount ?? Infinity)) continue;
      n++;
      yield this.resolved(r);
    }
  }

  async *readAll(options: ReadAllOptions = {}) {
    const backwards = options.direction === 'backwards';
    const ordered = backwards ? [...this.log].reverse() : this.log;
    const from = options.fromPosition;
    const start = from === undefined || from === 'start' || from === 'end' ? undefined : from.commit;
    const after = (r: Rec) =>
      start === undefined ||
      (backwards ? (this.inclusive ? r.pos <= start : r.pos < start) : this.inclusive ? r.pos >= start : r.pos > start);
    let n = 0;
    for (const r of ordered) {
      if (!after(r)) continue;
      if (n++ >= Number(options.maxCount ?? Infinity)) return;
      this.readAllRecords++;
      yield this.resolved(r);
    }
  }

  async dispose() {}
}

const ev = (type: string, data: unknown = {}): NewEvent => ({
  type,
  data,
  metadata: { recorded_at: '2026-01-01T00:00:00.000Z' },
});

for (const inclusive of [true, false]) {
  describe(`EsdbEventStore over a stand-in client (reads start ${inclusive ? 'at' : 'after'} the position)`, () => {
    let fake: FakeEsdb;
    let store: EsdbEventStore;
    beforeEach(() => {
      fake = new FakeEsdb(inclusive);
      store = new EsdbEventStore(fake as unknown as EventStoreDBClient, { pageSize: 3 });
    });

    it('appends with expected revisions and reports the revision and position of the last event', async () => {
      const a = await store.appendToStream('job-1', [ev('A'), ev('B'), ev('C')], 'no_stream');
      const events = await store.readStream('job-1');
      expect(events.map((e) => [e.type, e.revision])).to.deep.equal([
        ['A', 0],
        ['B', 1],
        ['C', 2],
      ]);
      expect(a).to.deep.equal({ nextRevision: 2, position: events[2].position });
      const b = await store.appendToStream('job-1', [ev('D')], 2);
      expect(b.nextRevision).to.equal(3);
      expect(b.position).to.equal((await store.readStream('job-1', { fromRevision: 3 }))[0].position);
    });

    it('an empty append answers the stream as it is (-1 and 0 when missing), checks the expectation, sends nothing', async () => {
      const before = fake.log.length;
      expect(await store.appendToStream('job-9', [], 'any')).to.deep.equal({ nextRevision: -1, position: 0 });
      expect(await store.appendToStream('job-9', [], 'no_stream')).to.deep.equal({ nextRevision: -1, position: 0 });
      const missing = await store.appendToStream('job-9', [], 'stream_exists').catch((e: unknown) => e);
      expect(missing).to.be.instanceOf(WrongExpectedRevisionError);
      expect(missing).to.include({ expected: 'stream_exists', actual: 'no_stream' });
      expect(fake.log.length).to.equal(before);
      const written = await store.appendToStream('job-9', [ev('A'), ev('B')]);
      expect(await store.appendToStream('job-9', [], 1)).to.deep.equal({ nextRevision: 1, position: written.position });
      const wrong = await store.appendToStream('job-9', [], 0).catch((e: unknown) => e);
      expect(wrong).to.include({ expected: 0, actual: 1 });
    });

    // Only over a stand-in that reads AT the position, as the server does (its IAllReader reads from the record at a
    // "pre-position"): an inclusive start is then the read's own start.
    (inclusive ? it : it.skip)(
      'readAll fromPosition includes the event at the position, afterPosition excludes it',
      async () => {
        await store.appendToStream('job-1', [ev('A'), ev('B'), ev('C')]);
        const [a, b] = await store.readAll();
        expect((await store.readAll({ fromPosition: b.position })).map((e) => e.type)).to.deep.equal(['B', 'C']);
        expect((await store.readAll({ afterPosition: b.position })).map((e) => e.type)).to.deep.equal(['C']);
        expect((await store.readAll({ fromPosition: a.position, maxCount: 1 })).map((e) => e.type)).to.deep.equal([
          'A',
        ]);
      },
    );

    it('turns a wrong expected revision into the port error with the actual revision', async () => {
      await store.appendToStream('job-1', [ev('A')], 'no_stream');
      const err = await store.appendToStream('job-1', [ev('B')], 'no_stream').catch((e: unknown) => e);
      expect(err).to.be.instanceOf(WrongExpectedRevisionError);
      expect(err).to.include({ stream: 'job-1', expected: 'no_stream', actual: 0 });
      const err2 = await store.appendToStream('job-2', [ev('B')], 'stream_exists').catch((e: unknown) => e);
      expect(err2).to.include({ stream: 'job-2', expected: 'stream_exists', actual: 'no_stream' });
    });

    it('refuses an append above 1 MiB before sending it', async () => {
      const err = await store
        .appendToStream('job-1', [ev('Big', { s: 'x'.repeat(1024 * 1024) })])
        .catch((e: unknown) => e);
      expect(err).to.be.instanceOf(AppendTooLargeError);
      expect(await store.readStream('job-1')).to.deep.equal([]);
    });

    it('reads a missing stream as empty, and honours fromRevision and maxCount', async () => {
      expect(await store.readStream('nope-1')).to.deep.equal([]);
      await store.appendToStream('job-1', [ev('A'), ev('B'), ev('C'), ev('D')]);
      const part = await store.readStream('job-1', { fromRevision: 1, maxCount: 2 });
      expect(part.map((e) => e.type)).to.deep.equal(['B', 'C']);
    });

    it('pages through the whole log, strictly after the position, without system events or repeats', async () => {
      for (let i = 0; i < 5; i++) await store.appendToStream(`job-${i}`, [ev('J'), ev('K')]);
      await store.appendToStream('store-1', [ev('S')]);
      const all = await store.readAll();
      expect(all).to.have.length(11);
      expect(all.every((e, i) => i === 0 || e.position > all[i - 1].position)).to.equal(true);
      const after = await store.readAll({ afterPosition: all[3].position });
      expect(after.map((e) => e.id)).to.deep.equal(all.slice(4).map((e) => e.id));
      const some = await store.readAll({ afterPosition: all[3].position, maxCount: 2 });
      expect(some.map((e) => e.id)).to.deep.equal(all.slice(4, 6).map((e) => e.id));
      const stores = await store.readAll({ categories: ['store'] });
      expect(stores.map((e) => e.stream)).to.deep.equal(['store-1']);
      expect(await store.headPosition()).to.equal(all[10].position);
    });

    it('keeps to its namespace', async () => {
      const mine = new EsdbEventStore(fake as unknown as EventStoreDBClient, { streamPrefix: 't1_', pageSize: 2 });
      expect(await mine.headPosition()).to.equal(0);
      await store.appendToStream('job-1', [ev('Other')]);
      await mine.appendToStream('job-1', [ev('Mine')]);
      await store.appendToStream('job-1', [ev('Other2')]);
      expect((await mine.readAll()).map((e) => [e.stream, e.type])).to.deep.equal([['job-1', 'Mine']]);
      expect((await mine.readStream('job-1')).map((e) => e.type)).to.deep.equal(['Mine']);
      expect(await mine.headPosition()).to.equal((await mine.readAll())[0].position);
    });

    it('reads by category in a namespace filtered on the server, ending at the head even when it is not ours', async () => {
      const mine = new EsdbEventStore(fake as unknown as EventStoreDBClient, { streamPrefix: 't1_', pageSize: 2 });
      for (let i = 0; i < 50; i++) await store.appendToStream(`store-${i}`, [ev('Other')]); // another namespace
      await mine.appendToStream('store-1', [ev('S1')]);
      await mine.appendToStream('job-1', [ev('J1')]);
      await mine.appendToStream('store-2', [ev('S2')]);
      for (let i = 0; i < 50; i++) await store.appendToStream(`store-${i}`, [ev('Other')]);
      fake.write('$stats-node', '$statistics-collected', {}); // the newest record is a system one
      fake.wire = 0;
      fake.readAllRecords = 0;
      const stores = await mine.readAll({ categories: ['store'] });
      expect(stores.map((e) => [e.stream, e.type])).to.deep.equal([
        ['store-1', 'S1'],
        ['store-2', 'S2'],
      ]);
      expect(fake.wire, 'only matching events crossed the wire').to.equal(2);
      expect(fake.readAllRecords, 'one record read: the head').to.equal(1);
      expect(fake.unsubscribed, 'the subscription was closed').to.equal(1);
      const all = await mine.readAll();
      expect(all.map((e) => e.type)).to.deep.equal(['S1', 'J1', 'S2']);
      expect(
        (await mine.readAll({ afterPosition: all[0].position, categories: ['store'] })).map((e) => e.type),
      ).to.deep.equal(['S2']);
      // An inclusive start reads the record AT the position first, as the server does (see the test above).
      if (inclusive)
        expect((await mine.readAll({ fromPosition: all[2].position })).map((e) => e.type)).to.deep.equal(['S2']);
      expect((await mine.readAll({ categories: ['store', 'job'], maxCount: 2 })).map((e) => e.type)).to.deep.equal([
        'S1',
        'J1',
      ]);
      expect(await mine.readAll({ afterPosition: all[2].position })).to.deep.equal([]);
    });

    it('without "caught up" (servers before 24.2) a filtered read ends on the checkpoint at the head', async () => {
      fake.caughtUp = false;
      const mine = new EsdbEventStore(fake as unknown as EventStoreDBClient, { streamPrefix: 't1_' });
      await mine.appendToStream('store-1', [ev('S1')]);
      for (let i = 0; i < 40; i++) await store.appendToStream(`store-${i}`, [ev('Other')]);
      expect((await mine.readAll({ categories: ['store'] })).map((e) => e.type)).to.deep.equal(['S1']);
      expect(
        await new EsdbEventStore(fake as unknown as EventStoreDBClient, { streamPrefix: 't2_' }).readAll(),
      ).to.deep.equal([]);
    });

    it('recordedHead writes one barrier outside every stream of ours and answers the newest event of ours', async () => {
      await store.appendToStream('job-1', [ev('A'), ev('B')]);
      const written = await store.appendToStream('store-1', [ev('S')]);
      const head = await store.recordedHead();
      expect(head, 'a position a subscription to our categories delivers: our newest event').to.equal(written.position);
      const barriers = fake.log.filter((r) => r.stream === BARRIER_STREAM);
      expect(barriers.map((r) => r.type)).to.deep.equal([BARRIER_EVENT_TYPE]);
      expect(Number(barriers[0].pos)).to.be.above(head);
      const metadata = fake.log.filter((r) => r.stream === `$$${BARRIER_STREAM}`);
      expect(
        metadata.map((r) => r.data),
        'a scavenge keeps one barrier',
      ).to.deep.equal([{ $maxCount: 1 }]);
      // No reader of ours sees it: the whole log, a category, the head, its own stream.
      expect((await store.readAll()).map((e) => e.type)).to.deep.equal(['A', 'B', 'S']);
      expect(await store.readAll({ categories: [BARRIER_STREAM] })).to.deep.equal([]);
      expect(await store.readStream(BARRIER_STREAM)).to.deep.equal([]);
      expect(await store.headPosition()).to.equal(head);
      // The metadata is written once per store; each head read writes one barrier.
      expect(await store.recordedHead()).to.equal(head);
      expect(fake.metadataWrites).to.equal(1);
      expect(fake.log.filter((r) => r.stream === BARRIER_STREAM)).to.have.length(2);
      // An event appended after the answer is above it, and reading after the answer finds it.
      const later = await store.appendToStream('job-1', [ev('C')]);
      expect(later.position).to.be.above(head);
      expect((await store.readAll({ afterPosition: head })).map((e) => e.type)).to.deep.equal(['C']);
      expect(await store.recordedHead()).to.equal(later.position);
      const refused = await store.appendToStream(BARRIER_STREAM, [ev('X')]).catch((e: unknown) => e);
      expect(refused, 'an append of ours there would never be read').to.be.instanceOf(RangeError);
    });

    it('recordedHead in a namespace: the barrier is outside it, the answer is the namespace newest event', async () => {
      const mine = new EsdbEventStore(fake as unknown as EventStoreDBClient, { streamPrefix: 't1_' });
      expect(await mine.recordedHead(), 'nothing of ours yet').to.equal(0);
      const written = await mine.appendToStream('job-1', [ev('Mine')]);
      await store.appendToStream('job-1', [ev('Other')]);
      expect(await mine.recordedHead()).to.equal(written.position);
      expect(fake.log.filter((r) => r.stream === BARRIER_STREAM)).to.have.length(2);
      expect(fake.log.some((r) => r.stream === `t1_${BARRIER_STREAM}`)).to.equal(false);
      expect((await mine.readAll()).map((e) => e.type)).to.deep.equal(['Mine']);
    });

    it("recordedHead's scan back stops at the store's previous barrier, not at our last event", async () => {
      const written = await store.appendToStream('job-1', [ev('A')]);
      expect(await store.recordedHead()).to.equal(written.position);
      // Other query processes read the head many times while nothing of ours is written.
      for (let i = 0; i < 100; i++) fake.write(BARRIER_STREAM, BARRIER_EVENT_TYPE, {});
      expect(await store.recordedHead()).to.equal(written.position);
      fake.readAllRecords = 0;
      expect(await store.recordedHead()).to.equal(written.position);
      expect(fake.readAllRecords, 'back to the previous barrier only').to.be.at.most(3);
      // A store with no barrier of its own yet (another process) pages back to our event, and finds the same.
      const fresh = new EsdbEventStore(fake as unknown as EventStoreDBClient, { pageSize: 3 });
      fake.readAllRecords = 0;
      expect(await fresh.recordedHead()).to.equal(written.position);
      expect(fake.readAllRecords).to.be.above(100);
      // An event of ours written since is found first.
      const later = await store.appendToStream('job-2', [ev('B')]);
      fake.write(BARRIER_STREAM, BARRIER_EVENT_TYPE, {});
      expect(await store.recordedHead()).to.equal(later.position);
    });

    it('recordedHead fails while the barrier stream metadata is refused, and writes it on a later call', async () => {
      const written = await store.appendToStream('job-1', [ev('A')]);
      fake.refuseMetadata = true;
      const err = await store.recordedHead().catch((e: unknown) => e);
      expect(err).to.be.instanceOf(Error);
      expect(fake.log.some((r) => r.stream === BARRIER_STREAM)).to.equal(false);
      fake.refuseMetadata = false;
      expect(await store.recordedHead()).to.equal(written.position);
      expect(fake.metadataWrites).to.equal(1);
    });

    it('headPosition of a namespace reads one page back, then filters on the server from the newest position it saw', async () => {
      const mine = new EsdbEventStore(fake as unknown as EventStoreDBClient, { streamPrefix: 't1_' });
      for (let i = 0; i < 200; i++) await store.appendToStream(`job-${i}`, [ev('Other')]);
      fake.readAllRecords = 0;
      fake.wire = 0;
      expect(await mine.headPosition(), 'an empty namespace').to.equal(0);
      expect(fake.readAllRecords, 'one backwards page, not the whole log').to.be.at.most(64);
      expect(fake.wire).to.equal(0);
      const written = await mine.appendToStream('job-1', [ev('Mine')]);
      expect(await mine.headPosition()).to.equal(written.position);
      for (let i = 0; i < 200; i++) await store.appendToStream(`job-${i}`, [ev('Other')]);
      fake.readAllRecords = 0;
      expect(await mine.headPosition()).to.equal(written.position);
      expect(fake.readAllRecords).to.be.at.most(64);
      const last = fake.subscribeCalls[fake.subscribeCalls.length - 1].fromPosition;
      expect(last, 'the scan starts at the newest event of ours already seen').to.deep.equal({
        commit: BigInt(written.position),
        prepare: BigInt(written.position),
      });
      // A fresh store of the same namespace (another process) finds it too, from the start.
      expect(
        await new EsdbEventStore(fake as unknown as EventStoreDBClient, { streamPrefix: 't1_' }).headPosition(),
      ).to.equal(written.position);
    });
  });
}
