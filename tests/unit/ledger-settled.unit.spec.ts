/** A window that has ended is read only once the projections hold the log's head as of the request. */
import { expect } from 'chai';
import { LedgerBehind, untilLedgerSettled } from '../../query-api/routes/ledger.js';
import type { QueryDeps } from '../../query-api/app.js';
import { ManualClock } from '../../shared-schema/ports/clock.js';

const NOW = Date.parse('2026-11-01T03:00:00.000Z');

function depsWith(projected: boolean) {
  const calls: string[] = [];
  const deps = {
    clock: new ManualClock(NOW),
    logHead: async () => {
      calls.push('head');
      return 4242;
    },
    waitForPosition: async (position: number, timeoutMs: number) => {
      calls.push(`wait ${position} ${timeoutMs}`);
      return projected;
    },
    logWaitTimeoutMs: 250,
  } as unknown as QueryDeps;
  return { deps, calls };
}

describe('ledger reads of a window that has ended', () => {
  it('wait until the projections have committed the head of the log read at the request', async () => {
    const { deps, calls } = depsWith(true);
    await untilLedgerSettled(deps, new Date(NOW).toISOString()); // ends now: ended
    await untilLedgerSettled(deps, '2026-10-01T03:00:00.000Z');
    expect(calls).to.deep.equal(['head', 'wait 4242 250', 'head', 'wait 4242 250']);
  });

  it('answer 503 with Retry-After rather than a window that could still change', async () => {
    const { deps } = depsWith(false);
    const error = await untilLedgerSettled(deps, '2026-10-01T03:00:00.000Z').then(
      () => 'answered',
      (e: unknown) => e,
    );
    expect(error).to.be.instanceOf(LedgerBehind);
    expect((error as LedgerBehind).status).to.equal(503);
    expect((error as LedgerBehind).headers).to.deep.equal({ 'Retry-After': '1' });
  });

  it('do not wait for a window that has not ended', async () => {
    const { deps, calls } = depsWith(false);
    await untilLedgerSettled(deps, new Date(NOW + 1).toISOString());
    expect(calls).to.deep.equal([]);
  });
});
