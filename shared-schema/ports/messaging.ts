/**
 * The messaging port: wake-ups between processes, shared counters and values for the front doors
 * (rate-brake windows, last log position written per key), and a work queue with acknowledgement.
 *
 * The in-process adapter serves the embedded default; the NATS adapter (core NATS for wake-ups, JetStream
 * key-value buckets for shared values, a JetStream work queue) serves the distributed topology.
 */

export type Unsubscribe = () => Promise<void>;

export interface WorkItem {
  /** Stable id of the item (deduplicated while pending). */
  id: string;
  payload: string;
  /** 1 on the first delivery. */
  deliveries: number;
  /**
   * On a dead letter, when known: why its last delivery failed — the message of the error the handler threw, or
   * that it gave no answer within the ack wait. Absent after a plain `'retry'`. Handlers must not throw secrets.
   */
  lastError?: string;
}

export interface QueueStats {
  /** Items enqueued and neither acknowledged nor dead (waiting or being handled). */
  pending: number;
  deadLetters: number;
}

export interface WorkQueueOptions {
  /** After this many deliveries without `ack`, the item moves to the dead letters. Default 5. */
  maxDeliveries?: number;
  /** How long a delivered item may stay un-acked before it is delivered again. Default 30 s. */
  ackWaitMs?: number;
}

/** `'retry'` (or a throw) hands the item back for another delivery, or to the dead letters after the last one. */
export type WorkHandler = (item: WorkItem) => Promise<'ack' | 'retry'>;

export interface Messaging {
  /**
   * Whether the work queues survive this process: once `enqueue` resolved, the item is kept even if the process
   * dies the next instant (NATS: JetStream acknowledged the publish). False for the in-process adapter, whose
   * queues die with the process: a producer that must not lose work keeps its own record until the item is done.
   */
  readonly durable: boolean;

  /** Fire-and-forget notification to every current subscriber of `subject` (at most once). */
  publish(subject: string, payload?: string): Promise<void>;
  subscribe(subject: string, handler: (payload: string) => void): Promise<Unsubscribe>;

  /**
   * Adds `by` to the counter `key` and returns the new value. The counter disappears `ttlMs` after it was
   * created (fixed windows: put the window number in the key).
   */
  increment(key: string, by: number, ttlMs: number): Promise<number>;
  /** Raises the shared number `key` to `value` if it is lower (never lowers it). */
  raiseTo(key: string, value: number): Promise<void>;
  /** Current shared number, or undefined. */
  getNumber(key: string): Promise<number | undefined>;

  /** Adds an item to a durable work queue (an item whose id is already pending is not added twice). */
  enqueue(queue: string, id: string, payload: string): Promise<void>;
  /** Delivers items to `handler`, at most `concurrency` at a time; returns a function that stops consuming. */
  consume(
    queue: string,
    handler: WorkHandler,
    options?: WorkQueueOptions & { concurrency?: number },
  ): Promise<Unsubscribe>;
  /** Items that exceeded their deliveries, for the operator: oldest first, at most `limit` (default: all). */
  deadLetters(queue: string, options?: { limit?: number }): Promise<WorkItem[]>;
  /**
   * Moves dead letters back into the queue as fresh items (deliveries count from 1 again): those whose id is in
   * `ids`, or every one when `ids` is omitted. Resolves with the dead letters moved.
   */
  requeueDeadLetters(queue: string, ids?: readonly string[]): Promise<WorkItem[]>;
  /** Counts for the operator's metrics (cheap: no item is read). */
  queueStats(queue: string): Promise<QueueStats>;

  close(): Promise<void>;
}
