/**
 * The in-process work queue's own bookkeeping, beyond the messaging contract: an item acked late, after its ack wait
 * ran out and it was queued again, is not delivered again; a long backlog is delivered in order.
 */
import { expect } from 'chai';
import { InProcessWorkQueue } from '../../infra/adapters/messaging/in-process-work-queue.js';
import type { WorkItem } from '../../shared-schema/ports/messaging.js';
import { waitFor } from '../support/wait-for.js';

describe('in-process work queue', function () {
  const stops: Array<() => Promise<void>> = [];
  afterEach(async function () {
    await Promise.all(stops.splice(0).map((stop) => stop()));
  });

  it('does not deliver again an item acked late while it waited to be redelivered', async function () {
    const queue = new InProcessWorkQueue();
    const seen: string[] = [];
    let ackFirstA!: () => void;
    queue.enqueue('A', 'a');
    queue.enqueue('B', 'b');
    stops.push(
      queue.consume(
        async (item: WorkItem) => {
          seen.push(`${item.id}${item.deliveries}`);
          if (item.id === 'A' && item.deliveries === 1) {
            // Held past its ack wait: A is queued again behind B, which then takes the only slot.
            return new Promise<'ack'>((resolve) => (ackFirstA = () => resolve('ack')));
          }
          if (item.id === 'B' && item.deliveries === 1) {
            // A waits in the queue now; its first delivery answers late. B is then held past its own ack wait.
            ackFirstA();
            return new Promise<'ack'>(() => undefined);
          }
          return 'ack';
        },
        { concurrency: 1, maxDeliveries: 5, ackWaitMs: 150 },
      ),
    );
    await waitFor(() => queue.stats().pending === 0, 'both items done');
    expect(seen).to.deep.equal(['A1', 'B1', 'B2']);

    queue.enqueue('A', 'again');
    await waitFor(() => seen.length === 4, 'the id enqueued afresh');
    expect(seen[3]).to.equal('A1');
  });

  it('delivers a backlog of thousands in the order it was enqueued, each once', async function () {
    const queue = new InProcessWorkQueue();
    const ids = Array.from({ length: 5000 }, (_, i) => `job-${i}`);
    for (const id of ids) queue.enqueue(id, id);
    const seen: string[] = [];
    stops.push(
      queue.consume(
        async (item: WorkItem) => {
          seen.push(item.id);
          return 'ack';
        },
        { concurrency: 4, maxDeliveries: 5, ackWaitMs: 30_000 },
      ),
    );
    // More arrive while the backlog is being worked off.
    for (let i = 5000; i < 6000; i++) {
      ids.push(`job-${i}`);
      queue.enqueue(`job-${i}`, '');
    }
    await waitFor(() => queue.stats().pending === 0, 'the backlog done');
    expect(seen).to.deep.equal(ids);
  });
});
