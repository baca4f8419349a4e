/**
 * The full feed reads at t only once every lapse due by t is recorded and projected: nothing to do when no offer in
 * the feed is past its 48 h; otherwise the lapses recorded, then the log's head awaited; 503 with Retry-After past
 * one bound for both.
 */
import { expect } from 'chai';
import { FeedBehind, untilLapsesRecorded } from '../../query-api/feeds/lapses.js';
import type { QueryDeps } from '../../query-api/app.js';
import type { Query } from '../../shared-schema/ports/read-store.js';

const NOW = new Date('2026-11-01T03:00:00.000Z');

function depsWith(options: { due: boolean; recorded: Promise<number>; projected: boolean }) {
  const calls: string[] = [];
  const deps = {
    reads: {
      find: async (collection: string, query: Query) => {
        calls.push(`find ${collection} ${JSON.stringify(query.where)} ${JSON.stringify(query.orderBy)} ${query.limit}`);
        return options.due ? [{ _id: 'o1', lapse_due_at: '2026-11-01T02:00:00.000Z' }] : [];
      },
    },
    recordDueLapses: (at: Date) => {
      calls.push(`record ${at.toISOString()}`);
      return options.recorded;
    },
    logHead: async () => {
      calls.push('head');
      return 40;
    },
    waitForPosition: async (position: number) => {
      calls.push(`wait ${position}`);
      return options.projected;
    },
    logWaitTimeoutMs: 100,
  } as unknown as QueryDeps;
  return { deps, calls };
}

const failure = (p: Promise<unknown>) =>
  p.then(
    () => 'answered',
    (e: unknown) => e,
  );

describe('the full feed: lapses due by its instant first', () => {
  it('reads at once when no product is past its 48 h with its lapse unrecorded (one indexed read)', async () => {
    const { deps, calls } = depsWith({ due: false, recorded: Promise.resolve(0), projected: true });
    expect(await untilLapsesRecorded(deps, NOW)).to.equal(null);
    expect(calls).to.deep.equal([
      'find products {"base_state":"accepted","lapse_due_at":{"lt":"2026-11-01T03:00:00.000Z"}} [{"field":"lapse_due_at","dir":"desc"}] 1',
    ]);
  });

  it('has them recorded, waits for the later of its appends and the log head, then reads what is due again', async () => {
    const { deps, calls } = depsWith({ due: true, recorded: Promise.resolve(42), projected: true });
    // The stand-in still finds a product due after the recording: its due instant is what the ETag holds.
    expect(await untilLapsesRecorded(deps, NOW)).to.equal('2026-11-01T02:00:00.000Z');
    expect(calls.slice(1)).to.deep.equal([`record ${NOW.toISOString()}`, 'head', 'wait 42', calls[0]]);
  });

  it('answers 503 with Retry-After when the projections lag, or the recording outlasts the bound', async () => {
    for (const recorded of [Promise.resolve(42), new Promise<number>(() => undefined)]) {
      const { deps } = depsWith({ due: true, recorded, projected: false });
      const error = await failure(untilLapsesRecorded(deps, NOW));
      expect(error).to.be.instanceOf(FeedBehind);
      expect((error as FeedBehind).status).to.equal(503);
      expect((error as FeedBehind).headers).to.deep.equal({ 'Retry-After': '1' });
    }
  });
});
