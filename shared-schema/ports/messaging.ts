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
}

export interface WorkQueueOptions {
  /** After this many deliveries without `ack`, the item moves to the dead letters. Default 5. */
  maxDeliveries?: number;
  /** How long a delivered item may stay un-acked before it is delivered again. Default 30 s. */
  ackWaitMs?: number;
}

export type WorkHandler = (item: WorkItem) => Promise<'ack' | 'retry'>;

export interface Messaging {
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
  consume(queue: string, handler: WorkHandler, options?: WorkQueueOptions & { concurrency?: number }): Promise<Unsubscribe>;
  /** Items that exceeded their deliveries, for the operator. */
  deadLetters(queue: string): Promise<WorkItem[]>;

  close(): Promise<void>;
}
