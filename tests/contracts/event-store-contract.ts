/**
 * The contract every EventStore adapter passes, written only against the port. Streams and categories carry a
 * random suffix and reads start from the head seen at the start of a test, so it also runs on a shared server.
 */
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import {
  categoryOf,
  WrongExpectedRevisionError,
  type EventStore,
  type ExpectedRevision,
  type NewEvent,
  type RecordedEvent,
} from '../../shared-schema/ports/event-store.js';
import { until, within } from '../support/deadline.js';
import { CATEGORIES } from '../../shared-schema/domain/streams.js';

const RECORDED_AT = '2024-05-01T12:00:00.000Z';
const ev = (type: string, data: Record<string, unknown> = {}): NewEvent => ({
  type,
  data,
  metadata: { recorded_at: RECORDED_AT },
});
/** A fresh category (letters and digits only: no `-`). */
const newCategory = (): string => `ct${randomBytes(6).toString('hex')}`;
const newStream = (): string => `${newCategory()}-s`;

async function expectConflict(
  attempt: Promise<unknown>,
  expected: ExpectedRevision,
  actual: number | 'no_stream',
): Promise<void> {
  const error = await attempt.then(
    () => expect.fail(`append with expected ${String(expected)} should have been refused`),
    (e: unknown) => e,
  );
  expect(error).to.be.instanceOf(WrongExpectedRevisionError);
  const conflict = error as WrongExpectedRevisionError;
  expect(conflict.expected).to.equal(expected);
  expect(conflict.actual).to.equal(actual);
}

const summary = (events: RecordedEvent[]) => events.map((e) => `${e.stream}@${e.revision}:${e.type}`);

/**
 * What an adapter's opener gives the contract. `bookingClock`: the clock the store books events by, as this test can
 * read it (a SQLite store opened with a clock; EventStoreDB: the server's, which is this machine's for a server on
 * loopback). Absent: the store books each event at its own `recorded_at`, raised to the log's last.
 */
export interface OpenedEventStore {
  store: EventStore;
  cleanup: () => Promise<void>;
  bookingClock?: () => number;
}

const bookedAt = (e: RecordedEvent): number => Date.parse(e.metadata.recorded_at);

export function eventStoreContract(name: string, open: () => Promise<OpenedEventStore>): void {
  describe(`EventStore contract: ${name}`, function () {
    this.timeout(20_000);
    let store: EventStore;
    let cleanup: () => Promise<void>;
    let bookingClock: (() => number) | undefined;
    before(async () => ({ store, cleanup, bookingClock } = await open()));
    after(async () => cleanup?.());

    describe('append and read', () => {
      it('reads back a stream in append order with revisions from 0 and the last one returned', async () => {
        const s = newStream();
        const first = await store.appendToStream(s, [ev('A'), ev('B')]);
        const second = await store.appendToStream(s, [ev('C')]);
        expect(first.nextRevision).to.equal(1);
        expect(second.nextRevision).to.equal(2);
        const events = await store.readStream(s);
        expect(events.map((e) => [e.type, e.revision, e.stream])).to.deep.equal([
          ['A', 0, s],
          ['B', 1, s],
          ['C', 2, s],
        ]);
        expect(events[1].position).to.equal(first.position);
        expect(events[2].position).to.equal(second.position);
        expect(new Set(events.map((e) => e.id)).size).to.equal(3);
      });

      it('round-trips data and metadata exactly', async () => {
        const s = newStream();
        const data = {
          text: 'ação ✓ 🎉 "quoted" \\ slash',
          n: 12.5,
          max: Number.MAX_SAFE_INTEGER,
          neg: -3,
          flags: [true, false, null],
          nested: { list: [1, 'two', { deep: { empty: {} } }], nothing: null },
        };
        const metadata = { recorded_at: RECORDED_AT, request_id: 'req_01J', actor: 'key_ABC', extra: { n: 1 } };
        await store.appendToStream(s, [{ type: 'Rich', data, metadata }]);
        const [read] = await store.readStream(s);
        expect(read.data).to.deep.equal(data);
        // `recorded_at` is the store's booking time (see 'booking time' below); everything else comes back as sent.
        expect({ ...read.metadata, recorded_at: RECORDED_AT }).to.deep.equal(metadata);
        const [fromAll] = await store.readAll({ fromPosition: read.position, maxCount: 1 });
        expect(fromAll).to.deep.equal(read);
      });

      it('reads from a revision, at most maxCount, and [] for a missing stream or past the end', async () => {
        const s = newStream();
        await store.appendToStream(
          s,
          ['E0', 'E1', 'E2', 'E3', 'E4'].map((t) => ev(t)),
        );
        expect((await store.readStream(s, { fromRevision: 3 })).map((e) => e.type)).to.deep.equal(['E3', 'E4']);
        expect((await store.readStream(s, { maxCount: 2 })).map((e) => e.type)).to.deep.equal(['E0', 'E1']);
        expect((await store.readStream(s, { fromRevision: 1, maxCount: 2 })).map((e) => e.revision)).to.deep.equal([
          1, 2,
        ]);
        expect(await store.readStream(s, { fromRevision: 5 })).to.deep.equal([]);
        expect(await store.readStream(newStream())).to.deep.equal([]);
      });

      it('readStreams (where the adapter has it): each stream as readStream reads it from its revision', async function () {
        if (!store.readStreams) return this.skip();
        const [a, b, missing] = [newStream(), newStream(), newStream()];
        await store.appendToStream(a, [ev('A0'), ev('A1')]);
        await store.appendToStream(b, [ev('B0')]);
        await store.appendToStream(a, [ev('A2')]);
        const read = await store.readStreams([{ stream: a, fromRevision: 1 }, { stream: missing }, { stream: b }]);
        expect([...read.keys()]).to.have.members([a, b, missing]);
        expect(read.get(a)).to.deep.equal(await store.readStream(a, { fromRevision: 1 }));
        expect(read.get(b)).to.deep.equal(await store.readStream(b));
        expect(read.get(missing)).to.deep.equal([]);
        expect((await store.readStreams([{ stream: a, fromRevision: 3 }])).get(a)).to.deep.equal([]);
        expect((await store.readStreams([])).size).to.equal(0);
      });

      it('gives strictly increasing positions across streams, matching readAll and the head', async () => {
        const cat = newCategory();
        const start = await store.headPosition();
        const positions: number[] = [];
        for (const suffix of ['a', 'b', 'a', 'c', 'b']) {
          positions.push((await store.appendToStream(`${cat}-${suffix}`, [ev('X')])).position);
        }
        expect(positions[0]).to.be.greaterThan(start);
        for (let i = 1; i < positions.length; i++) expect(positions[i]).to.be.greaterThan(positions[i - 1]);
        const all = await store.readAll({ afterPosition: start, categories: [cat] });
        expect(all.map((e) => e.position)).to.deep.equal(positions);
        expect(await store.headPosition()).to.be.at.least(positions[4]);
      });

      it('accepts an empty append: nothing written, the current revision returned, expected revision still checked', async () => {
        const s = newStream();
        const written = await store.appendToStream(s, [ev('A'), ev('B')]);
        expect(await store.appendToStream(s, [], 'any')).to.deep.equal({ nextRevision: 1, position: written.position });
        expect((await store.appendToStream(s, [], 1)).nextRevision).to.equal(1);
        expect((await store.appendToStream(s, [], 'stream_exists')).nextRevision).to.equal(1);
        await expectConflict(store.appendToStream(s, [], 5), 5, 1);
        await expectConflict(store.appendToStream(s, [], 'no_stream'), 'no_stream', 1);
        expect(await store.readStream(s)).to.have.length(2);
      });

      it('an empty append to a missing stream answers revision -1 and position 0, creates nothing, checks the expectation', async () => {
        const s = newStream();
        const head = await store.headPosition();
        expect(await store.appendToStream(s, [], 'any')).to.deep.equal({ nextRevision: -1, position: 0 });
        expect(await store.appendToStream(s, [], 'no_stream')).to.deep.equal({ nextRevision: -1, position: 0 });
        await expectConflict(store.appendToStream(s, [], 'stream_exists'), 'stream_exists', 'no_stream');
        await expectConflict(store.appendToStream(s, [], 0), 0, 'no_stream');
        expect(await store.readStream(s)).to.deep.equal([]);
        expect(await store.headPosition()).to.equal(head);
        // Still a new stream: 'no_stream' is accepted once.
        expect((await store.appendToStream(s, [ev('A')], 'no_stream')).nextRevision).to.equal(0);
      });
    });

    describe('booking time (metadata.recorded_at)', () => {
      it('books an event when it is recorded: never before the event appended before it, never before the store clock when its append began', async () => {
        const s = newStream();
        const early = '2024-04-30T12:00:00.000Z'; // a write whose command read the clock a day ago, held until now
        const began = bookingClock?.();
        await store.appendToStream(s, [ev('First')]);
        await store.appendToStream(s, [{ type: 'Held', data: {}, metadata: { recorded_at: early } }]);
        await store.appendToStream(s, [
          { type: 'Both1', data: {}, metadata: { recorded_at: early } },
          { type: 'Both2', data: {}, metadata: { recorded_at: RECORDED_AT } },
        ]);
        const events = await store.readStream(s);
        expect(events.map((e) => e.type)).to.deep.equal(['First', 'Held', 'Both1', 'Both2']);
        for (let i = 1; i < events.length; i++) expect(bookedAt(events[i])).to.be.at.least(bookedAt(events[i - 1]));
        // Without a clock of its own a store books at the event's own time: never earlier than it.
        const floor = began ?? Date.parse(RECORDED_AT);
        expect(bookedAt(events[0])).to.be.at.least(floor);
        expect(bookedAt(events[1])).to.be.at.least(floor);
        if (began !== undefined) expect(bookedAt(events[3])).to.be.at.most(bookingClock!());
        // Every read gives the same booking: it is a fact of the log, not of the read.
        const fromAll = await store.readAll({ fromPosition: events[0].position, categories: [s.split('-')[0]] });
        expect(fromAll.map((e) => e.metadata.recorded_at)).to.deep.equal(events.map((e) => e.metadata.recorded_at));
      });
    });

    describe('the recorded head', () => {
      it('recordedHead (where the adapter has it) counts every append that had begun before it', async function () {
        if (!store.recordedHead) return this.skip();
        const s = newStream();
        const pending = store.appendToStream(s, [ev('A'), ev('B')]); // not awaited: still on its way to the log
        const head = await store.recordedHead();
        const { position } = await pending;
        expect(head).to.be.at.least(position);
        expect(await store.headPosition()).to.be.at.least(head);
      });

      it('recordedHead answers the last event of the log, never below the head before it, and a reader resumes there', async function () {
        if (!store.recordedHead) return this.skip();
        const before = await store.headPosition();
        const s = newStream();
        const { position } = await store.appendToStream(s, [ev('A')]);
        const head = await store.recordedHead();
        expect(head).to.be.at.least(before);
        // Nothing else in flight: exactly the last event, which a consumer counting the events it applied reaches
        // (whatever the store wrote to answer is not an event of the log it shows).
        expect(head).to.equal(position);
        expect(await store.headPosition()).to.equal(head);
        expect(await store.recordedHead(), 'asked again with nothing new').to.equal(head);
        expect((await store.readAll({ fromPosition: head, maxCount: 1 })).map((e) => e.type)).to.deep.equal(['A']);
        const later = await store.appendToStream(s, [ev('B')]);
        expect(later.position).to.be.above(head);
        expect((await store.readAll({ afterPosition: head })).map((e) => e.type)).to.deep.equal(['B']);
        // The next event a subscription of the whole log delivers after the answer is the one appended after it.
        const subscription = store.subscribeToAll({ afterPosition: head });
        try {
          const next = await within(subscription[Symbol.asyncIterator]().next(), 5000, 'subscription next()');
          expect(next.done).to.equal(false);
          expect(summary([next.value as RecordedEvent])).to.deep.equal([`${s}@1:B`]);
        } finally {
          await subscription.close();
        }
      });
    });

    describe('expected revision', () => {
      it("'any' appends to a new and to an existing stream", async () => {
        const s = newStream();
        await store.appendToStream(s, [ev('A')], 'any');
        expect((await store.appendToStream(s, [ev('B')], 'any')).nextRevision).to.equal(1);
      });

      it("'no_stream' creates a stream once, then is refused with the actual revision", async () => {
        const s = newStream();
        expect((await store.appendToStream(s, [ev('A'), ev('B')], 'no_stream')).nextRevision).to.equal(1);
        await expectConflict(store.appendToStream(s, [ev('C')], 'no_stream'), 'no_stream', 1);
        expect(await store.readStream(s)).to.have.length(2);
      });

      it("'stream_exists' is refused on a missing stream and accepted once it exists", async () => {
        const s = newStream();
        await expectConflict(store.appendToStream(s, [ev('A')], 'stream_exists'), 'stream_exists', 'no_stream');
        expect(await store.readStream(s)).to.deep.equal([]);
        await store.appendToStream(s, [ev('A')]);
        expect((await store.appendToStream(s, [ev('B')], 'stream_exists')).nextRevision).to.equal(1);
      });

      it('an exact revision is accepted when it is the last one and refused otherwise, writing nothing', async () => {
        const s = newStream();
        await expectConflict(store.appendToStream(s, [ev('A')], 0), 0, 'no_stream');
        await store.appendToStream(s, [ev('A'), ev('B')]);
        await expectConflict(store.appendToStream(s, [ev('C'), ev('D')], 0), 0, 1);
        await expectConflict(store.appendToStream(s, [ev('C')], 2), 2, 1);
        expect((await store.appendToStream(s, [ev('C'), ev('D')], 1)).nextRevision).to.equal(3);
        expect((await store.readStream(s)).map((e) => e.type)).to.deep.equal(['A', 'B', 'C', 'D']);
      });

      it('of 50 concurrent appends with the same exact revision, exactly one succeeds', async () => {
        const s = newStream();
        await store.appendToStream(s, [ev('Created')], 'no_stream');
        const results = await Promise.allSettled(
          Array.from({ length: 50 }, (_, i) => store.appendToStream(s, [ev('Raced', { i }), ev('Second', { i })], 0)),
        );
        const won = results.filter((r) => r.status === 'fulfilled');
        const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
        expect(won).to.have.length(1);
        for (const r of lost) {
          expect(r.reason).to.be.instanceOf(WrongExpectedRevisionError);
          expect((r.reason as WrongExpectedRevisionError).actual).to.equal(2);
        }
        const events = await store.readStream(s);
        expect(events.map((e) => e.type)).to.deep.equal(['Created', 'Raced', 'Second']);
        expect(events[1].data).to.deep.equal(events[2].data);
      });
    });

    it('500 concurrent appends to distinct streams all succeed with distinct positions', async () => {
      const cat = newCategory();
      const start = await store.headPosition();
      const results = await Promise.all(
        Array.from({ length: 500 }, (_, i) => store.appendToStream(`${cat}-${i}`, [ev('One', { i })], 'no_stream')),
      );
      expect(results.every((r) => r.nextRevision === 0)).to.equal(true);
      expect(new Set(results.map((r) => r.position)).size).to.equal(500);
      const all = await store.readAll({ afterPosition: start, categories: [cat] });
      expect(all).to.have.length(500);
      all.forEach((e) => expect(e.position).to.equal(results[(e.data as { i: number }).i].position));
    });

    describe('readAll', () => {
      it('a read of every category of the service (the projection runner) gets those events alone, in order, paged', async () => {
        const other = newCategory();
        const wanted = [...Object.values(CATEGORIES), newCategory()];
        const start = await store.headPosition();
        const tag = randomBytes(4).toString('hex');
        for (const [i, category] of [...wanted, other, wanted[4], other, wanted[0]].entries())
          await store.appendToStream(`${category}-live:pt_${tag}:${i}`, [ev(`E${i}`)]);
        const expected = (await store.readAll({ afterPosition: start })).filter((e) =>
          wanted.includes(categoryOf(e.stream)),
        );
        const n = wanted.length;
        expect(expected.map((e) => e.type)).to.deep.equal([...wanted.map((_, i) => `E${i}`), `E${n + 1}`, `E${n + 3}`]);
        const read = await store.readAll({ afterPosition: start, categories: [...wanted].reverse() });
        expect(read.map((e) => e.position)).to.deep.equal(expected.map((e) => e.position));
        const paged: RecordedEvent[] = [];
        for (let after = start; ;) {
          const page = await store.readAll({ afterPosition: after, categories: wanted, maxCount: 3 });
          if (page.length === 0) break;
          expect(page.length).to.be.at.most(3);
          paged.push(...page);
          after = page[page.length - 1].position;
        }
        expect(paged.map((e) => e.position)).to.deep.equal(expected.map((e) => e.position));
      });

      it('reads after a position, at most maxCount, filtered by category', async () => {
        const [a, b, c] = [newCategory(), newCategory(), newCategory()];
        const start = await store.headPosition();
        await store.appendToStream(`${a}-1`, [ev('A1'), ev('A2')]);
        await store.appendToStream(`${b}-1`, [ev('B1')]);
        await store.appendToStream(`${c}-1`, [ev('C1')]);
        await store.appendToStream(`${a}-with-dashes`, [ev('A3')]);
        await store.appendToStream(`${a}x-1`, [ev('NotA')]); // another category that merely starts like `a`
        await store.appendToStream(`${b}-1`, [ev('B2')]);

        const types = (events: RecordedEvent[]) => events.map((e) => e.type);
        expect(types(await store.readAll({ afterPosition: start, categories: [a] }))).to.deep.equal(['A1', 'A2', 'A3']);
        const ab = await store.readAll({ afterPosition: start, categories: [a, b] });
        expect(types(ab)).to.deep.equal(['A1', 'A2', 'B1', 'A3', 'B2']);
        expect(types(await store.readAll({ afterPosition: start, categories: [b, a], maxCount: 2 }))).to.deep.equal([
          'A1',
          'A2',
        ]);
        expect(types(await store.readAll({ afterPosition: ab[2].position, categories: [a, b] }))).to.deep.equal([
          'A3',
          'B2',
        ]);

        const mine = new Set([a, b, c, `${a}x`]);
        const all = await store.readAll({ afterPosition: start });
        const ours = all.filter((e) => mine.has(e.stream.slice(0, e.stream.indexOf('-'))));
        expect(types(ours)).to.deep.equal(['A1', 'A2', 'B1', 'C1', 'A3', 'NotA', 'B2']);
        for (let i = 1; i < all.length; i++) expect(all[i].position).to.be.greaterThan(all[i - 1].position);
        const [firstAfter, ...rest] = await store.readAll({ afterPosition: start, maxCount: 1 });
        expect(rest).to.deep.equal([]);
        expect(firstAfter.position).to.equal(all[0].position);
      });
    });

    describe('reads that end at the head of a shared log', () => {
      // On EventStoreDB, a namespaced or category read is a filtered subscription read up to the head of `$all`,
      // and the head of a namespace a filtered scan: both must end, and see nothing of the other store, when the
      // newest records of the server's log are not ours.
      it("a category read and the head end and ignore another store's events written after ours", async () => {
        const other = await open();
        try {
          const cat = newCategory();
          const start = await store.headPosition();
          const mine = await store.appendToStream(`${cat}-1`, [ev('M1'), ev('M2')]);
          for (let i = 0; i < 70; i++) await other.store.appendToStream(`${cat}-1`, [ev('Other')]);
          const types = (events: RecordedEvent[]) => events.map((e) => e.type);
          expect(types(await within(store.readAll({ afterPosition: start, categories: [cat] }), 10_000))).to.deep.equal(
            ['M1', 'M2'],
          );
          expect(types(await within(store.readAll({ afterPosition: start }), 10_000))).to.deep.equal(['M1', 'M2']);
          expect(await within(store.headPosition(), 10_000)).to.equal(mine.position);
          expect(
            await within(store.readAll({ afterPosition: mine.position, categories: [cat] }), 10_000),
          ).to.deep.equal([]);
        } finally {
          await other.cleanup();
        }
      });
    });

    describe('positions are opaque tokens', () => {
      /** Three events of a fresh category and the head before them. */
      async function three(): Promise<{ cat: string; start: number; events: RecordedEvent[] }> {
        const cat = newCategory();
        const start = await store.headPosition();
        await store.appendToStream(`${cat}-1`, [ev('P0'), ev('P1')]);
        await store.appendToStream(`${cat}-2`, [ev('P2')]);
        return { cat, start, events: await store.readAll({ afterPosition: start, categories: [cat] }) };
      }
      const types = (events: RecordedEvent[]) => events.map((e) => e.type);

      it('readAll: fromPosition includes the event at it, afterPosition excludes it, at the first event and between two', async () => {
        const { cat, events } = await three();
        expect(types(events)).to.deep.equal(['P0', 'P1', 'P2']);
        const [p0, p1] = events;
        expect(types(await store.readAll({ fromPosition: p0.position, categories: [cat] }))).to.deep.equal([
          'P0',
          'P1',
          'P2',
        ]);
        expect(types(await store.readAll({ afterPosition: p0.position, categories: [cat] }))).to.deep.equal([
          'P1',
          'P2',
        ]);
        expect(types(await store.readAll({ fromPosition: p1.position, categories: [cat] }))).to.deep.equal([
          'P1',
          'P2',
        ]);
        expect(types(await store.readAll({ afterPosition: p1.position, categories: [cat] }))).to.deep.equal(['P2']);
        // Unfiltered, the first event read from an event's position is that event.
        const [at] = await store.readAll({ fromPosition: p1.position, maxCount: 1 });
        expect(at).to.deep.equal(p1);
        // "Resume just before P1" without arithmetic: after the event before it.
        expect(
          types(await store.readAll({ afterPosition: p0.position, categories: [cat], maxCount: 1 })),
        ).to.deep.equal(['P1']);
      });

      it('subscribeToAll: fromPosition includes the event at it, afterPosition excludes it, at the first event and between two', async () => {
        const { cat, events } = await three();
        const [p0, p1] = events;
        const firstTypes = async (options: { afterPosition?: number; fromPosition?: number }, n: number) => {
          const subscription = store.subscribeToAll({ ...options, categories: [cat] });
          const iterator = subscription[Symbol.asyncIterator]();
          const got: string[] = [];
          try {
            while (got.length < n) {
              const r = await within(iterator.next(), 5000, 'subscription next()');
              expect(r.done).to.equal(false);
              got.push((r.value as RecordedEvent).type);
            }
          } finally {
            await subscription.close();
          }
          return got;
        };
        expect(await firstTypes({ fromPosition: p0.position }, 3)).to.deep.equal(['P0', 'P1', 'P2']);
        expect(await firstTypes({ afterPosition: p0.position }, 2)).to.deep.equal(['P1', 'P2']);
        expect(await firstTypes({ fromPosition: p1.position }, 2)).to.deep.equal(['P1', 'P2']);
        expect(await firstTypes({ afterPosition: p1.position }, 1)).to.deep.equal(['P2']);
      });

      it('refuses both start options at once, and a negative or fractional position', async () => {
        const { events } = await three();
        const p = events[0].position;
        for (const bad of [
          { afterPosition: p, fromPosition: p },
          { afterPosition: -1 },
          { fromPosition: -5 },
          { afterPosition: 0.5 },
        ]) {
          const error = await store.readAll(bad).then(
            () => 'no error',
            (e: unknown) => e,
          );
          expect(error, JSON.stringify(bad)).to.be.instanceOf(RangeError);
        }
      });

      it('a subscription whose start is refused ends with the error (no silent retry), then answers done', async () => {
        for (const bad of [{ afterPosition: -1 }, { fromPosition: 1.5 }]) {
          const subscription = store.subscribeToAll(bad);
          const iterator = subscription[Symbol.asyncIterator]();
          const error = await within(iterator.next(), 5000, 'refused subscription next()').then(
            () => 'no error',
            (e: unknown) => e,
          );
          expect(error, JSON.stringify(bad)).to.be.instanceOf(Error);
          expect((await within(iterator.next(), 2000, 'next() after the error')).done).to.equal(true);
          await subscription.close();
        }
      });
    });

    describe('subscribeToAll', () => {
      it('catches up, then delivers live events in order, skipping other categories, and close() ends a pending next()', async () => {
        const [cat, other] = [newCategory(), newCategory()];
        const start = await store.headPosition();
        await store.appendToStream(`${cat}-1`, [ev('Old1'), ev('Old2')], 'no_stream');
        await store.appendToStream(`${cat}-2`, [ev('Old3')], 'no_stream');
        const subscription = store.subscribeToAll({ afterPosition: start, categories: [cat] });
        const iterator = subscription[Symbol.asyncIterator]();
        const take = async (n: number) => {
          const got: RecordedEvent[] = [];
          while (got.length < n) {
            const r = await within(iterator.next(), 5000, 'subscription next()');
            expect(r.done).to.equal(false);
            got.push(r.value as RecordedEvent);
          }
          return got;
        };
        const caughtUp = await take(3);
        expect(summary(caughtUp)).to.deep.equal([`${cat}-1@0:Old1`, `${cat}-1@1:Old2`, `${cat}-2@0:Old3`]);

        const live = take(3); // waiting before the events exist
        await store.appendToStream(`${other}-1`, [ev('Foreign')]);
        await store.appendToStream(`${cat}-2`, [ev('New1')], 0);
        await store.appendToStream(`${cat}-1`, [ev('New2'), ev('New3')], 1);
        const liveEvents = await live;
        expect(summary(liveEvents)).to.deep.equal([`${cat}-2@1:New1`, `${cat}-1@2:New2`, `${cat}-1@3:New3`]);
        const positions = [...caughtUp, ...liveEvents].map((e) => e.position);
        for (let i = 1; i < positions.length; i++) expect(positions[i]).to.be.greaterThan(positions[i - 1]);

        const pending = iterator.next();
        await subscription.close();
        expect((await within(pending, 20_000, 'pending next() after close')).done).to.equal(true);
        expect((await within(iterator.next(), 20_000, 'next() after close')).done).to.equal(true);
      });

      it('unfiltered, delivers every event after the position to a for-await loop that close() ends', async () => {
        const cat = newCategory();
        const start = await store.headPosition();
        await store.appendToStream(`${cat}-1`, [ev('E0')]);
        const subscription = store.subscribeToAll({ afterPosition: start });
        const seen: RecordedEvent[] = [];
        const loop = (async () => {
          for await (const event of subscription) if (event.stream.startsWith(`${cat}-`)) seen.push(event);
        })();
        await until(() => seen.length === 1, 30_000, 'catch-up');
        const appended = await Promise.all(
          Array.from({ length: 20 }, (_, i) => store.appendToStream(`${cat}-${i % 4}`, [ev(`L${i}`)])),
        );
        await until(() => seen.length === 21, 30_000, 'live delivery');
        await subscription.close();
        await within(loop, 20_000, 'for-await loop after close');
        const livePositions = seen.slice(1).map((e) => e.position);
        expect(livePositions).to.deep.equal(appended.map((r) => r.position).sort((x, y) => x - y));
        expect(new Set(seen.map((e) => e.id)).size).to.equal(21);
      });
    });
  });
}
