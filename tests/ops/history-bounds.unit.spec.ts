/** The history writer remembers a bounded number of activated partners, and still records every partner's entries. */
import { expect } from 'chai';
import pino from 'pino';
import { ManualClock } from '../../shared-schema/ports/clock.js';
import type { ReadStore } from '../../shared-schema/ports/read-store.js';
import { HistoryWriter, type HistoryEntry } from '../../infra/ops/history.js';

describe('HistoryWriter: activated partners remembered within a bound', () => {
  it('holds at most its bound while many partners write, reads a forgotten partner again, and records every entry', async () => {
    let reads = 0;
    // Every partner is activated except "p-inactive".
    const store = {
      get: async (_collection: string, id: string) => {
        reads++;
        return id === 'p-inactive'
          ? { _id: id, activated_at: null }
          : { _id: id, activated_at: '2026-01-01T00:00:00.000Z' };
      },
    } as unknown as ReadStore;
    const written: HistoryEntry[] = [];
    const writer = new HistoryWriter(
      { append: async (entries) => void written.push(...entries) },
      store,
      new ManualClock(0),
      pino({ level: 'silent' }),
      () => undefined,
      0,
      10,
    );
    const record = (partnerId: string) =>
      writer.record({ kind: 'batch_processed', partnerId, env: 'live', outcome: 'done' });
    for (let i = 0; i < 100; i++) {
      await record(`p-${i}`);
      expect(writer.activatedRemembered).to.be.at.most(10);
    }
    expect(reads).to.equal(100);
    await record('p-99'); // remembered: no read
    expect(reads).to.equal(100);
    await record('p-0'); // forgotten: read again, and still recorded
    expect(reads).to.equal(101);
    await record('p-inactive'); // not activated: never recorded
    await writer.flush();
    expect(written.map((e) => e.partner_id).filter((p) => p === 'p-0')).to.have.length(2);
    expect(written.some((e) => e.partner_id === 'p-inactive')).to.equal(false);
    expect(written).to.have.length(102);
  });
});
