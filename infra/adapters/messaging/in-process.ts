/**
 * The in-process messaging adapter (embedded default). State lives in an `InProcessHub`; several
 * `InProcessMessaging` built on one hub behave like several connections to one server (shared counters,
 * subjects and queues), which is how the contract suite checks sharing. Nothing survives a restart:
 * the embedded reactors rebuild their work from the log.
 */
import { systemClock, type Clock } from '../../../shared-schema/ports/clock.js';
import type {
  Messaging,
  QueueStats,
  Unsubscribe,
  WorkHandler,
  WorkItem,
  WorkQueueOptions,
} from '../../../shared-schema/ports/messaging.js';
import { InProcessWorkQueue } from './in-process-work-queue.js';
import { checkIncrement, checkLimit, checkNumber, consumerSettings } from './options.js';

type Listener = (payload: string) => void;

/** Expired counters are swept after this many increments (they are ignored as soon as they expire). */
const SWEEP_EVERY = 1024;

/**
 * Shared numbers kept (read-your-writes: one per tenant that wrote). Past it the least recently raised number is
 * forgotten and every number not held reads as the highest one forgotten: a reader may then wait for a position
 * older than its own write's, never miss its own write (a number is never read lower than it was raised to).
 */
export const MAX_SHARED_NUMBERS = 10_000;

/** The hub's shared numbers, bounded as MAX_SHARED_NUMBERS says. */
export class SharedNumbers {
  private readonly held = new Map<string, number>();
  private forgotten: number | undefined;

  constructor(private readonly capacity = MAX_SHARED_NUMBERS) {}

  get size(): number {
    return this.held.size;
  }

  get(key: string): number | undefined {
    return this.held.get(key) ?? this.forgotten;
  }

  raiseTo(key: string, value: number): void {
    const current = this.get(key);
    if (current !== undefined && current >= value) return;
    this.held.delete(key); // Map order is the order of the last raise: the oldest goes first
    this.held.set(key, value);
    if (this.held.size <= this.capacity) return;
    const [oldest, number] = this.held.entries().next().value!;
    this.held.delete(oldest);
    this.forgotten = Math.max(this.forgotten ?? number, number);
  }
}

export class InProcessHub {
  readonly listeners = new Map<string, Set<Listener>>();
  /**
   * Rate-brake windows and other counters. Bound: the keys incremented within one ttl (a brake window key lives two
   * windows) plus at most SWEEP_EVERY increments of expired ones; a counter is only dropped once it expired, so no
   * brake is ever reset early.
   */
  readonly counters = new Map<string, { value: number; expiresAtMs: number }>();
  readonly numbers: SharedNumbers;
  readonly queues = new Map<string, InProcessWorkQueue>();
  incrementsSinceSweep = 0;

  constructor(maxNumbers = MAX_SHARED_NUMBERS) {
    this.numbers = new SharedNumbers(maxNumbers);
  }

  queue(name: string): InProcessWorkQueue {
    let queue = this.queues.get(name);
    if (!queue) {
      queue = new InProcessWorkQueue();
      this.queues.set(name, queue);
    }
    return queue;
  }
}

export class InProcessMessaging implements Messaging {
  /** The queues live in this process's memory: an item enqueued is lost if the process dies. */
  readonly durable = false;
  private readonly stops = new Set<() => Promise<void>>();
  private closed = false;

  /** `clock` drives counter expiry (the rate brake reads the same clock); `hub` is shared between instances. */
  constructor(
    private readonly clock: Clock = systemClock,
    readonly hub: InProcessHub = new InProcessHub(),
  ) {}

  async publish(subject: string, payload = ''): Promise<void> {
    this.assertOpen();
    for (const listener of [...(this.hub.listeners.get(subject) ?? [])]) {
      // Delivered asynchronously, like a network hop; a throwing listener harms nobody else.
      queueMicrotask(() => {
        try {
          listener(payload);
        } catch {
          /* at most once: a failing subscriber loses the notification */
        }
      });
    }
  }

  async subscribe(subject: string, handler: (payload: string) => void): Promise<Unsubscribe> {
    this.assertOpen();
    const listener: Listener = (payload) => handler(payload);
    let set = this.hub.listeners.get(subject);
    if (!set) {
      set = new Set();
      this.hub.listeners.set(subject, set);
    }
    set.add(listener);
    const stop = async () => {
      this.stops.delete(stop);
      const current = this.hub.listeners.get(subject);
      current?.delete(listener);
      if (current?.size === 0) this.hub.listeners.delete(subject);
    };
    this.stops.add(stop);
    return stop;
  }

  async increment(key: string, by: number, ttlMs: number): Promise<number> {
    this.assertOpen();
    checkIncrement(by, ttlMs);
    const now = this.clock.now().getTime();
    this.sweep(now);
    let counter = this.hub.counters.get(key);
    if (!counter || counter.expiresAtMs <= now) {
      counter = { value: 0, expiresAtMs: now + ttlMs };
      this.hub.counters.set(key, counter);
    }
    counter.value += by;
    return counter.value;
  }

  async raiseTo(key: string, value: number): Promise<void> {
    this.assertOpen();
    checkNumber(value);
    this.hub.numbers.raiseTo(key, value);
  }

  async getNumber(key: string): Promise<number | undefined> {
    this.assertOpen();
    return this.hub.numbers.get(key);
  }

  async enqueue(queue: string, id: string, payload: string): Promise<void> {
    this.assertOpen();
    this.hub.queue(queue).enqueue(id, payload);
  }

  async consume(
    queue: string,
    handler: WorkHandler,
    options?: WorkQueueOptions & { concurrency?: number },
  ): Promise<Unsubscribe> {
    this.assertOpen();
    const stopConsumer = this.hub.queue(queue).consume(handler, consumerSettings(options));
    const stop = async () => {
      this.stops.delete(stop);
      await stopConsumer();
    };
    this.stops.add(stop);
    return stop;
  }

  async deadLetters(queue: string, options: { limit?: number } = {}): Promise<WorkItem[]> {
    this.assertOpen();
    return this.hub.queues.get(queue)?.deadLetters(checkLimit(options.limit)) ?? [];
  }

  async requeueDeadLetters(queue: string, ids?: readonly string[]): Promise<WorkItem[]> {
    this.assertOpen();
    return this.hub.queues.get(queue)?.requeueDeadLetters(ids) ?? [];
  }

  async queueStats(queue: string): Promise<QueueStats> {
    this.assertOpen();
    return this.hub.queues.get(queue)?.stats() ?? { pending: 0, deadLetters: 0 };
  }

  /** Stops this instance's subscriptions and consumers (waiting for deliveries in flight); the hub stays. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.stops].map((stop) => stop()));
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('messaging is closed');
  }

  private sweep(now: number): void {
    if (++this.hub.incrementsSinceSweep < SWEEP_EVERY) return;
    this.hub.incrementsSinceSweep = 0;
    for (const [key, counter] of this.hub.counters) if (counter.expiresAtMs <= now) this.hub.counters.delete(key);
  }
}
