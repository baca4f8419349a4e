import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SqliteEventStore } from '../../infra/adapters/sqlite/event-store.js';
import { eventStoreContract } from './event-store-contract.js';
import { ManualClock } from '../../shared-schema/ports/clock.js';
import { SPARSE_POSITIONS } from '../support/sparse-positions.js';

for (const [label, writerThread, positionSpacing, clocked] of [
  ['SQLite', false, 1, false],
  ['SQLite, writer thread', true, 1, false],
  ['SQLite, sparse positions', false, SPARSE_POSITIONS, false],
  // Booked by its clock (as the service opens it), here a manual one, on the writer thread.
  ['SQLite, writer thread, booked by a clock', true, 1, true],
] as const) {
  eventStoreContract(label, async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'event-store-contract-'));
    const clock = clocked ? new ManualClock(new Date('2025-03-01T00:00:00.000Z')) : undefined;
    const store = SqliteEventStore.open({
      path: path.join(dir, 'events.db'),
      writerThread,
      positionSpacing,
      ...(clock ? { clock } : {}),
    });
    return {
      store,
      ...(clock ? { bookingClock: () => clock.now().getTime() } : {}),
      cleanup: async () => {
        await store.close();
        fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  });
}

describe('SQLite event store with sparse positions (a stand-in for byte offsets)', () => {
  it('refuses a position that is not one of its own, in reads and as a subscription start', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'event-store-sparse-'));
    const store = SqliteEventStore.open({ path: path.join(dir, 'events.db'), positionSpacing: SPARSE_POSITIONS });
    try {
      const meta = { recorded_at: '2024-05-01T12:00:00.000Z' };
      const { position } = await store.appendToStream('s-1', [
        { type: 'A', data: {}, metadata: meta },
        { type: 'B', data: {}, metadata: meta },
      ]);
      expect(position).to.equal(2 * SPARSE_POSITIONS);
      expect(await store.headPosition()).to.equal(position);
      const inside = position - 1; // arithmetic on a position lands inside a "record"
      const error = await store.readAll({ afterPosition: inside }).then(
        () => 'no error',
        (e: unknown) => e,
      );
      expect(error).to.be.instanceOf(RangeError);
      const iterator = store.subscribeToAll({ afterPosition: inside })[Symbol.asyncIterator]();
      expect(
        await iterator.next().then(
          () => 'no error',
          (e: unknown) => e,
        ),
      ).to.be.instanceOf(RangeError);
      expect((await iterator.next()).done).to.equal(true);
    } finally {
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('SQLite event store: a group as it crosses to the writer thread', () => {
  it('packs and unpacks any text (colons, digits, emoji, empty) and every kind of expected revision', async () => {
    const { packGroup, unpackGroup, packOutcomes, unpackOutcomes } =
      await import('../../infra/adapters/sqlite/event-store-writer.js');
    const { WrongExpectedRevisionError } = await import('../../shared-schema/ports/event-store.js');
    const group = [
      {
        stream: 'product-live:pt_1:a:b',
        expected: 'any' as const,
        events: [{ type: 'T', data: '{"x":"12:3"}', metadata: '{}' }],
      },
      { stream: 's-2', expected: 'no_stream' as const, events: [] },
      {
        stream: 's-3',
        expected: 'stream_exists' as const,
        events: [
          { type: '', data: '"😀:9"', metadata: '' },
          { type: '10:', data: 'null', metadata: '{"a":1}' },
        ],
      },
      { stream: 's-4', expected: 41, events: [{ type: 'Ü', data: '"\u0000"', metadata: '{}' }] },
    ];
    expect(unpackGroup(packGroup(group))).to.deep.equal(group);
    expect(unpackGroup(packGroup([]))).to.deep.equal([]);
    const outcomes = unpackOutcomes(
      packOutcomes([
        { ok: true, result: { nextRevision: 3, position: 2 ** 40 } },
        { ok: false, error: new WrongExpectedRevisionError('s-2', 'no_stream', 0) },
        { ok: false, error: Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR' }) },
      ]),
    );
    expect(outcomes[0]).to.deep.equal({ ok: true, result: { nextRevision: 3, position: 2 ** 40 } });
    expect(!outcomes[1].ok && outcomes[1].error).to.be.instanceOf(WrongExpectedRevisionError);
    expect(!outcomes[2].ok && (outcomes[2].error as { code?: string }).code).to.equal('SQLITE_IOERR');
  });
});
