/**
 * The messaging port's contract, run against every adapter (in-process, NATS).
 * Time rules (counter windows) use the fixture's ManualClock when there is one, a short real TTL otherwise.
 */
import { expect } from 'chai';
import type { ManualClock } from '../../shared-schema/ports/clock.js';
import type { Messaging } from '../../shared-schema/ports/messaging.js';
import { waitFor } from '../support/wait-for.js';
import { workQueueContract } from './messaging-contract-work-queue.js';

export interface MessagingFixture {
  messaging: Messaging;
  cleanup: () => Promise<void>;
  clock?: ManualClock;
  /** Whether the adapter's work queues outlive the process (what `messaging.durable` must say). */
  durable: boolean;
  /** Another connection to the same backing (another replica). Omitted only if instances cannot share. */
  peer?: () => Promise<Messaging>;
}

export type OpenMessaging = () => Promise<MessagingFixture>;

/** Keys that need encoding on a wire protocol: separators, wildcards, spaces, non-ASCII, empty. */
export const AWKWARD_KEYS = ['plain', 'with.dot', 'wild*card>', 'space and/slash', 'ação ✓', ''];

export function messagingContract(name: string, open: OpenMessaging): void {
  describe(`messaging contract: ${name}`, function () {
    let fx: MessagingFixture;
    let m: Messaging;
    const peers: Messaging[] = [];

    beforeEach(async function () {
      fx = await open();
      m = fx.messaging;
    });

    afterEach(async function () {
      await Promise.all(peers.splice(0).map((peer) => peer.close()));
      await fx.cleanup();
    });

    /** A second instance on the same backing, or skip: this adapter's instances do not share. */
    async function peer(ctx: Mocha.Context): Promise<Messaging> {
      if (!fx.peer) ctx.skip();
      const other = await fx.peer();
      peers.push(other);
      return other;
    }

    describe('publish / subscribe', function () {
      it('delivers a publication to every subscriber of its subject and to no other subject', async function () {
        const a1: string[] = [];
        const a2: string[] = [];
        const b: string[] = [];
        await m.subscribe('news', (p) => a1.push(p));
        await m.subscribe('news', (p) => a2.push(p));
        await m.subscribe('news.other', (p) => b.push(p));
        await m.publish('news', 'hello ✓');
        await m.publish('news');
        await m.publish('news.other', 'marker');
        await waitFor(() => a1.length === 2 && a2.length === 2 && b.length === 1, 'all three subscribers');
        expect(a1).to.deep.equal(['hello ✓', '']);
        expect(a2).to.deep.equal(['hello ✓', '']);
        expect(b).to.deep.equal(['marker']);
      });

      it('stops delivering to a subscriber once it unsubscribed', async function () {
        const gone: string[] = [];
        const kept: string[] = [];
        const unsubscribe = await m.subscribe('wake', (p) => gone.push(p));
        await m.subscribe('wake', (p) => kept.push(p));
        await m.publish('wake', 'before');
        await waitFor(() => gone.length === 1 && kept.length === 1, 'the first publication');
        await unsubscribe();
        await m.publish('wake', 'after');
        await waitFor(() => kept.length === 2, 'the second publication on the remaining subscriber');
        expect(gone).to.deep.equal(['before']);
        expect(kept).to.deep.equal(['before', 'after']);
      });

      it('reaches a subscriber connected through another instance', async function () {
        const other = await peer(this);
        const got: string[] = [];
        await other.subscribe('position', (p) => got.push(p));
        await m.publish('position', '42');
        await waitFor(() => got.length === 1, 'the publication on the other instance');
        expect(got).to.deep.equal(['42']);
      });
    });

    describe('counters (increment)', function () {
      it('returns the running total per key', async function () {
        expect(await m.increment('rate:k1:w1', 1, 60_000)).to.equal(1);
        expect(await m.increment('rate:k1:w1', 2, 60_000)).to.equal(3);
        expect(await m.increment('rate:k2:w1', 5, 60_000)).to.equal(5);
        expect(await m.increment('rate:k1:w1', 1, 60_000)).to.equal(4);
      });

      it('keeps awkward keys apart', async function () {
        for (const [i, key] of AWKWARD_KEYS.entries()) expect(await m.increment(key, i + 1, 60_000)).to.equal(i + 1);
        for (const [i, key] of AWKWARD_KEYS.entries()) expect(await m.increment(key, 1, 60_000)).to.equal(i + 2);
      });

      it('counts every one of many concurrent increments exactly once', async function () {
        const totals = await Promise.all(Array.from({ length: 20 }, () => m.increment('busy', 1, 60_000)));
        expect([...totals].sort((x, y) => x - y)).to.deep.equal(Array.from({ length: 20 }, (_, i) => i + 1));
      });

      it('starts again from zero once the TTL after its creation has passed (clock)', async function () {
        const clock = fx.clock;
        if (!clock) this.skip();
        expect(await m.increment('window', 1, 60_000)).to.equal(1);
        clock.advance(59_999);
        expect(await m.increment('window', 1, 60_000)).to.equal(2); // a write does not extend the window
        clock.advance(1);
        expect(await m.increment('window', 1, 60_000)).to.equal(1);
        expect(await m.increment('window', 1, 60_000)).to.equal(2);
      });

      it('starts again from zero once the TTL after its creation has passed (real time)', async function () {
        if (fx.clock) this.skip();
        const ttlMs = 1_500;
        const started = Date.now();
        expect(await m.increment('window', 1, ttlMs)).to.equal(1);
        expect(await m.increment('window', 1, ttlMs)).to.equal(2);
        let last = 2;
        await waitFor(async () => (last = await m.increment('window', 1, ttlMs)) === 1, 'the counter to restart', {
          timeoutMs: 10_000,
          intervalMs: 100,
        });
        expect(Date.now() - started).to.be.at.least(ttlMs);
        expect(last).to.equal(1);
      });

      it('is shared by every instance', async function () {
        const other = await peer(this);
        expect(await m.increment('shared', 1, 60_000)).to.equal(1);
        expect(await other.increment('shared', 1, 60_000)).to.equal(2);
        expect(await m.increment('shared', 3, 60_000)).to.equal(5);
        const both = await Promise.all([m, other, m, other].map((x) => x.increment('shared', 1, 60_000)));
        expect([...both].sort()).to.deep.equal([6, 7, 8, 9]);
      });
    });

    describe('shared numbers (raiseTo / getNumber)', function () {
      it('is undefined until raised, then reads back, and is never lowered', async function () {
        expect(await m.getNumber('pos:key1')).to.equal(undefined);
        await m.raiseTo('pos:key1', 10);
        expect(await m.getNumber('pos:key1')).to.equal(10);
        await m.raiseTo('pos:key1', 5);
        expect(await m.getNumber('pos:key1')).to.equal(10);
        await m.raiseTo('pos:key1', 12);
        expect(await m.getNumber('pos:key1')).to.equal(12);
        expect(await m.getNumber('pos:key2')).to.equal(undefined);
      });

      it('keeps awkward keys apart', async function () {
        for (const [i, key] of AWKWARD_KEYS.entries()) await m.raiseTo(key, 100 + i);
        for (const [i, key] of AWKWARD_KEYS.entries()) expect(await m.getNumber(key)).to.equal(100 + i);
      });

      it('ends at the highest of many concurrent raises', async function () {
        const values = [7, 3, 19, 1, 20, 11, 5, 16, 2, 13, 8, 17, 4, 10, 14, 6, 18, 9, 15, 12];
        await Promise.all(values.map((v) => m.raiseTo('race', v)));
        expect(await m.getNumber('race')).to.equal(20);
      });

      it('is shared by every instance', async function () {
        const other = await peer(this);
        await m.raiseTo('shared-pos', 1_000);
        expect(await other.getNumber('shared-pos')).to.equal(1_000);
        await other.raiseTo('shared-pos', 999);
        await other.raiseTo('shared-pos', 1_001);
        expect(await m.getNumber('shared-pos')).to.equal(1_001);
      });
    });

    workQueueContract(
      () => m,
      peer,
      () => fx.durable,
    );
  });
}
