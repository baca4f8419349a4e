/**
 * One in-process work queue: at-least-once delivery with ack / retry, redelivery after the ack wait,
 * dead letters after `maxDeliveries`, an id that is already pending is not added twice.
 *
 * The ack wait runs on real timers (like the NATS server's `ack_wait`): it guards against a stuck handler,
 * it is not a business time rule, so it does not read the injected clock.
 */
import type { QueueStats, WorkHandler, WorkItem } from '../../../shared-schema/ports/messaging.js';
import { ACK_WAIT_RAN_OUT, errorMessage, type ConsumerSettings } from './options.js';

interface Consumer extends ConsumerSettings {
  handler: WorkHandler;
  active: number;
  onIdle: Array<() => void>;
}

interface Pending {
  id: string;
  payload: string;
  deliveries: number;
  /** Why the last delivery failed, if it threw or ran out of ack wait. */
  lastError?: string;
  /** The delivery currently in flight, if any. */
  delivery?: Delivery;
}

interface Delivery {
  consumer: Consumer;
  timer?: NodeJS.Timeout;
  /** The consumer's slot was given back (the handler settled or the ack wait ran out). */
  released: boolean;
}

export class InProcessWorkQueue {
  private readonly pending = new Map<string, Pending>();
  /**
   * The items waiting for a consumer, oldest first, from `readyHead` on. An item acked late (after its ack wait ran
   * out and it was queued again) stays here and is skipped when its turn comes: removing it on the ack would copy
   * the whole backlog on every ack.
   */
  private ready: Pending[] = [];
  private readyHead = 0;
  private readonly dead: WorkItem[] = [];
  private readonly consumers: Consumer[] = [];
  private turn = 0;

  enqueue(id: string, payload: string): void {
    if (this.pending.has(id)) return;
    const item: Pending = { id, payload, deliveries: 0 };
    this.pending.set(id, item);
    this.ready.push(item);
    this.dispatch();
  }

  /** Starts a consumer; the returned function stops it and waits for its deliveries in flight. */
  consume(handler: WorkHandler, settings: ConsumerSettings): () => Promise<void> {
    const consumer: Consumer = { ...settings, handler, active: 0, onIdle: [] };
    this.consumers.push(consumer);
    this.dispatch();
    return async () => {
      const at = this.consumers.indexOf(consumer);
      if (at >= 0) this.consumers.splice(at, 1);
      if (consumer.active > 0) await new Promise<void>((resolve) => consumer.onIdle.push(resolve));
    };
  }

  deadLetters(limit = Infinity): WorkItem[] {
    return this.dead.slice(0, limit).map((item) => ({ ...item }));
  }

  /** Moves the dead letters with these ids (all when omitted) back into the queue, as fresh items. */
  requeueDeadLetters(ids?: readonly string[]): WorkItem[] {
    const chosen = ids === undefined ? undefined : new Set(ids);
    const moved: WorkItem[] = [];
    for (let i = 0; i < this.dead.length;) {
      const item = this.dead[i];
      if (chosen && !chosen.has(item.id)) {
        i += 1;
        continue;
      }
      this.dead.splice(i, 1);
      moved.push({ ...item });
      this.enqueue(item.id, item.payload);
    }
    return moved;
  }

  stats(): QueueStats {
    return { pending: this.pending.size, deadLetters: this.dead.length };
  }

  private dispatch(): void {
    while (this.readyHead < this.ready.length) {
      const consumer = this.freeConsumer();
      if (!consumer) return;
      const item = this.takeReady();
      if (this.pending.get(item.id) !== item) continue; // acked late while it waited
      if (item.deliveries >= consumer.maxDeliveries) this.bury(item);
      else this.deliver(item, consumer);
    }
  }

  /** The oldest waiting item; the array is compacted once half of it has been taken (amortized O(1)). */
  private takeReady(): Pending {
    const item = this.ready[this.readyHead];
    this.readyHead += 1;
    if (this.readyHead === this.ready.length) {
      this.ready = [];
      this.readyHead = 0;
    } else if (this.readyHead >= 1024 && this.readyHead * 2 >= this.ready.length) {
      this.ready = this.ready.slice(this.readyHead);
      this.readyHead = 0;
    }
    return item;
  }

  /** Round robin over the consumers with a free slot. */
  private freeConsumer(): Consumer | undefined {
    for (let i = 0; i < this.consumers.length; i++) {
      const consumer = this.consumers[(this.turn + i) % this.consumers.length];
      if (consumer.active < consumer.concurrency) {
        this.turn = (this.turn + i + 1) % this.consumers.length;
        return consumer;
      }
    }
    return undefined;
  }

  private deliver(item: Pending, consumer: Consumer): void {
    item.deliveries += 1;
    item.lastError = undefined;
    consumer.active += 1;
    const delivery: Delivery = { consumer, released: false };
    delivery.timer = setTimeout(() => this.settle(item, delivery, 'expired'), consumer.ackWaitMs);
    delivery.timer.unref();
    item.delivery = delivery;
    const view: WorkItem = { id: item.id, payload: item.payload, deliveries: item.deliveries };
    Promise.resolve()
      .then(() => consumer.handler(view))
      .then(
        (result) => this.settle(item, delivery, result === 'ack' ? 'ack' : 'retry'),
        (err: unknown) => this.settle(item, delivery, 'retry', errorMessage(err)),
      );
  }

  private settle(item: Pending, delivery: Delivery, outcome: 'ack' | 'retry' | 'expired', error?: string): void {
    this.release(delivery);
    const stillPending = this.pending.get(item.id) === item;
    if (stillPending && outcome === 'ack') {
      // A late ack (after the ack wait ran out) still counts: the work was done.
      this.pending.delete(item.id); // if it was queued again, dispatch skips it
    } else if (stillPending && item.delivery === delivery) {
      item.delivery = undefined;
      item.lastError = outcome === 'expired' ? ACK_WAIT_RAN_OUT : error;
      if (item.deliveries >= delivery.consumer.maxDeliveries) this.bury(item);
      else this.ready.push(item);
    }
    this.dispatch();
  }

  private release(delivery: Delivery): void {
    if (delivery.released) return;
    delivery.released = true;
    clearTimeout(delivery.timer);
    const consumer = delivery.consumer;
    consumer.active -= 1;
    if (consumer.active === 0) for (const resolve of consumer.onIdle.splice(0)) resolve();
  }

  private bury(item: Pending): void {
    this.pending.delete(item.id);
    this.dead.push({
      id: item.id,
      payload: item.payload,
      deliveries: item.deliveries,
      ...(item.lastError === undefined ? {} : { lastError: item.lastError }),
    });
  }
}
