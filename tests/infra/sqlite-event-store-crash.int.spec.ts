import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { SqliteEventStore } from '../../infra/adapters/sqlite/event-store.js';
import { checkWriterLog, runWriter } from '../support/sqlite-writer-process.js';

describe('SqliteEventStore durability', function () {
  this.timeout(60_000);
  let dir: string;
  let dbPath: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'event-store-crash-'));
    dbPath = path.join(dir, 'events.db');
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('keeps every acknowledged append and never half an append when the writer is SIGKILLed (3 cycles)', async () => {
    const acked: [string, number][] = [];
    for (let cycle = 1; cycle <= 3; cycle++) {
      const run = await runWriter({ dbPath, prefix: 'crash', streams: 300, killAfterAcks: 1500 });
      expect(run.signal, `cycle ${cycle} stderr: ${run.stderr}`).to.equal('SIGKILL');
      expect(run.acks.length).to.be.at.least(1500);
      acked.push(...run.acks);

      const store = SqliteEventStore.open({ path: dbPath });
      try {
        const lengths = checkWriterLog(await store.readAll());
        for (const [stream, revision] of acked) {
          expect(lengths.get(stream) ?? 0, `acknowledged ${stream}@${revision}`).to.be.greaterThan(revision);
        }
      } finally {
        await store.close();
      }
    }
  });

  it('keeps data, revisions and positions across a normal close and reopen', async () => {
    const metadata = { recorded_at: '2024-05-01T12:00:00.000Z' };
    const first = SqliteEventStore.open({ path: dbPath });
    await first.appendToStream('order-1', [{ type: 'A', data: { n: 1 }, metadata }], 'no_stream');
    const pending = first.appendToStream('order-1', [{ type: 'B', data: { n: 2 }, metadata }], 0);
    await first.close(); // close() writes what is still queued
    const written = await pending;
    const afterClose = await first.appendToStream('order-1', [], 'any').then(
      () => 'accepted',
      (e: Error) => e.message,
    );
    expect(afterClose).to.match(/closed/);

    const second = SqliteEventStore.open({ path: dbPath });
    try {
      expect(await second.headPosition()).to.equal(written.position);
      expect((await second.readStream('order-1')).map((e) => [e.type, e.data])).to.deep.equal([
        ['A', { n: 1 }],
        ['B', { n: 2 }],
      ]);
      const next = await second.appendToStream('order-1', [{ type: 'C', data: {}, metadata }], 1);
      expect(next.nextRevision).to.equal(2);
      expect(next.position).to.be.greaterThan(written.position);
    } finally {
      await second.close();
    }
  });
});
