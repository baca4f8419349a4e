/**
 * The cover-check work queue (`cover_check` on the messaging port): the reactor (cover-check.ts) enqueues one item
 * per send that may owe a check, and consumers — any number, in any process that has the pool — run it.
 *
 * An item names the send (`stream`, `revision`); its id is `{stream}@{revision}`, stable, so a replay of the log
 * after a crash does not queue a pending send twice. A consumer runs the check on the pool (`CoverWork`, whose
 * `checkOwed` makes a repeat harmless) and:
 * - acknowledges once the job is done: a result appended (a rejection is a result, judged like an acceptance), or
 *   nothing owed any more;
 * - answers retry, by throwing, when the job failed (the checker threw, an append failed for another reason than a
 *   concurrent writer): after a pause that doubles per delivery, so that a passing fault has time to pass. After
 *   `maxDeliveries` the item is a dead letter, kept with the error's message for the operator, who requeues it once
 *   the cause is fixed.
 */
import type { Messaging, Unsubscribe, WorkItem } from '../../shared-schema/ports/messaging.js';
import type { CoverWork } from './cover-work.js';

export const COVER_QUEUE = 'cover_check';
/** A check takes at most ~20 s (fetch timeouts, two stream loads) plus one round of the pool before it. */
export const COVER_ACK_WAIT_MS = 60_000;

export interface CoverItem {
  /** The product stream. */
  stream: string;
  /** Revision of the send (`ProductUpserted`). */
  revision: number;
}

export function coverItemId(item: CoverItem): string {
  return `${item.stream}@${item.revision}`;
}

export function coverItemPayload(item: CoverItem): string {
  return JSON.stringify({ stream: item.stream, revision: item.revision });
}

/** The item of a payload, or null when it is not one. */
export function parseCoverItem(payload: string): CoverItem | null {
  try {
    const v = JSON.parse(payload) as Partial<CoverItem> | null;
    if (
      v &&
      typeof v.stream === 'string' &&
      v.stream.startsWith('product-') &&
      Number.isSafeInteger(v.revision) &&
      v.revision! >= 0
    ) {
      return { stream: v.stream, revision: v.revision! };
    }
  } catch {
    /* not JSON */
  }
  return null;
}

/** What an item ended as: `done` (acknowledged) or `dead` (its last delivery failed). */
export type CoverItemOutcome = 'done' | 'dead';

export interface CoverConsumerOptions {
  messaging: Messaging;
  work: CoverWork;
  /** Items handled at once (give the pool's concurrency). */
  concurrency: number;
  /** Deliveries of an item before it is a dead letter. */
  maxDeliveries: number;
  /** Pause before the retry of a failed check, doubled per delivery (at most a quarter of the ack wait). */
  retryDelayMs: number;
  ackWaitMs?: number;
  /** Told when an item of this consumer is finished with (the reactor's watermark, with a queue that is not durable). */
  onSettled?: (id: string, outcome: CoverItemOutcome) => void;
}

export class CoverQueueConsumer {
  private stopConsuming: Unsubscribe | null = null;
  private readonly stopping = new AbortController();
  private readonly ackWaitMs: number;

  constructor(private readonly options: CoverConsumerOptions) {
    this.ackWaitMs = options.ackWaitMs ?? COVER_ACK_WAIT_MS;
  }

  async start(): Promise<void> {
    const { messaging, concurrency, maxDeliveries } = this.options;
    this.stopConsuming = await messaging.consume(COVER_QUEUE, (item) => this.handle(item), {
      concurrency,
      maxDeliveries,
      ackWaitMs: this.ackWaitMs,
    });
  }

  /** Takes no more items; the checks in hand finish (a pause before a retry is cut short). Stop it before the pool. */
  async stop(): Promise<void> {
    this.stopping.abort();
    await this.stopConsuming?.();
    this.stopConsuming = null;
  }

  private async handle(item: WorkItem): Promise<'ack'> {
    const last = item.deliveries >= this.options.maxDeliveries;
    const subject = parseCoverItem(item.payload);
    if (!subject) {
      if (last) this.options.onSettled?.(item.id, 'dead');
      throw new Error('not a cover-check item');
    }
    const job = await this.options.work.submit(subject.stream, { kind: 'sent', revision: subject.revision });
    if (job.outcome === 'done') {
      this.options.onSettled?.(item.id, 'done');
      return 'ack';
    }
    if (last) this.options.onSettled?.(item.id, 'dead');
    else if (job.outcome === 'failed') await this.pause(item.deliveries);
    throw new Error(
      job.outcome === 'failed' ? describeFailure(job.error) : 'the cover-check pool stopped before the check ran',
    );
  }

  private pause(deliveries: number): Promise<void> {
    return pause(Math.min(this.options.retryDelayMs * 2 ** (deliveries - 1), this.ackWaitMs / 4), this.stopping.signal);
  }
}

/** Waits `ms`, or less when `signal` aborts (stopping cuts a pause short). */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0 || signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done);
  });
}

/**
 * One line for a dead letter, shown to the operator: the error's name and message, credentials of any URL in it
 * masked (a store's connection string may carry a password), no stack.
 */
export function describeFailure(err: unknown): string {
  const text = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  return (text.split('\n')[0] ?? '').replace(/\/\/[^/\s@]*@/g, '//***@').slice(0, 300);
}
