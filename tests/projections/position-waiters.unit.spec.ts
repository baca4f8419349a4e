import { expect } from 'chai';
import { PositionWaiters } from '../../projections/position-waiters.js';

describe('PositionWaiters (read-your-writes behind every live projection runner)', () => {
  it('answers true at once for a position reached, and true to each wait once its position is reached', async () => {
    const waiters = new PositionWaiters();
    waiters.advance(5);
    expect(await waiters.wait(5, 60_000)).to.equal(true);
    const seven = waiters.wait(7, 60_000);
    const nine = waiters.wait(9, 60_000);
    waiters.advance(8);
    expect(await seven).to.equal(true);
    expect(waiters.pending).to.equal(1);
    waiters.advance(3); // never lowered
    expect(waiters.position).to.equal(8);
    waiters.advance(9);
    expect(await nine).to.equal(true);
    expect(waiters.pending).to.equal(0);
  });

  it('answers false after the timeout and forgets the wait; endAll answers false to every pending wait', async () => {
    const waiters = new PositionWaiters();
    expect(await waiters.wait(1, 1)).to.equal(false);
    expect(waiters.pending).to.equal(0);
    const a = waiters.wait(2, 60_000);
    const b = waiters.wait(3, 60_000);
    waiters.endAll();
    expect(await Promise.all([a, b])).to.deep.equal([false, false]);
    expect(waiters.pending).to.equal(0);
  });
});
