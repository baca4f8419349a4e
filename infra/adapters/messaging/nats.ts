/**
 * The NATS messaging adapter (distributed topology): core NATS subjects for wake-ups, JetStream key-value
 * buckets for shared counters and numbers, JetStream work queues (nats-work-queue.ts).
 *
 * Counter windows: the expiry is written into the value (`{ value, expiresAtMs }`, computed from the injected
 * clock, the same one the rate brake reads) and an expired value is treated as absent by the next
 * compare-and-set. A bucket `ttl` alone would be wrong twice: JetStream ages a key from its *last* write (a
 * busy counter would never expire) and it follows the server's clock, not ours. The buckets (one per TTL
 * length) still get a generous `ttl` so old windows are garbage-collected.
 */
import { StringCodec, connect, type JetStreamClient, type KV, type NatsConnection } from 'nats';
import { systemClock, type Clock } from '../../../shared-schema/ports/clock.js';
import type {
  Messaging,
  QueueStats,
  Unsubscribe,
  WorkHandler,
  WorkItem,
  WorkQueueOptions,
} from '../../../shared-schema/ports/messaging.js';
import { kvKey, natsNames, type NatsNames } from './nats-names.js';
import { NatsWorkQueues, apiErrorCode } from './nats-work-queue.js';
import { checkIncrement, checkLimit, checkNumber, consumerSettings } from './options.js';

export interface NatsMessagingOptions {
  /** e.g. `nats://127.0.0.1:4222` (comma-separated for several). */
  servers: string;
  /** Namespace of every subject, bucket and stream, so deployments can share a server. Default `default`. */
  prefix?: string;
  /** Drives counter expiry. Default: the system clock. */
  clock?: Clock;
}

const ERR_WRONG_LAST_SEQUENCE = 10071;
const MAX_CAS_ATTEMPTS = 100;
/** Old counter windows linger at most this long (or one more TTL) after their last write. */
const COUNTER_GC_MARGIN_MS = 60_000;

const sc = StringCodec();

interface Counter {
  value: number;
  expiresAtMs: number;
}

export class NatsMessaging implements Messaging {
  /** The work queues are JetStream streams on file storage: an enqueue resolves once the server stored it. */
  readonly durable = true;
  private readonly buckets = new Map<string, Promise<KV>>();
  private readonly stops = new Set<() => Promise<void>>();
  private closing: Promise<void> | undefined;

  private constructor(
    private readonly nc: NatsConnection,
    private readonly js: JetStreamClient,
    private readonly names: NatsNames,
    private readonly queues: NatsWorkQueues,
    private readonly clock: Clock,
  ) {}

  static async connect(options: NatsMessagingOptions): Promise<NatsMessaging> {
    const nc = await connect({ servers: options.servers.split(',').map((s) => s.trim()), name: 'partner-commerce' });
    try {
      const jsm = await nc.jetstreamManager(); // fails fast when the server runs without JetStream
      const names = natsNames(options.prefix ?? 'default');
      const js = nc.jetstream();
      return new NatsMessaging(nc, js, names, new NatsWorkQueues(js, jsm, names), options.clock ?? systemClock);
    } catch (err) {
      await nc.close();
      throw err;
    }
  }

  async publish(subject: string, payload = ''): Promise<void> {
    this.nc.publish(this.names.subject(subject), sc.encode(payload));
  }

  async subscribe(subject: string, handler: (payload: string) => void): Promise<Unsubscribe> {
    const sub = this.nc.subscribe(this.names.subject(subject), {
      callback: (err, msg) => {
        if (err) return;
        try {
          handler(sc.decode(msg.data));
        } catch {
          /* at most once: a failing subscriber loses the notification */
        }
      },
    });
    await this.nc.flush(); // the server knows the subscription before we return
    return async () => {
      if (sub.isClosed()) return;
      sub.unsubscribe();
      await this.nc.flush().catch(() => undefined);
    };
  }

  async increment(key: string, by: number, ttlMs: number): Promise<number> {
    checkIncrement(by, ttlMs);
    const kv = await this.bucket(this.names.countersBucket(ttlMs), ttlMs + Math.max(ttlMs, COUNTER_GC_MARGIN_MS));
    const k = kvKey(key);
    return this.compareAndSet(kv, k, (current) => {
      const now = this.clock.now().getTime();
      const live = current === undefined ? undefined : (JSON.parse(current) as Counter);
      const next: Counter =
        live && live.expiresAtMs > now
          ? { value: live.value + by, expiresAtMs: live.expiresAtMs }
          : { value: by, expiresAtMs: now + ttlMs };
      return { write: JSON.stringify(next), result: next.value };
    });
  }

  async raiseTo(key: string, value: number): Promise<void> {
    checkNumber(value);
    const kv = await this.bucket(this.names.numbersBucket());
    await this.compareAndSet(kv, kvKey(key), (current) =>
      current !== undefined && Number(current) >= value
        ? { result: undefined }
        : { write: String(value), result: undefined },
    );
  }

  async getNumber(key: string): Promise<number | undefined> {
    const kv = await this.bucket(this.names.numbersBucket());
    const entry = await kv.get(kvKey(key));
    return entry?.operation === 'PUT' ? Number(entry.string()) : undefined;
  }

  async enqueue(queue: string, id: string, payload: string): Promise<void> {
    await this.queues.enqueue(queue, id, payload);
  }

  async consume(
    queue: string,
    handler: WorkHandler,
    options?: WorkQueueOptions & { concurrency?: number },
  ): Promise<Unsubscribe> {
    const stopConsumer = await this.queues.consume(queue, handler, consumerSettings(options));
    const stop = async () => {
      if (!this.stops.delete(stop)) return;
      await stopConsumer();
    };
    this.stops.add(stop);
    return stop;
  }

  async deadLetters(queue: string, options: { limit?: number } = {}): Promise<WorkItem[]> {
    return this.queues.deadLetters(queue, checkLimit(options.limit));
  }

  async requeueDeadLetters(queue: string, ids?: readonly string[]): Promise<WorkItem[]> {
    return this.queues.requeueDeadLetters(queue, ids);
  }

  async queueStats(queue: string): Promise<QueueStats> {
    return this.queues.stats(queue);
  }

  /** Stops the consumers (waiting for deliveries in flight), then drains the connection. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      await Promise.all([...this.stops].map((stop) => stop()));
      if (!this.nc.isClosed()) await this.nc.drain();
    })();
    return this.closing;
  }

  /**
   * Optimistic concurrency on one key: read, compute, write only if nobody wrote since (`create` when the key
   * has no entry, `update` at the read revision otherwise; a deleted key has a revision too), else start over.
   */
  private async compareAndSet<T>(
    kv: KV,
    key: string,
    decide: (current: string | undefined) => { write?: string; result: T },
  ): Promise<T> {
    for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
      const entry = await kv.get(key);
      const { write, result } = decide(entry?.operation === 'PUT' ? entry.string() : undefined);
      if (write === undefined) return result;
      try {
        if (entry) await kv.update(key, sc.encode(write), entry.revision);
        else await kv.create(key, sc.encode(write));
        return result;
      } catch (err) {
        if (apiErrorCode(err) !== ERR_WRONG_LAST_SEQUENCE) throw err;
        if (attempt >= 3) await new Promise((resolve) => setTimeout(resolve, Math.random() * 2 * attempt));
      }
    }
    throw new Error(`too much contention on shared key ${key}`);
  }

  /** Opens (creating if missing) a bucket that keeps one value per key; reads go to the stream leader. */
  private bucket(name: string, ttlMs?: number): Promise<KV> {
    let kv = this.buckets.get(name);
    if (!kv) {
      kv = this.js.views.kv(name, { history: 1, allow_direct: false, ...(ttlMs ? { ttl: ttlMs } : {}) });
      this.buckets.set(name, kv);
      kv.catch(() => this.buckets.delete(name));
    }
    return kv;
  }
}
