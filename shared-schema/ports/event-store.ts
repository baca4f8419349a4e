/**
 * The event-store port, shaped like EventStoreDB: streams with revisions, one global log with positions,
 * optimistic concurrency by expected revision, and a catch-up-then-live subscription to the whole log.
 *
 * Revisions start at 0 for the first event of a stream. Positions are strictly increasing across the whole
 * log (not necessarily dense) and start above 0, so `fromPosition: 0` means "from the beginning".
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

export interface AppendResult {
  /** Revision of the last event appended (the stream's new current revision). */
  nextRevision: number;
  /** Global position of the last event appended. */
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
  /** Return events with a position strictly greater than this. Default 0 (from the start). */
  afterPosition?: number;
  maxCount?: number;
  /** Only events whose stream category (text before the first `-`) is in this list. */
  categories?: readonly string[];
}

export interface SubscribeOptions extends Omit<ReadAllOptions, 'maxCount'> {}

/** A catch-up-then-live subscription: an async iterable that never ends until `close()`. */
export interface Subscription extends AsyncIterable<RecordedEvent> {
  close(): Promise<void>;
}

export interface EventStore {
  appendToStream(stream: string, events: readonly NewEvent[], expectedRevision?: ExpectedRevision): Promise<AppendResult>;
  /** Events of one stream in revision order; an empty array when the stream does not exist. */
  readStream(stream: string, options?: ReadStreamOptions): Promise<RecordedEvent[]>;
  /** Events of the whole log in position order. */
  readAll(options?: ReadAllOptions): Promise<RecordedEvent[]>;
  /** Position of the last event in the log (0 when empty). */
  headPosition(): Promise<number>;
  /** Reads from `afterPosition`, then waits for new events and yields them live, in order, forever. */
  subscribeToAll(options?: SubscribeOptions): Subscription;
  close(): Promise<void>;
}

/** The category of a stream: the text before the first `-` (as EventStoreDB reads it). */
export function categoryOf(stream: string): string {
  const dash = stream.indexOf('-');
  return dash < 0 ? stream : stream.slice(0, dash);
}
