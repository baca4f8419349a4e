/**
 * Pure translations between the event-store port and EventStoreDB / KurrentDB (`@eventstore/db-client` v6).
 * No I/O here, so every rule is unit-tested without a server.
 */
import { randomBytes } from 'node:crypto';
import { ANY, NO_STREAM, STREAM_EXISTS, excludeSystemEvents, streamNameFilter } from '@eventstore/db-client';
import type { AppendExpectedRevision, CurrentRevision, Filter, Position, ResolvedEvent } from '@eventstore/db-client';
import { categoryOf } from '../../../shared-schema/ports/event-store.js';
import type {
  EventMetadata,
  ExpectedRevision,
  NewEvent,
  RecordedEvent,
} from '../../../shared-schema/ports/event-store.js';

/** EventStoreDB's default `MaxAppendSize`: one append (data + metadata of all its events) may not exceed it. */
export const DEFAULT_MAX_APPEND_BYTES = 1024 * 1024;

/**
 * Thrown before an append whose events would exceed the server's append limit. The caller must split the work
 * into several appends (a batch job writes one event per chunk and a final event that makes the job visible).
 */
export class AppendTooLargeError extends Error {
  constructor(
    readonly stream: string,
    readonly bytes: number,
    readonly limit: number,
  ) {
    super(
      `append to ${stream} holds ${bytes} bytes of event data and metadata; EventStoreDB refuses more than ${limit} ` +
        'bytes in one append: split the events into several appends',
    );
    this.name = 'AppendTooLargeError';
  }
}

export function toEsdbExpected(expected: ExpectedRevision): AppendExpectedRevision {
  switch (expected) {
    case 'any':
      return ANY;
    case 'no_stream':
      return NO_STREAM;
    case 'stream_exists':
      return STREAM_EXISTS;
    default:
      if (!Number.isSafeInteger(expected) || expected < 0)
        throw new RangeError(`invalid expected revision ${expected}`);
      return BigInt(expected);
  }
}

export function fromEsdbCurrent(current: CurrentRevision): number | 'no_stream' {
  return current === NO_STREAM ? 'no_stream' : bigintToNumber(current, 'revision');
}

/**
 * Positions. The port uses one plain number per event; EventStoreDB gives `{commit, prepare}`, both byte offsets
 * into its transaction log. Every append made through gRPC is an implicit transaction in which each event is its
 * own committed record, so an event's commit position equals its prepare position and differs from every other
 * event's: the commit position alone orders the log strictly. (Only the legacy TCP multi-call transactions gave
 * several events one commit position; this service never uses them.)
 *
 * The number stays below 2^53 because it is a byte offset: reaching 2^53 would need a transaction log of 8 PiB
 * (about 34 million 256 MiB chunks), far beyond any one deployment; `bigintToNumber` refuses it rather than
 * rounding. It is > 0 because the log starts with the server's own records (epoch, system streams).
 *
 * Positions are NOT dense: the gap between two events is at least the size of the first one's record, plus
 * whatever system or other-category records the server wrote in between. Compare them, never count with them.
 */
export function positionToNumber(position: Position | bigint): number {
  return bigintToNumber(typeof position === 'bigint' ? position : position.commit, 'position');
}

/** The server position of an event whose commit position is `position` (valid for implicit transactions). */
export function numberToPosition(position: number): Position {
  if (!Number.isSafeInteger(position) || position < 0) throw new RangeError(`invalid log position ${position}`);
  return { commit: BigInt(position), prepare: BigInt(position) };
}

/** gRPC reports "unknown" as the largest unsigned 64-bit value (older servers on stream reads). */
const NO_POSITION = (1n << 64n) - 1n;

function bigintToNumber(value: bigint, what: string): number {
  if (value < 0n || value > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new RangeError(`EventStoreDB ${what} ${value} does not fit the port's numbers (0..2^53-1)`);
  }
  return Number(value);
}

/** Bytes the server counts against its append limit: the serialized data and metadata of every event. */
export function appendBytes(events: readonly NewEvent[]): number {
  let bytes = 0;
  for (const e of events) {
    bytes += Buffer.byteLength(JSON.stringify(e.data ?? null), 'utf8');
    bytes += Buffer.byteLength(JSON.stringify(e.metadata), 'utf8');
  }
  return bytes;
}

/**
 * A UUID version 7 (RFC 9562): 48 bits of Unix milliseconds, then random bits. EventStoreDB needs UUIDs as event
 * ids; version 7 keeps them time-ordered as the port asks.
 */
export function uuidv7(nowMs: number = Date.now()): string {
  const bytes = randomBytes(16);
  let ms = BigInt(nowMs);
  for (let i = 5; i >= 0; i--) {
    bytes[i] = Number(ms & 0xffn);
    ms >>= 8n;
  }
  bytes[6] = (bytes[6] & 0x0f) | 0x70; // version 7
  bytes[8] = (bytes[8] & 0x3f) | 0x80; // RFC variant
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * Which events of `$all` belong to this store: never system events (stream or type starting with `$`) nor the
 * barrier stream of `recordedHead` (`BARRIER_STREAM`), only streams under `streamPrefix` (a namespace, '' in
 * production), and, when given, only the listed categories.
 */
export interface EventScope {
  streamPrefix: string;
  categories?: readonly string[];
  /** How an event's `recorded_at` is read (see `bookingTime`). Default `server`. */
  booking?: Booking;
}

/**
 * Where an event's booking time (`metadata.recorded_at`) comes from.
 *
 * - `server`: the time the server recorded it, `created`: the leader's single writer stamps each prepare record with
 *   its clock (`DateTime.UtcNow`) as it writes it to the log, and reads answer it as 100 ns ticks since the Unix
 *   epoch, which the driver (v6 convertGrpcEvent.js) turns into a `Date` truncated to the millisecond. So a write held
 *   in flight after its command read the clock is booked when the server recorded it, as SQLite books it under its
 *   write lock. Raised to the event's own `recorded_at` when that is later (a service clock ahead of the leader's):
 *   a booking is never earlier than the time the command appended the event with. `created` is a wall clock and is
 *   not raised to the previous event's on the server, so the ledger keeps its own max(…, previous booking).
 * - `event`: the event's own `recorded_at` (the command's reading of the service clock). For the manual clock, which
 *   the server cannot follow: the time rules of a test run on the clock the test moves, without the held-write
 *   guarantee.
 */
export type Booking = 'server' | 'event';

/**
 * The stream `recordedHead` writes its barrier events to (event-store.ts `recordedHead`). Never a stream of ours: its
 * name is taken as stored, outside every namespace (no prefix before it), starts with no category of ours (so no
 * category filter on the server lets it through), and `inScope` drops it by name, which covers the production
 * namespace '' under which every other name is ours. Not a `$` stream: writing one needs the `$admins` role under
 * the server's default ACL (`$systemStreamAcl`), a user stream only the default `$userStreamAcl` (`$w`, `$mw`: `$all`).
 */
export const BARRIER_STREAM = 'recordedhead_barrier';
export const BARRIER_EVENT_TYPE = 'RecordedHeadBarrier';

export function inScope(storedStream: string, type: string, scope: EventScope): boolean {
  if (storedStream.startsWith('$') || type.startsWith('$')) return false;
  if (storedStream === BARRIER_STREAM) return false;
  if (!storedStream.startsWith(scope.streamPrefix)) return false;
  if (!scope.categories) return true;
  return scope.categories.includes(categoryOf(storedStream.slice(scope.streamPrefix.length)));
}

/**
 * Stream-name prefixes for the server-side filter. A prefix is the category itself, without the `-`: so that a
 * stream named just `cat` (category `cat`, as `categoryOf` reads it) is not lost. This over-matches (`store` also
 * lets `storeindex-…` through), and `inScope` drops the extra events on our side.
 */
export function serverPrefixes(scope: EventScope): string[] {
  if (scope.categories) return scope.categories.map((c) => `${scope.streamPrefix}${c}`);
  return [scope.streamPrefix];
}

/**
 * The server-side filter of a subscription: stream-name prefixes for a category list or a namespace; otherwise
 * (the whole log) every event whose type does not start with `$`, i.e. no system events.
 */
export function serverFilter(scope: EventScope): Filter {
  if (scope.categories || scope.streamPrefix) return streamNameFilter({ prefixes: serverPrefixes(scope) });
  return excludeSystemEvents();
}

/**
 * Converts one resolved event to the port's shape, or undefined when it is not ours (system events, other
 * namespaces or categories, links without their event, non-JSON events written by someone else).
 */
export function toRecorded(resolved: ResolvedEvent, scope: EventScope): RecordedEvent | undefined {
  const event = resolved.event;
  if (!event || !event.isJson) return undefined;
  if (!inScope(event.streamId, event.type, scope)) return undefined;
  const commit = event.position?.commit ?? resolved.commitPosition;
  if (commit === undefined || commit === NO_POSITION) {
    throw new Error(
      'EventStoreDB did not report the log position of a stream read: use EventStoreDB 22.10 or later / KurrentDB',
    );
  }
  return {
    id: event.id,
    stream: event.streamId.slice(scope.streamPrefix.length),
    revision: bigintToNumber(event.revision, 'revision'),
    position: positionToNumber(commit),
    type: event.type,
    data: event.data,
    metadata: toMetadata(event.metadata, event.created, scope.booking ?? 'server'),
  };
}

function toMetadata(raw: unknown, created: Date, booking: Booking): EventMetadata {
  const m =
    raw !== null && typeof raw === 'object' && !Array.isArray(raw) && !(raw instanceof Uint8Array)
      ? (raw as Record<string, unknown>)
      : {};
  const recordedAt = bookingTime(m.recorded_at, created, booking);
  return m.recorded_at === recordedAt ? (m as EventMetadata) : { ...m, recorded_at: recordedAt };
}

/** An event's booking time as ISO text (see `Booking`); `created` alone when the event carries no time of its own. */
export function bookingTime(own: unknown, created: Date, booking: Booking): string {
  const ownMs = typeof own === 'string' ? Date.parse(own) : Number.NaN;
  if (Number.isNaN(ownMs)) return created.toISOString();
  if (booking === 'event' || ownMs >= created.getTime()) return own as string;
  return created.toISOString();
}
