/**
 * The SQLite event store books each event where it records it: `recorded_at` = max(the clock at commit, the log's
 * last `recorded_at`), on the caller's thread and on the writer thread, so recording order and `recorded_at` never
 * disagree, even when a command read the clock long before its append, or the clock went back.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { SqliteEventStore } from '../../infra/adapters/sqlite/event-store.js';
import { ManualClock, systemClock } from '../../shared-schema/ports/clock.js';

const T0 = Date.parse('2026-10-31T23:59:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();

for (const writerThread of [false, true]) {
  describe(`SQLite event store booking time (${writerThread ? 'writer thread' : 'caller thread'})`, () => {
    let dir: string;
    let store: SqliteEventStore;
    const clock = new ManualClock(T0);

    before(() => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-booking-'));
      store = SqliteEventStore.open({ path: path.join(dir, 'events.db'), writerThread, clock });
    });
    after(async () => {
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    const append = (stream: string, stampedAt: number) =>
      store.appendToStream(stream, [{ type: 'T', data: {}, metadata: { recorded_at: iso(stampedAt), actor: 'a' } }]);
    const times = async () => (await store.readAll()).map((e) => e.metadata.recorded_at);

    it('books an event at the clock of its commit, not at the time its command stamped', async () => {
      clock.set(new Date(T0 + 120_000)); // the command read T0, the append reaches the store two minutes later
      await append('s-1', T0);
      expect(await times()).to.deep.equal([iso(T0 + 120_000)]);
      expect((await store.readAll())[0].metadata).to.include({ actor: 'a' });
    });

    it('never books an event before the last one of the log, even when the clock goes back', async () => {
      clock.set(new Date(T0));
      await append('s-2', T0);
      await Promise.all([append('s-3', T0), append('s-4', T0)]);
      expect(await times()).to.deep.equal(Array.from({ length: 4 }, () => iso(T0 + 120_000)));
      clock.set(new Date(T0 + 180_000));
      await append('s-5', T0);
      expect((await times()).at(-1)).to.equal(iso(T0 + 180_000));
    });
  });
}

describe('SQLite event store booking time with the system clock', () => {
  for (const writerThread of [false, true])
    it(`books at the time of the commit (${writerThread ? 'read by the writer thread' : 'caller thread'})`, async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-booking-'));
      const store = SqliteEventStore.open({ path: path.join(dir, 'events.db'), writerThread, clock: systemClock });
      try {
        const before = Date.now();
        await store.appendToStream('s', [{ type: 'T', data: {}, metadata: { recorded_at: iso(T0) } }]);
        const after = Date.now();
        const booked = Date.parse((await store.readAll())[0].metadata.recorded_at);
        expect(booked).to.be.within(before, after);
      } finally {
        await store.close();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });
});

describe('SQLite event store booking time without a clock', () => {
  it('keeps each event its own time, raised to the last of the log when earlier', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-booking-'));
    const store = SqliteEventStore.open({ path: path.join(dir, 'events.db') });
    try {
      for (const at of [T0, T0 + 5000, T0 + 1000])
        await store.appendToStream('s', [{ type: 'T', data: {}, metadata: { recorded_at: iso(at) } }]);
      expect((await store.readAll()).map((e) => e.metadata.recorded_at)).to.deep.equal([
        iso(T0),
        iso(T0 + 5000),
        iso(T0 + 5000),
      ]);
    } finally {
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
