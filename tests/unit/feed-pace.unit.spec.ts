/**
 * The full feed's budget (query-api/feeds/pace.ts), on a clock of the test's own: the offers streamed keep to the rate
 * over a long download, a small feed is not slowed, and downloads at once share one budget.
 */
import { expect } from 'chai';
import { BURST_MS, FeedPace, MIN_WAIT_MS } from '../../query-api/feeds/pace.js';

/** A clock that moves only when a page sleeps, or when the test says work took time. */
function manualTime(): {
  now: () => number;
  sleep: (ms: number) => Promise<void>;
  work: (ms: number) => void;
  slept: number[];
} {
  let t = 1_000_000;
  const slept: number[] = [];
  return {
    now: () => t,
    sleep: (ms) => {
      slept.push(ms);
      t += ms;
      return Promise.resolve();
    },
    work: (ms) => (t += ms),
    slept,
  };
}

describe('FeedPace', () => {
  it('holds a long download to the rate: a million offers at 200,000 a second take 5 s, in waits of at least MIN_WAIT_MS', async () => {
    const time = manualTime();
    const pace = new FeedPace(200_000, time.now, time.sleep);
    const start = time.now();
    for (let sent = 0; sent < 1_000_000; sent += 250) {
      time.work(0.2); // reading and writing a page
      await pace.take(250);
    }
    const seconds = (time.now() - start) / 1000;
    // The first BURST_MS of budget is spent at once, the rest at the rate; the last page's wait (under MIN_WAIT_MS)
    // is left to the next download.
    expect(seconds).to.be.within(5 - (BURST_MS + MIN_WAIT_MS) / 1000, 5 + 0.001);
    expect(Math.min(...time.slept)).to.be.at.least(MIN_WAIT_MS);
  });

  it('does not slow a download that is already slower than the rate', async () => {
    const time = manualTime();
    const pace = new FeedPace(200_000, time.now, time.sleep);
    for (let sent = 0; sent < 100_000; sent += 250) {
      time.work(2); // 250 offers in 2 ms: 125,000 a second
      await pace.take(250);
    }
    expect(time.slept).to.deep.equal([]);
  });

  it('sends a feed that fits in the unused budget at once', async () => {
    const time = manualTime();
    const pace = new FeedPace(200_000, time.now, time.sleep);
    for (let sent = 0; sent < (200_000 * BURST_MS) / 1000; sent += 250) await pace.take(250);
    expect(time.slept).to.deep.equal([]);
  });

  it('shares one budget between downloads at once: two take as long together as one of both their sizes', async () => {
    const time = manualTime();
    const pace = new FeedPace(100_000, time.now, time.sleep);
    const start = time.now();
    const download = async (): Promise<void> => {
      for (let sent = 0; sent < 250_000; sent += 250) await pace.take(250);
    };
    await Promise.all([download(), download()]);
    expect((time.now() - start) / 1000).to.be.within(5 - (BURST_MS + MIN_WAIT_MS) / 1000, 5 + 0.001);
  });

  it('refuses a rate that is not positive', () => {
    expect(() => new FeedPace(0)).to.throw(RangeError);
  });
});
