/**
 * The event-store port, shaped like EventStoreDB: streams with revisions, one global log with positions,
 * optimistic concurrency by expected revision, and a catch-up-then-live subscription to the whole log.
 *
 * Revisions start at 0 for the first event of a stream and are dense: arithmetic on them is fine.
 *
 * Positions are OPAQUE, ORDERED TOKENS: strictly increasing across the whole log, > 0, NOT dense (on EventStoreDB
 * they are byte offsets in the server's log). Compare them; never add to or subtract from them. A position given
 * back to the store (`afterPosition`, `fromPosition`) must be 0 ("the start of the log") or a position this store
 * returned (an event's, an append's, `headPosition()`'s). Anything else may be refused: `readAll` rejects, and a
 * subscription's iteration throws (it ends; it is never retried). Negative or non-integer values are always refused
 * with a RangeError. "Resume just before event X" is `fromPosition: X.position` (inclusive), or `afterPosition`
 * the position of the event delivered before X — never `X.position - 1`.
 * Numbers are plain JS numbers: positions and revisions stay far below 2^53 on any one deployment.
 */

export type ExpectedRevision =
  | 'any' // append whatever the stream holds
  | 'no_stream' // the stream must not exist yet
  | 'stream_exists' // the stream must hold at least one event
  | number; // the revision of the last event of the stream must be exactly this

export interface EventMetadata {
  /** ISO time at which the service recorded the event (from the injected clock). */
  recorded_at: string;
  /** X-Request-Id of the call that caused the event, when there was one. */
  request_id?: string;
  /** Id of the API key (never the key) or `admin`/`system` that caused the event. */
  actor?: string;
  [key: string]: unknown;
}

export interface NewEvent<T extends string = string, D = unknown> {
  type: T;
  data: D;
  metadata: EventMetadata;
}

export interface RecordedEvent<T extends string = string, D = unknown> {
  /** Unique id of the event (time-ordered). */
  id: string;
  stream: string;
  /** Position of the event inside its stream, 0-based. */
  revision: number;
  /** Position of the event in the global log, strictly increasing, > 0. */
  position: number;
  type: T;
  data: D;
  metadata: EventMetadata;
}

/** Views a recorded event as a member of a typed union (the stream's category guarantees the union). */
export function asUnion<E extends { type: string; data: unknown }>(e: RecordedEvent): E {
  return { type: e.type, data: e.data } as E;
}

/**
 * What an append answers. An empty append (no events) writes nothing, still checks the expected revision, and
 * answers the stream's current state: its last revision and that event's position, or `nextRevision: -1` and
 * `position: 0` when the stream does not exist.
 */
export interface AppendResult {
  /** Revision of the last event appended (the stream's new current revision); -1: empty append, no stream. */
  nextRevision: number;
  /** Global position of the last event appended (of the stream's last event for an empty append; 0: none). */
  position: number;
}

/** Thrown when the expected revision does not match the stream. */
export class WrongExpectedRevisionError extends Error {
  constructor(
    readonly stream: string,
    readonly expected: ExpectedRevision,
    readonly actual: number | 'no_stream',
  ) {
    super(`wrong expected revision on ${stream}: expected ${String(expected)}, actual ${String(actual)}`);
    this.name = 'WrongExpectedRevisionError';
  }
}

export interface ReadStreamOptions {
  /** First revision to return (inclusive). Default 0. */
  fromRevision?: number;
  /** At most this many events. Default: all. */
  maxCount?: number;
}

export interface ReadAllOptions {
  /** Return events with a position strictly greater than this (exclusive). Default 0 (from the start). */
  afterPosition?: number;
  /**
   * Return events from this position on, the event AT it included (inclusive); 0 means the start. Give at most one
   * of `afterPosition` and `fromPosition` (both: RangeError).
   */
  fromPosition?: number;
  maxCount?: number;
  /** Only events whose stream category (text before the first `-`) is in this list. */
  categories?: readonly string[];
}

export type SubscribeOptions = Omit<ReadAllOptions, 'maxCount'>;

/** A catch-up-then-live subscription: an async iterable that never ends until `close()`. */
export interface Subscription extends AsyncIterable<RecordedEvent> {
  close(): Promise<void>;
}

/** One stream of a `readStreams` call: its events from `fromRevision` (default 0). */
export interface StreamRead {
  stream: string;
  fromRevision?: number;
}

export interface EventStore {
  appendToStream(
    stream: string,
    events: readonly NewEvent[],
    expectedRevision?: ExpectedRevision,
  ): Promise<AppendResult>;
  /** Events of one stream in revision order; an empty array when the stream does not exist. */
  readStream(stream: string, options?: ReadStreamOptions): Promise<RecordedEvent[]>;
  /**
   * Several streams at once (each named once), each as `readStream(stream, { fromRevision })` would read it (an
   * empty array for a stream that does not exist), in one round trip. Optional: without it, read one by one.
   */
  readStreams?(reads: readonly StreamRead[]): Promise<Map<string, RecordedEvent[]>>;
  /** Events of the whole log in position order. */
  readAll(options?: ReadAllOptions): Promise<RecordedEvent[]>;
  /** Position of the last event in the log (0 when empty). */
  headPosition(): Promise<number>;
  /**
   * `headPosition()` read once every append that had begun being recorded before the call has been recorded or
   * refused, so that every event recorded after the position it answers is booked (`recorded_at`) by a clock read
   * after the call. Like `headPosition()`, it answers 0 or the position of an event of the log: a subscription to
   * the whole log delivers an event at exactly that position, so a consumer that counts the events it applied
   * reaches it. An adapter may write to answer it, nothing a reader of the port ever sees (SQLite: an empty append
   * through its writer; EventStoreDB: one barrier event in a stream outside the log it shows). Optional: without
   * it, `headPosition()`.
   */
  recordedHead?(): Promise<number>;
  /**
   * Reads from `afterPosition`/`fromPosition`, then waits for new events and yields them live, in order, forever.
   * A lost connection is retried by the adapter; any other failure (a start position the store refuses, a denied
   * read) ends the iteration with that error.
   */
  subscribeToAll(options?: SubscribeOptions): Subscription;
  close(): Promise<void>;
}

/**
 * Where a read or subscription starts, checked: `{ position, inclusive }` (position 0 = the start of the log).
 * Throws a RangeError for both options at once, or a negative / non-integer position.
 */
export function startOf(options: Pick<ReadAllOptions, 'afterPosition' | 'fromPosition'>): {
  position: number;
  inclusive: boolean;
} {
  const { afterPosition, fromPosition } = options;
  if (afterPosition !== undefined && fromPosition !== undefined) {
    throw new RangeError('give afterPosition (exclusive) or fromPosition (inclusive), not both');
  }
  const inclusive = fromPosition !== undefined;
  const position = fromPosition ?? afterPosition ?? 0;
  if (!Number.isSafeInteger(position) || position < 0) {
    throw new RangeError(`invalid log position ${String(position)}: positions are 0 or one the store returned`);
  }
  return { position, inclusive: inclusive && position > 0 };
}

/** The category of a stream: the text before the first `-` (as EventStoreDB reads it). */
export function categoryOf(stream: string): string {
  const dash = stream.indexOf('-');
  return dash < 0 ? stream : stream.slice(0, dash);
}
