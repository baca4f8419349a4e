/**
 * The full feed's share of a query process: every download the process streams draws its offers from one budget of
 * `perSecond` offers a second (FEED_OFFERS_PER_SECOND), so that a download, or many channels downloading at once, take
 * a bounded part of the CPU the shoppers' searches and the partners' writes need. A download is bulk work with no one
 * waiting on each line; a search has a shopper waiting. The budget is a schedule, not a sampler: each page reserves
 * the next `n / perSecond` seconds of it, and waits only once it is ahead of the schedule by `MIN_WAIT_MS`, so pages go
 * out in short runs with few timers. Budget left unused for a while is not saved up beyond `BURST_MS`: a feed of a few
 * thousand offers goes out at once, a million at the rate.
 */
import { setTimeout as sleepFor } from 'node:timers/promises';

/** The unused budget a download may spend at once: a small feed is not slowed at all. */
export const BURST_MS = 100;
/** The least a page waits when it is ahead of the schedule (shorter waits are left to accumulate). */
export const MIN_WAIT_MS = 10;

export class FeedPace {
  /** When, on `now()`'s scale, the offers taken so far have been paid for. */
  private paidUntil = Number.NEGATIVE_INFINITY;

  constructor(
    readonly perSecond: number,
    private readonly now: () => number = () => performance.now(),
    private readonly sleep: (ms: number) => Promise<unknown> = sleepFor,
  ) {
    if (!(perSecond > 0)) throw new RangeError(`perSecond must be positive: ${perSecond}`);
  }

  /** Takes `n` offers from the budget; resolves once streaming them keeps to the rate. */
  async take(n: number): Promise<void> {
    const now = this.now();
    this.paidUntil = Math.max(this.paidUntil, now - BURST_MS) + (n * 1000) / this.perSecond;
    const ahead = this.paidUntil - now;
    if (ahead >= MIN_WAIT_MS) await this.sleep(ahead);
  }
}
