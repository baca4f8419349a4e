/** The in-process messaging's long-lived maps stay bounded however many keys (tenants, partners) touch them. */
import { expect } from 'chai';
import { ManualClock } from '../../shared-schema/ports/clock.js';
import { InProcessHub, InProcessMessaging } from '../../infra/adapters/messaging/in-process.js';

describe('in-process messaging: bounds of its shared state', () => {
  it('keeps at most its bound of shared numbers, and no number ever reads lower than it was raised to', async () => {
    const hub = new InProcessHub(100);
    const messaging = new InProcessMessaging(new ManualClock(0), hub);
    expect(await messaging.getNumber('ryw:nobody')).to.equal(undefined);
    const raised = new Map<string, number>();
    for (let i = 1; i <= 1_000; i++) {
      const key = `ryw:tenant-${i % 700}`; // some tenants write again: they stay among the held ones
      await messaging.raiseTo(key, i * 10);
      raised.set(key, i * 10);
      expect(hub.numbers.size).to.be.at.most(100);
    }
    for (const [key, value] of raised) expect(await messaging.getNumber(key)).to.be.at.least(value);
    // The latest raises are held exactly (read-your-writes waits for the tenant's own position, not more).
    expect(await messaging.getNumber('ryw:tenant-300')).to.equal(10_000);
    expect(await messaging.getNumber('ryw:tenant-299')).to.equal(9_990);
    // A number is still never lowered once forgotten.
    await messaging.raiseTo('ryw:tenant-1', 5);
    expect(await messaging.getNumber('ryw:tenant-1')).to.be.at.least(7_010);
  });

  it('drops rate counters only after they expired: a full brake window holds while thousands of other keys come and go', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const hub = new InProcessHub();
    const messaging = new InProcessMessaging(clock, hub);
    const windowMs = 60_000;
    const ttlMs = 2 * windowMs; // as the rate brake: a window's key lives two windows
    for (let i = 0; i < 600; i++) await messaging.increment('rate:full:write:0', 1, ttlMs);
    // 5,000 other partners each write once over the next 59 s: sweeps run, nothing of the full key may be dropped.
    for (let i = 0; i < 5_000; i++) {
      if (i % 100 === 0) clock.advance(1_000);
      await messaging.increment(`rate:p${i}:write:0`, 1, ttlMs);
    }
    expect(await messaging.increment('rate:full:write:0', 1, ttlMs)).to.equal(601);
    // Past the ttl, another round of keys: the expired ones are swept, the map holds only live windows.
    clock.advance(ttlMs);
    for (let i = 0; i < 2_048; i++) await messaging.increment(`rate:q${i % 50}:write:2`, 1, ttlMs);
    expect(hub.counters.size).to.be.at.most(50 + 1_024);
    expect(hub.counters.has('rate:full:write:0')).to.equal(false);
    await messaging.close();
  });
});
