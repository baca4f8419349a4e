/**
 * The event-store port on EventStoreDB / KurrentDB through `@eventstore/db-client` v6.
 *
 * - Expected revisions map one to one ('any' → ANY, 'no_stream' → NO_STREAM, 'stream_exists' → STREAM_EXISTS,
 *   a number → BigInt) and `WrongExpectedVersionError` becomes the port's `WrongExpectedRevisionError` with the
 *   actual revision the server reported.
 * - Positions are commit positions as numbers (see `positionToNumber` in mapping.ts: strictly increasing, > 0,
 *   below 2^53, NOT dense).
 * - The server refuses an append above `MaxAppendSize` (1 MiB by default). Callers must split larger work into
 *   several appends; an append above the limit fails here, before it is sent, with `AppendTooLargeError`.
 * - `readAll` of the whole log (no namespace, no categories) pages through `$all`; a read by categories or in a
 *   namespace is filtered ON THE SERVER (a filtered catch-up subscription read up to the head: filtered-read.ts),
 *   since client v6's `readAll` sends no filter. `subscribeToAll` filters on the server by stream-name prefix; every
 *   event is re-checked on our side.
 * - Each event's `recorded_at` is its booking time: the time the server recorded it (`created`, stamped by the
 *   leader's writer), never earlier than the time its command appended it with (mapping.ts `Booking`); with
 *   `booking: 'event'` (the manual clock), the command's time alone.
 * - `headPosition` reads one backwards page of `$all`; in a namespace whose newest event is not in it, a filtered
 *   read from the newest position of ours this store has seen (0 at first) to the head of the log: only our events
 *   cross the wire, the server scans the log from there (see `headPosition`).
 *
 * - `recordedHead` writes one barrier event (to `BARRIER_STREAM`, outside every namespace, never read as ours), then
 *   answers `headPosition`: see `recordedHead`.
 *
 * Every method needs a server: the contract suite runs against one when EVENTSTORE_URL is set.
 */
import {
  ANY,
  BACKWARDS,
  END,
  EventStoreDBClient,
  FORWARDS,
  MaxAppendSizeExceededError,
  START,
  StreamNotFoundError,
  WrongExpectedVersionError,
  jsonEvent,
} from '@eventstore/db-client';
import type { JSONType, Position, ReadPosition } from '@eventstore/db-client';
import { WrongExpectedRevisionError, startOf } from '../../../shared-schema/ports/event-store.js';
import type {
  AppendResult,
  EventStore,
  ExpectedRevision,
  NewEvent,
  ReadAllOptions,
  ReadStreamOptions,
  RecordedEvent,
  SubscribeOptions,
  Subscription,
} from '../../../shared-schema/ports/event-store.js';
import {
  AppendTooLargeError,
  BARRIER_EVENT_TYPE,
  BARRIER_STREAM,
  DEFAULT_MAX_APPEND_BYTES,
  appendBytes,
  fromEsdbCurrent,
  numberToPosition,
  positionToNumber,
  toEsdbExpected,
  toRecorded,
  uuidv7,
} from './mapping.js';
import type { Booking, EventScope } from './mapping.js';
import { EsdbSubscription } from './subscription.js';
import { logHead, readFiltered } from './filtered-read.js';

export interface EsdbEventStoreOptions {
  /**
   * A namespace put before every stream name (no `-` allowed), so that several stores share one server without
   * seeing each other's streams: the contract tests open a fresh one per store. '' (the default) in production.
   */
  streamPrefix?: string;
  /** Refuse appends above this many bytes of data + metadata. Default 1 MiB, EventStoreDB's default limit. */
  maxAppendBytes?: number;
  /** Events per page of `readAll` and `headPosition`. Default 500. */
  pageSize?: number;
  /**
   * Called when a live subscription loses its connection and is about to resubscribe (the wiring logs a warning).
   * Other errors are not retried: they end the subscription's iteration with the error.
   */
  onSubscriptionDrop?: (error: unknown, attempt: number) => void;
  /**
   * Where events' `recorded_at` comes from (mapping.ts `Booking`): `server` (default), the time the server recorded
   * them; `event`, the time their command appended them with (the wiring's choice for the manual clock).
   */
  booking?: Booking;
}

/** A barrier `recordedHead` wrote (its position) and the head it read once the barrier's append had answered. */
interface KnownBarrier {
  barrier: number;
  head: number;
}

export class EsdbEventStore implements EventStore {
  private readonly prefix: string;
  private readonly maxAppendBytes: number;
  private readonly pageSize: number;
  private readonly booking: Booking;
  private readonly subscriptions = new Set<EsdbSubscription>();
  /** The newest position of ours this store has seen (appends, reads): a valid start for a filtered read. */
  private floor = 0;
  /** The barrier stream's `$maxCount` metadata, written once per store (again after a failure). */
  private barrierMetadata?: Promise<void>;
  /** This store's newest barrier and the head `recordedHead` read after it. */
  private lastBarrier?: KnownBarrier;

  /** `url` is an `esdb://` connection string, e.g. `esdb://127.0.0.1:2113?tls=false`. */
  static connect(url: string, options: EsdbEventStoreOptions = {}): EsdbEventStore {
    return new EsdbEventStore(EventStoreDBClient.connectionString(url), options);
  }

  constructor(
    private readonly client: EventStoreDBClient,
    private readonly options: EsdbEventStoreOptions = {},
  ) {
    this.prefix = options.streamPrefix ?? '';
    if (this.prefix.includes('-')) throw new Error('streamPrefix must not contain "-" (it would change categories)');
    this.maxAppendBytes = options.maxAppendBytes ?? DEFAULT_MAX_APPEND_BYTES;
    this.pageSize = options.pageSize ?? 500;
    this.booking = options.booking ?? 'server';
    // Each page starts AT the previous page's last event (positions are inclusive), so a page must hold two.
    if (!Number.isInteger(this.pageSize) || this.pageSize < 2) throw new RangeError('pageSize must be an integer >= 2');
  }

  async appendToStream(
    stream: string,
    events: readonly NewEvent[],
    expectedRevision: ExpectedRevision = 'any',
  ): Promise<AppendResult> {
    const bytes = appendBytes(events);
    if (bytes > this.maxAppendBytes) throw new AppendTooLargeError(stream, bytes, this.maxAppendBytes);
    const name = this.prefix + stream;
    // Its events would be dropped by every read of ours (mapping.ts `inScope`): written, then never seen.
    if (name === BARRIER_STREAM) throw new RangeError(`${BARRIER_STREAM} is the recorded head's barrier stream`);
    if (events.length === 0) return this.emptyAppend(stream, expectedRevision);
    const data = events.map((e) =>
      jsonEvent({ id: uuidv7(), type: e.type, data: (e.data ?? null) as JSONType, metadata: e.metadata }),
    );
    let result;
    try {
      result = await this.client.appendToStream(name, data, { expectedRevision: toEsdbExpected(expectedRevision) });
    } catch (err) {
      if (err instanceof WrongExpectedVersionError) {
        throw new WrongExpectedRevisionError(stream, expectedRevision, fromEsdbCurrent(err.actualVersion));
      }
      if (err instanceof MaxAppendSizeExceededError) throw new AppendTooLargeError(stream, bytes, err.maxAppendSize);
      throw err;
    }
    const nextRevision = Number(result.nextExpectedRevision);
    const position = await this.positionOfAppend(name, result.nextExpectedRevision, events.length, result.position);
    return { nextRevision, position: this.saw(position) };
  }

  /**
   * An append of nothing, as the port defines it: the stream's current state, the expected revision checked. Not sent
   * to the server: for a missing stream its answer carries `no_stream`, which the driver (v6 append.js:
   * `BigInt(success.getCurrentRevision())`) reads as revision 0, and it carries no position. One read of the
   * stream's last event answers both, and nothing is written, so checking against that read is exact.
   */
  private async emptyAppend(stream: string, expected: ExpectedRevision): Promise<AppendResult> {
    toEsdbExpected(expected); // the same RangeError as a real append for a bad expected revision
    let last: RecordedEvent | undefined;
    try {
      for await (const resolved of this.client.readStream(this.prefix + stream, {
        fromRevision: END,
        maxCount: 1,
        direction: BACKWARDS,
      })) {
        last = toRecorded(resolved, { streamPrefix: this.prefix, booking: this.booking });
      }
    } catch (err) {
      if (!(err instanceof StreamNotFoundError)) throw err;
    }
    const actual = last ? last.revision : 'no_stream';
    const matches =
      expected === 'any' ||
      (expected === 'no_stream'
        ? actual === 'no_stream'
        : expected === 'stream_exists'
          ? actual !== 'no_stream'
          : actual === expected);
    if (!matches) throw new WrongExpectedRevisionError(stream, expected, actual);
    return last ? { nextRevision: last.revision, position: last.position } : { nextRevision: -1, position: 0 };
  }

  /**
   * The position of the LAST event appended, which read-your-writes waits for. For one event the append answer
   * carries it; for several, the server's answer may carry the first event's, so read the last one back by its
   * exact revision (no race: that revision can only hold our event).
   */
  private async positionOfAppend(name: string, last: bigint, count: number, reported?: Position): Promise<number> {
    if (count === 1 && reported) return positionToNumber(reported);
    if (count > 1) {
      for await (const resolved of this.client.readStream(name, {
        fromRevision: last,
        maxCount: 1,
        direction: FORWARDS,
      })) {
        const e = toRecorded(resolved, { streamPrefix: this.prefix, booking: this.booking });
        if (e) return e.position;
      }
    }
    return reported ? positionToNumber(reported) : this.headPosition();
  }

  async readStream(stream: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    const out: RecordedEvent[] = [];
    if (options.maxCount === 0) return out;
    const scope: EventScope = { streamPrefix: this.prefix, booking: this.booking };
    try {
      const read = this.client.readStream(this.prefix + stream, {
        fromRevision: options.fromRevision ? BigInt(options.fromRevision) : START,
        direction: FORWARDS,
        ...(options.maxCount !== undefined ? { maxCount: options.maxCount } : {}),
      });
      for await (const resolved of read) {
        const e = toRecorded(resolved, scope);
        if (e) out.push(e);
      }
    } catch (err) {
      if (err instanceof StreamNotFoundError) return [];
      throw err;
    }
    return out;
  }

  /**
   * `afterPosition`/`fromPosition` must be 0 or a position this store returned (an event's or an append's): the
   * server can only start reading at the boundary of a record of its log, and refuses any other position
   * (InvalidArgument "Trying to read from an invalid position").
   */
  async readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    const scope: EventScope = { streamPrefix: this.prefix, booking: this.booking, categories: options.categories };
    const max = options.maxCount ?? Number.POSITIVE_INFINITY;
    const start = startOf(options);
    if (scope.categories || scope.streamPrefix) {
      // Filtered on the server: only our events (of these categories) cross the wire, up to the head seen now.
      const head = await logHead(this.client);
      const events = await readFiltered({ client: this.client, scope, start, head, maxCount: max });
      if (events.length > 0) this.saw(events[events.length - 1].position);
      return events;
    }
    const out: RecordedEvent[] = [];
    let after = start.position;
    let inclusive = start.inclusive; // the event AT `after` is wanted (first page only)
    let from: ReadPosition = after > 0 ? numberToPosition(after) : START;
    while (out.length < max) {
      let seen = 0;
      let lastInPage: Position | undefined;
      for await (const resolved of this.client.readAll({
        fromPosition: from,
        maxCount: this.pageSize,
        direction: FORWARDS,
      })) {
        seen++;
        lastInPage = resolved.event?.position ?? lastInPage;
        const e = toRecorded(resolved, scope);
        // The driver's `fromPosition` is inclusive: the event AT the position is wanted only for an inclusive start.
        if (!e || e.position < after || (e.position === after && !inclusive)) continue;
        out.push(e);
        if (out.length >= max) break;
      }
      if (seen < this.pageSize || !lastInPage) break;
      after = Math.max(after, positionToNumber(lastInPage));
      inclusive = false;
      from = lastInPage;
    }
    return out;
  }

  /**
   * Position of the last event of this store (system events and other namespaces are not ours), 0 when none.
   *
   * One backwards page of `$all` (64 records) answers when our newest event is among the newest records: always in
   * production, where every non-system event is ours. Otherwise (a namespace on a shared server whose newest records
   * are others'), the backwards scan would pull the whole log over the wire (client v6 has no filtered reads);
   * instead a filtered read from the newest position of ours this store has already seen (`floor`: its appends and
   * reads; 0 for a store that has seen none) up to the head keeps only the last match. Over the wire: our events
   * after `floor` and a few checkpoints. On the server: a scan from `floor`, bounded by the log after it; for a
   * namespace that has written nothing, the whole log, once per call, until it writes.
   */
  async headPosition(): Promise<number> {
    return this.newestOfOurs();
  }

  /**
   * `headPosition`, and with `known` (the last barrier of this store and the head read after it), the scan back
   * stops at that barrier: below it, nothing of ours is newer than `known.head` (see `recordedHead`). In production
   * the barriers of every query process pile up in `$all` between our events while the service is quiet (until a
   * scavenge): without this stop, each head read would page back through all of them.
   */
  private async newestOfOurs(known?: KnownBarrier): Promise<number> {
    const scope: EventScope = { streamPrefix: this.prefix, booking: this.booking };
    let page = Math.min(this.pageSize, 64); // the newest event is nearly always ours: read little
    let from: ReadPosition = END;
    let newest: number | undefined;
    for (;;) {
      let seen = 0;
      let oldest: Position | undefined;
      for await (const resolved of this.client.readAll({ fromPosition: from, maxCount: page, direction: BACKWARDS })) {
        seen++;
        oldest = resolved.event?.position ?? oldest;
        if (newest === undefined && oldest) newest = positionToNumber(oldest);
        const e = toRecorded(resolved, scope);
        if (e) return this.saw(e.position);
        if (known && oldest && positionToNumber(oldest) <= known.barrier) return this.saw(known.head);
      }
      if (seen < page || !oldest || newest === undefined) return 0; // the whole log was read: nothing of ours
      if (this.prefix) break; // a namespace: filtered on the server from here
      from = oldest; // the whole log (production): its newest non-system event is close, keep paging back
      page = this.pageSize; // further back than one small page: larger pages
    }
    const [last] = await readFiltered({
      client: this.client,
      scope,
      start: { position: this.floor, inclusive: false },
      head: newest,
      keep: 'last',
    });
    return last ? this.saw(last.position) : this.floor;
  }

  /**
   * `headPosition()` read once every event the leader had begun writing before the call is readable, so that every
   * event of ours after the position answered was written, and stamped (`created`), after the call.
   *
   * EventStoreDB offers no wait for the writes in flight short of a write of one's own, so this appends one barrier
   * event, then reads the head. Read from the server's code (KurrentDB / EventStoreDB; no server runs where this was
   * written, the contract suite runs it when EVENTSTORE_URL is set):
   * - the leader's storage writer is one thread: it writes records in log order and stamps each prepare's `created`
   *   as it writes it, so every event written before the barrier is below it and every event written after it is
   *   above it and stamped later (a step back of the leader's clock aside);
   * - an append is answered only once the index has committed its last record (RequestManagerBase `AllEventsWritten`
   *   waits for `CommitSource.IndexedPosition` to reach it), and the index commits only what the replication
   *   checkpoint covers, in log order: when the barrier's append answers, every record below it is replicated and
   *   readable, and `$all` reads, which are served below the replication checkpoint, see all of them;
   * - the barrier carries a fresh event id, so it is never taken for an idempotent retry (answered at once, from the
   *   earlier write, without that wait).
   * So the newest event of ours read after the answer is at or above every event of ours below the barrier, and an
   * event of ours above the position answered is above the barrier: stamped after the call.
   *
   * The answer is a position of ours (an event's, or 0), not the barrier's: the projections advance by the events
   * they apply (their subscription follows our categories and never sees the barrier), so a wait for the barrier's
   * own position would only end with the next event of ours. Waiting for the newest event of ours below the barrier
   * asks exactly as much: every event of ours below the barrier applied.
   *
   * The barrier stream keeps one event (`$maxCount` 1, set once per store before its first barrier): a scavenge
   * removes the others from `$all`. Until then they lie between our events; the scan back for the head stops at
   * this store's previous barrier (`newestOfOurs`), so it crosses only what was written since. Reads through the
   * leader (the driver's default `nodePreference`): a follower may not have replicated the barrier yet when its
   * append answers.
   *
   * With `booking: 'event'` (the manual clock) the barrier changes nothing of what a booking is: an event is booked
   * at the time its command read, which the server does not order; an append whose command read the clock before
   * the call and reached the leader after the barrier is above the position answered and booked before the call.
   */
  async recordedHead(): Promise<number> {
    const barrier = await this.barrier();
    const head = await this.newestOfOurs(this.lastBarrier);
    if (barrier !== undefined && (!this.lastBarrier || barrier > this.lastBarrier.barrier)) {
      this.lastBarrier = { barrier, head };
    }
    return head;
  }

  /** Writes one barrier event; answers its position (undefined when the server's answer carries none). */
  private async barrier(): Promise<number | undefined> {
    this.barrierMetadata ??= this.client.setStreamMetadata(BARRIER_STREAM, { maxCount: 1 }).then(
      () => undefined,
      (err: unknown) => {
        this.barrierMetadata = undefined; // the next head read tries again
        throw err;
      },
    );
    await this.barrierMetadata;
    const barrier = jsonEvent({ id: uuidv7(), type: BARRIER_EVENT_TYPE, data: {} });
    const written = await this.client.appendToStream(BARRIER_STREAM, barrier, { expectedRevision: ANY });
    return written.position ? positionToNumber(written.position) : undefined;
  }

  private saw(position: number): number {
    if (position > this.floor) this.floor = position;
    return position;
  }

  subscribeToAll(options: SubscribeOptions = {}): Subscription {
    const sub = new EsdbSubscription({
      client: this.client,
      scope: { streamPrefix: this.prefix, booking: this.booking, categories: options.categories },
      ...(options.afterPosition !== undefined ? { afterPosition: options.afterPosition } : {}),
      ...(options.fromPosition !== undefined ? { fromPosition: options.fromPosition } : {}),
      onDrop: this.options.onSubscriptionDrop,
      onClose: () => this.subscriptions.delete(sub),
    });
    this.subscriptions.add(sub);
    return sub;
  }

  async close(): Promise<void> {
    await Promise.all([...this.subscriptions].map((s) => s.close()));
    await this.client.dispose();
  }
}
