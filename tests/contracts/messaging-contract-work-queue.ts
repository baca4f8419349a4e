/** The work-queue half of the messaging contract (see messaging-contract.ts). */
import { expect } from 'chai';
import type { Messaging, WorkHandler, WorkItem } from '../../shared-schema/ports/messaging.js';
import { waitFor } from '../support/wait-for.js';

type Peer = (ctx: Mocha.Context) => Promise<Messaging>;

let queues = 0;

export function workQueueContract(messaging: () => Messaging, peer: Peer, durable: () => boolean): void {
  describe('work queue', function () {
    let m: Messaging;
    let queue: string;
    const stops: Array<() => Promise<void>> = [];
    const release: Array<() => void> = [];

    beforeEach(function () {
      m = messaging();
      queue = `jobs-${++queues}`;
    });

    afterEach(async function () {
      for (const r of release.splice(0)) r();
      await Promise.all(stops.splice(0).map((stop) => stop()));
    });

    /** Consumes `queue`, recording every delivery. */
    async function consume(
      handler: WorkHandler,
      options: Parameters<Messaging['consume']>[2] = {},
      on: Messaging = m,
    ): Promise<{ seen: WorkItem[]; stop: () => Promise<void> }> {
      const seen: WorkItem[] = [];
      const stop = await on.consume(
        queue,
        async (item) => {
          seen.push({ ...item });
          return handler(item);
        },
        options,
      );
      stops.push(stop);
      return { seen, stop };
    }

    /** A handler result that only arrives when the test releases it (or at the end of the test). */
    function held(): Promise<'ack'> {
      return new Promise((resolve) => release.push(() => resolve('ack')));
    }

    const ack: WorkHandler = async () => 'ack';
    const idsOf = (items: WorkItem[]) => items.map((item) => item.id);

    it('says whether an enqueued item outlives the process', function () {
      expect(m.durable).to.equal(durable());
    });

    it('delivers items enqueued before and after the consumer started, once each with deliveries 1', async function () {
      await m.enqueue(queue, 'job/1 ✓', 'payload ✓');
      const { seen } = await consume(ack);
      await m.enqueue(queue, 'job-2', '');
      await waitFor(() => seen.length === 2, 'both items');
      expect(seen).to.deep.equal([
        { id: 'job/1 ✓', payload: 'payload ✓', deliveries: 1 },
        { id: 'job-2', payload: '', deliveries: 1 },
      ]);
    });

    it('removes an acked item: its id can be enqueued again and is delivered afresh', async function () {
      await m.enqueue(queue, 'a', 'first');
      const first = await consume(ack);
      await waitFor(() => first.seen.length === 1, 'the first delivery');
      await first.stop();
      await m.enqueue(queue, 'a', 'second');
      await m.enqueue(queue, 'z', 'marker');
      const second = await consume(ack);
      await waitFor(() => idsOf(second.seen).includes('z'), 'the marker');
      expect(second.seen).to.deep.equal([
        { id: 'a', payload: 'second', deliveries: 1 },
        { id: 'z', payload: 'marker', deliveries: 1 },
      ]);
    });

    it('redelivers on retry or a throwing handler, counting the deliveries', async function () {
      await m.enqueue(queue, 'flaky', 'p');
      // Only 'flaky' fails: a marker that threw on its first delivery would be delivered again at once, and
      // waiting for exactly four deliveries would then hang whenever a poll missed the instant between the two.
      const { seen } = await consume(async (item) => {
        if (item.id !== 'flaky') return 'ack';
        if (item.deliveries === 1) throw new Error('boom');
        return item.deliveries === 2 ? 'retry' : 'ack';
      });
      await waitFor(() => seen.length === 3, 'three deliveries');
      await m.enqueue(queue, 'z', 'marker');
      await waitFor(
        async () => idsOf(seen).includes('z') && (await m.queueStats(queue)).pending === 0,
        'the marker, acked',
      );
      expect(seen.map((item) => [item.id, item.deliveries])).to.deep.equal([
        ['flaky', 1],
        ['flaky', 2],
        ['flaky', 3],
        ['z', 1],
      ]);
      expect(await m.deadLetters(queue)).to.deep.equal([]);
    });

    it('moves an item to the dead letters after maxDeliveries, and then no longer holds its id', async function () {
      await m.enqueue(queue, 'poison', 'bad');
      const { seen } = await consume(async (item) => (item.payload === 'bad' ? 'retry' : 'ack'), { maxDeliveries: 3 });
      await waitFor(async () => (await m.deadLetters(queue)).length === 1, 'the dead letter');
      expect(await m.deadLetters(queue)).to.deep.equal([{ id: 'poison', payload: 'bad', deliveries: 3 }]);
      await m.enqueue(queue, 'poison', 'fixed');
      await waitFor(() => seen.some((item) => item.payload === 'fixed'), 'the re-enqueued item');
      expect(seen.map((item) => [item.payload, item.deliveries])).to.deep.equal([
        ['bad', 1],
        ['bad', 2],
        ['bad', 3],
        ['fixed', 1],
      ]);
      expect(await m.deadLetters(queue)).to.have.length(1);
    });

    it('redelivers an item left un-acked for ackWaitMs', async function () {
      await m.enqueue(queue, 'slow', 'p');
      const { seen } = await consume((item) => (item.deliveries === 1 ? held() : ack(item)), { ackWaitMs: 400 });
      await waitFor(() => seen.length === 2, 'the redelivery');
      expect(seen.map((item) => item.deliveries)).to.deep.equal([1, 2]);
    });

    it('dead-letters an item whose last delivery ran out of ack wait', async function () {
      await m.enqueue(queue, 'stuck', 'p');
      await consume(() => held(), { ackWaitMs: 300, maxDeliveries: 1 });
      await waitFor(async () => (await m.deadLetters(queue)).length === 1, 'the dead letter');
      expect(await m.deadLetters(queue)).to.deep.equal([
        { id: 'stuck', payload: 'p', deliveries: 1, lastError: 'no answer within the ack wait' },
      ]);
    });

    it('keeps with a dead letter the message its handler threw on the last delivery', async function () {
      await m.enqueue(queue, 'broken', 'p');
      await consume(
        async (item) => {
          throw new Error(`store unreachable (delivery ${item.deliveries})`);
        },
        { maxDeliveries: 2 },
      );
      await waitFor(async () => (await m.deadLetters(queue)).length === 1, 'the dead letter');
      expect(await m.deadLetters(queue)).to.deep.equal([
        { id: 'broken', payload: 'p', deliveries: 2, lastError: 'store unreachable (delivery 2)' },
      ]);
    });

    it('lists dead letters oldest first, up to a limit, and counts them with the pending items', async function () {
      for (const id of ['d1', 'd2', 'd3']) await m.enqueue(queue, id, `p-${id}`);
      const { seen } = await consume(async (item) => (item.id.startsWith('d') ? 'retry' : 'ack'), { maxDeliveries: 1 });
      await waitFor(async () => (await m.queueStats(queue)).deadLetters === 3, 'three dead letters');
      expect(idsOf(await m.deadLetters(queue))).to.deep.equal(['d1', 'd2', 'd3']);
      expect(idsOf(await m.deadLetters(queue, { limit: 2 }))).to.deep.equal(['d1', 'd2']);
      expect(await m.deadLetters(queue, { limit: 0 })).to.deep.equal([]);
      expect(await m.queueStats(queue)).to.deep.equal({ pending: 0, deadLetters: 3 });
      expect(seen).to.have.length(3);
    });

    it('counts pending items until they are acked', async function () {
      expect(await m.queueStats(queue)).to.deep.equal({ pending: 0, deadLetters: 0 });
      await m.enqueue(queue, 'w1', '');
      await m.enqueue(queue, 'w2', '');
      expect(await m.queueStats(queue)).to.deep.equal({ pending: 2, deadLetters: 0 });
      let gate: (() => void) | undefined;
      const { seen } = await consume(
        (item) => (item.id === 'w1' ? new Promise((resolve) => (gate = () => resolve('ack'))) : ack(item)),
        { concurrency: 2 },
      );
      await waitFor(() => gate !== undefined && seen.length === 2, 'both delivered');
      await waitFor(async () => (await m.queueStats(queue)).pending === 1, 'w2 acked, w1 still being handled');
      gate!();
      await waitFor(async () => (await m.queueStats(queue)).pending === 0, 'w1 acked');
    });

    it('requeues chosen dead letters, then all of them, as fresh items that run again', async function () {
      let fixed = false;
      for (const id of ['r1', 'r2', 'r3']) await m.enqueue(queue, id, `p-${id}`);
      const { seen } = await consume(async () => (fixed ? 'ack' : 'retry'), { maxDeliveries: 2 });
      await waitFor(async () => (await m.queueStats(queue)).deadLetters === 3, 'three dead letters');
      expect(await m.requeueDeadLetters(queue, [])).to.deep.equal([]);
      expect(await m.requeueDeadLetters(queue, ['nope'])).to.deep.equal([]);
      fixed = true;
      expect(await m.requeueDeadLetters(queue, ['r2'])).to.deep.equal([{ id: 'r2', payload: 'p-r2', deliveries: 2 }]);
      await waitFor(() => seen.filter((item) => item.id === 'r2').length === 3, 'r2 delivered again');
      expect(seen.filter((item) => item.id === 'r2').map((item) => item.deliveries)).to.deep.equal([1, 2, 1]);
      expect(idsOf(await m.deadLetters(queue))).to.deep.equal(['r1', 'r3']);
      expect(idsOf(await m.requeueDeadLetters(queue))).to.deep.equal(['r1', 'r3']);
      await waitFor(async () => seen.length === 9 && (await m.queueStats(queue)).pending === 0, 'r1 and r3 done');
      expect(await m.deadLetters(queue)).to.deep.equal([]);
      expect(await m.queueStats(queue)).to.deep.equal({ pending: 0, deadLetters: 0 });
    });

    it('requeues through another instance the dead letters this one made', async function () {
      const other = await peer(this);
      await m.enqueue(queue, 'x', 'p');
      await consume(async () => 'retry', { maxDeliveries: 1 });
      await waitFor(async () => (await other.deadLetters(queue)).length === 1, 'the dead letter, seen by the other');
      await stops.pop()!();
      expect(idsOf(await other.requeueDeadLetters(queue))).to.deep.equal(['x']);
      expect(await m.queueStats(queue)).to.deep.equal({ pending: 1, deadLetters: 0 });
    });

    it('does not add an id that is already pending, whether waiting or being handled', async function () {
      await m.enqueue(queue, 'dup', 'one');
      await m.enqueue(queue, 'dup', 'two');
      let gate: (() => void) | undefined;
      const { seen } = await consume((item) =>
        item.id === 'dup' ? new Promise((resolve) => (gate = () => resolve('ack'))) : ack(item),
      );
      await waitFor(() => gate !== undefined, 'the first delivery');
      await m.enqueue(queue, 'dup', 'three'); // while it is being handled
      gate!();
      await m.enqueue(queue, 'z', 'marker');
      await waitFor(() => idsOf(seen).includes('z'), 'the marker');
      expect(seen).to.deep.equal([
        { id: 'dup', payload: 'one', deliveries: 1 },
        { id: 'z', payload: 'marker', deliveries: 1 },
      ]);
    });

    it('hands out at most `concurrency` items at a time', async function () {
      for (let i = 0; i < 9; i++) await m.enqueue(queue, `c${i}`, String(i));
      let active = 0;
      let most = 0;
      // The work waits at a gate until three items are in hand at once (not a pause that the next delivery has to
      // beat): the limit is reached whatever the machine's speed; a fourth item handed out meanwhile shows in `most`.
      let open!: () => void;
      const gate = new Promise<void>((resolve) => (open = resolve));
      const { seen } = await consume(
        async () => {
          active += 1;
          most = Math.max(most, active);
          await gate; // the work itself
          active -= 1;
          return 'ack';
        },
        { concurrency: 3 },
      );
      await waitFor(() => active === 3, 'three items in hand');
      open();
      await waitFor(() => seen.length === 9 && active === 0, 'all nine items');
      expect(most).to.equal(3);
      expect(new Set(idsOf(seen)).size).to.equal(9);
    });

    it('keeps items enqueued through an instance that has closed since', async function () {
      const other = await peer(this);
      await other.enqueue(queue, 'left-behind', 'p');
      await other.close();
      const { seen } = await consume(ack);
      await waitFor(() => seen.length === 1, 'the item');
      expect(seen).to.deep.equal([{ id: 'left-behind', payload: 'p', deliveries: 1 }]);
    });

    it('is shared by every instance: consumers compete, each item is handled once', async function () {
      const other = await peer(this);
      const mine = await consume(ack, { concurrency: 2 });
      const theirs = await consume(ack, { concurrency: 2 }, other);
      for (let i = 0; i < 10; i++) await (i % 2 ? m : other).enqueue(queue, `s${i}`, String(i));
      await waitFor(() => mine.seen.length + theirs.seen.length === 10, 'all ten items');
      const all = [...idsOf(mine.seen), ...idsOf(theirs.seen)].sort();
      expect(all).to.deep.equal(Array.from({ length: 10 }, (_, i) => `s${i}`).sort());
      expect(await other.deadLetters(queue)).to.deep.equal([]);
    });
  });
}
