/** A window that has ended is read only once the projections hold the log's head as of the request. */
import { expect } from 'chai';
import { LedgerBehind, untilLedgerSettled } from '../../query-api/routes/ledger.js';
import type { QueryDeps } from '../../query-api/app.js';
import { ManualClock } from '../../shared-schema/ports/clock.js';
import { LEDGER, ledgerScopeId } from '../../shared-schema/read-models/ledger.js';
import { SettledWatermark } from '../../query-api/ledger.js';

const NOW = Date.parse('2026-11-01T03:00:00.000Z');

const TENANT = { partnerId: 'ptn_1', env: 'live' } as const;

/** `booked`: when the tenant's last projected movement was booked (none when undefined). */
function depsWith(projected: boolean, booked?: string) {
  const calls: string[] = [];
  const deps = {
    clock: new ManualClock(NOW),
    reads: {
      get: async (collection: string, id: string) => {
        calls.push(`get ${collection} ${id}`);
        return booked === undefined ? null : { _id: id, booked_at: booked };
      },
    },
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
    await untilLedgerSettled(deps, TENANT, new Date(NOW).toISOString()); // ends now: ended
    await untilLedgerSettled(deps, TENANT, '2026-10-01T03:00:00.000Z');
    const state = `get ${LEDGER.state} ${ledgerScopeId(TENANT)}`;
    expect(calls).to.deep.equal([state, 'head', 'wait 4242 250', state, 'head', 'wait 4242 250']);
  });

  it("wait for nothing once the tenant's last projected movement is booked at or after the window's end", async () => {
    const { deps, calls } = depsWith(false, '2026-10-01T03:00:00.000Z');
    await untilLedgerSettled(deps, TENANT, '2026-10-01T03:00:00.000Z');
    await untilLedgerSettled(deps, TENANT, '2026-09-30T00:00:00.000Z');
    expect(calls.filter((c) => !c.startsWith('get '))).to.deep.equal([]);
    // Booked just before the end: a movement in flight could still fall inside the window.
    const before = depsWith(true, '2026-10-01T02:59:59.999Z');
    await untilLedgerSettled(before.deps, TENANT, '2026-10-01T03:00:00.000Z');
    expect(before.calls.slice(1)).to.deep.equal(['head', 'wait 4242 250']);
  });

  it('answer 503 with Retry-After rather than a window that could still change', async () => {
    const { deps } = depsWith(false);
    const error = await untilLedgerSettled(deps, TENANT, '2026-10-01T03:00:00.000Z').then(
      () => 'answered',
      (e: unknown) => e,
    );
    expect(error).to.be.instanceOf(LedgerBehind);
    expect((error as LedgerBehind).status).to.equal(503);
    expect((error as LedgerBehind).headers).to.deep.equal({ 'Retry-After': '1' });
  });

  it('read the head once: a window ending before a head already projected was read skips it', async () => {
    const { deps, calls } = depsWith(true);
    deps.ledgerSettled = new SettledWatermark();
    await untilLedgerSettled(deps, TENANT, '2026-10-01T03:00:00.000Z');
    expect(calls.filter((c) => c === 'head')).to.have.length(1);
    // The same window again, an earlier one, one ending at the instant the head was asked: no head, no wait.
    await untilLedgerSettled(deps, TENANT, '2026-10-01T03:00:00.000Z');
    await untilLedgerSettled(deps, TENANT, '2026-09-01T03:00:00.000Z');
    await untilLedgerSettled(deps, TENANT, new Date(NOW).toISOString());
    expect(calls.filter((c) => !c.startsWith('get '))).to.deep.equal(['head', 'wait 4242 250']);
    // A window ending after the clock reading the head was asked at: a movement could be in flight; read it again.
    (deps.clock as ManualClock).advance(60_000);
    await untilLedgerSettled(deps, TENANT, new Date(NOW + 1).toISOString());
    await untilLedgerSettled(deps, TENANT, new Date(NOW + 60_000).toISOString());
    expect(calls.filter((c) => c === 'head')).to.have.length(2);
  });

  it('keep no mark from a head that was not projected in time', async () => {
    const { deps, calls } = depsWith(false);
    deps.ledgerSettled = new SettledWatermark();
    for (let i = 0; i < 2; i++)
      await untilLedgerSettled(deps, TENANT, '2026-10-01T03:00:00.000Z').then(
        () => expect.fail('answered'),
        (e: unknown) => expect(e).to.be.instanceOf(LedgerBehind),
      );
    expect(calls.filter((c) => c === 'head')).to.have.length(2);
  });

  it('drop the mark when the clock reads earlier than it (a manual clock moved back)', async () => {
    const { deps, calls } = depsWith(true);
    deps.ledgerSettled = new SettledWatermark();
    await untilLedgerSettled(deps, TENANT, '2026-10-01T03:00:00.000Z');
    // Bookings now follow a clock behind the mark: the head is read again before a window is trusted.
    (deps.clock as ManualClock).set(new Date(NOW - 60_000));
    await untilLedgerSettled(deps, TENANT, '2026-10-01T03:00:00.000Z');
    expect(calls.filter((c) => c === 'head')).to.have.length(2);
  });

  it('do not wait for a window that has not ended', async () => {
    const { deps, calls } = depsWith(false);
    await untilLedgerSettled(deps, TENANT, new Date(NOW + 1).toISOString());
    expect(calls).to.deep.equal([]);
  });
});
