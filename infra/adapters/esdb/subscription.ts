/**
 * A catch-up-then-live subscription to `$all` for the event-store port.
 *
 * One `subscribeToAll` of the driver does both phases (it reads the log from the position, then stays live), and is
 * consumed with `for await`, so events arrive in order and a failure stops the loop where it happened. When the
 * connection drops, the subscription is opened again, after a growing pause, from the last position delivered;
 * events at or before it are skipped, so a consumer never sees an event twice nor misses one.
 *
 * Only a lost connection is retried (`isConnectionDrop`: unavailable, deadline, cancelled by the server, aborted,
 * not leader). Any other error ends the iteration with that error: a refused start position ("invalid position",
 * InvalidArgument, which the driver reports as an UnknownError), denied access, an internal server error. Retrying
 * those would loop for ever in silence; ending lets the consumer log it and readiness say so.
 *
 * An inclusive start (`fromPosition`) first reads the one record at that position (reads of `$all` start AT the
 * position), then subscribes after it, whatever the server's subscription does with its start position.
 */
import { ErrorType, START, isCommandError } from '@eventstore/db-client';
import type { AllStreamSubscription, EventStoreDBClient, ReadPosition } from '@eventstore/db-client';
import { startOf } from '../../../shared-schema/ports/event-store.js';
import type { RecordedEvent, Subscription } from '../../../shared-schema/ports/event-store.js';
import { numberToPosition, serverFilter, toRecorded } from './mapping.js';
import type { EventScope } from './mapping.js';
import { readAt, stopSubscription } from './filtered-read.js';

export interface EsdbSubscriptionParams {
  client: EventStoreDBClient;
  scope: EventScope;
  /** Deliver only events strictly after this position (0: from the start). */
  afterPosition?: number;
  /** Deliver events from this position on, the event at it included (exclusive of `afterPosition`). */
  fromPosition?: number;
  onDrop?: (error: unknown, attempt: number) => void;
  onClose?: () => void;
}

const BACKOFF_MS = [100, 250, 500, 1000, 2000, 5000];

export class EsdbSubscription implements Subscription {
  private closed = false;
  private current?: AllStreamSubscription;
  private wake?: () => void;
  private iterating = false;

  constructor(private readonly params: EsdbSubscriptionParams) {}

  async *[Symbol.asyncIterator](): AsyncIterator<RecordedEvent> {
    if (this.iterating) throw new Error('a subscription can be iterated only once');
    this.iterating = true;
    const { client, scope } = this.params;
    const filter = serverFilter(scope);
    const start = startOf(this.params); // a negative or fractional start ends the iteration here, with a RangeError
    let last = start.position;
    let atStartPending = start.inclusive; // the event AT `last` is still to be delivered
    let attempt = 0;
    try {
      while (!this.closed) {
        try {
          if (atStartPending) {
            const first = await this.readAt(last);
            atStartPending = false;
            if (first) {
              attempt = 0;
              yield first;
              if (this.closed) return;
            }
          }
        } catch (err) {
          if (this.closed) return;
          if (!isConnectionDrop(err)) throw err;
          this.params.onDrop?.(err, attempt + 1);
          await this.pause(BACKOFF_MS[Math.min(attempt, BACKOFF_MS.length - 1)]);
          attempt++;
          continue;
        }
        const fromPosition: ReadPosition = last > 0 ? numberToPosition(last) : START;
        const sub = client.subscribeToAll({ fromPosition, filter });
        this.current = sub;
        try {
          for await (const resolved of sub) {
            if (this.closed) return;
            const event = toRecorded(resolved, scope);
            // The server starts at the given position; the port promises events strictly after it.
            if (!event || event.position <= last) continue;
            last = event.position;
            attempt = 0;
            yield event;
            if (this.closed) return;
          }
          // The server ended the stream without an error (it should not): open it again.
        } catch (err) {
          if (this.closed) return;
          if (!isConnectionDrop(err)) throw err; // retrying cannot help: stop where it happened
          this.params.onDrop?.(err, attempt + 1);
        } finally {
          this.current = undefined;
          await stop(sub);
        }
        if (this.closed) return;
        await this.pause(BACKOFF_MS[Math.min(attempt, BACKOFF_MS.length - 1)]);
        attempt++;
      }
    } finally {
      this.closed = true;
      this.params.onClose?.();
    }
  }

  /** The event of ours at exactly `position`, if the record there is one. */
  private readAt(position: number): Promise<RecordedEvent | undefined> {
    return readAt(this.params.client, this.params.scope, position);
  }

  async close(): Promise<void> {
    if (this.closed && !this.current) return;
    this.closed = true;
    this.wake?.();
    const sub = this.current;
    if (sub) await stop(sub);
    this.params.onClose?.();
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    });
  }
}

/**
 * Errors after which subscribing again can succeed. NOT `ErrorType.UNKNOWN`: the driver reports every gRPC status it
 * has no class for (InvalidArgument — e.g. "Trying to read from an invalid position" —, Internal, FailedPrecondition,
 * ResourceExhausted…) as an UnknownError (see its utils/CommandError.js `convertToCommandError`); retrying those
 * would repeat the same refusal for ever.
 */
const DROPS = new Set<string>([
  ErrorType.UNAVAILABLE, // connection lost, server down or restarting
  ErrorType.DEADLINE_EXCEEDED,
  ErrorType.TIMEOUT, // the driver's name for gRPC ABORTED: the server gave up on the call (e.g. it is shutting down)
  ErrorType.CANCELLED, // cancelled by the server (our own cancellations are ignored by the driver)
  ErrorType.NOT_LEADER, // a cluster moved its leader: the driver reconnects to the new one
]);

/** A lost connection or a server that went away, as opposed to a refusal or a bug on our side. */
export function isConnectionDrop(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  if (isCommandError(err)) return DROPS.has(err.type);
  return (err as NodeJS.ErrnoException).code === 'ERR_STREAM_PREMATURE_CLOSE';
}

/** Cancels the gRPC call and ends the stream (see `stopSubscription`). */
const stop = stopSubscription;
