/**
 * The aggregate-state port of the write side: an aggregate's state is its stream folded with the aggregate's
 * `evolve`, and an append made on a state expects the revision it was folded to. `readAndFold` is the plain
 * implementation (read the whole stream, fold it); infra/adapters/event-store/cached-state.ts keeps folded states in memory
 * and reads only the events after them. The write side sees only this port.
 */
import type { EventMetadata, EventStore, NewEvent, RecordedEvent } from './event-store.js';

/** A member of an aggregate's event union. */
export interface TypedEvent {
  type: string;
  data: unknown;
}

/** An event of the union as read back from its stream, with its revision in the stream and its metadata. */
export type Stored<E> = E & { revision: number; metadata: EventMetadata };

/** The fold of a stream into a state: what a load needs. Every decider is one; a read-only view of a stream too. */
export interface Fold<S, E> {
  /** Distinguishes folded states when two folds read the same stream. */
  name: string;
  initialState: () => S;
  evolve: (state: S, event: Stored<E>) => S;
}

export interface Loaded<S> {
  state: S;
  /** Revision of the last event folded; -1 when the stream does not exist. */
  revision: number;
}

export interface AggregateStates {
  /** The state as read now: every event appended before the call is folded in. */
  load<S, E>(stream: string, fold: Fold<S, E>): Promise<Loaded<S>>;
  /**
   * A state held from an earlier load or append, without reading (it may be stale: an append on it checks it);
   * undefined when none is held.
   */
  peek<S, E>(stream: string, fold: Fold<S, E>): Loaded<S> | undefined;
  /**
   * Appends events decided on `on` with the revision it was folded to as the expected revision (a
   * WrongExpectedRevisionError when the stream moved), and answers the state with them folded in.
   */
  append<S, E extends TypedEvent>(
    stream: string,
    fold: Fold<S, E>,
    on: Loaded<S>,
    events: readonly E[],
    metadata: EventMetadata,
  ): Promise<Loaded<S> & { position: number }>;
}

/** A recorded event viewed as a member of the union `E` (the stream's category guarantees the union). */
export function stored<E extends TypedEvent>(recorded: RecordedEvent): Stored<E> {
  return {
    type: recorded.type,
    data: recorded.data,
    revision: recorded.revision,
    metadata: recorded.metadata,
  } as Stored<E>;
}

/** A typed event with the metadata it is appended with. */
export function event<E extends TypedEvent>(e: E, metadata: EventMetadata): NewEvent {
  return { type: e.type, data: e.data, metadata };
}

/** `from` with `events` (read from its stream after its revision) folded in. */
export function foldAfter<S, E>(fold: Fold<S, E>, from: Loaded<S>, events: readonly RecordedEvent[]): Loaded<S> {
  let { state, revision } = from;
  for (const e of events) {
    state = fold.evolve(state, stored<E & TypedEvent>(e));
    revision = e.revision;
  }
  return { state, revision };
}

/** Appends `events` decided on `on` (expecting its revision) and folds them into it without reading them back. */
export async function appendOn<S, E extends TypedEvent>(
  store: EventStore,
  stream: string,
  fold: Fold<S, E>,
  on: Loaded<S>,
  events: readonly E[],
  metadata: EventMetadata,
): Promise<Loaded<S> & { position: number }> {
  const appended = await store.appendToStream(
    stream,
    events.map((e) => event(e, metadata)),
    on.revision < 0 ? 'no_stream' : on.revision,
  );
  return { ...foldAppended(fold, on, events, metadata), position: appended.position };
}

/** `on` with `events`, just appended after its revision with `metadata`, folded in without reading them back. */
export function foldAppended<S, E extends TypedEvent>(
  fold: Fold<S, E>,
  on: Loaded<S>,
  events: readonly E[],
  metadata: EventMetadata,
): Loaded<S> {
  let { state, revision } = on;
  for (const e of events) state = fold.evolve(state, { ...e, revision: ++revision, metadata });
  return { state, revision };
}

/** The plain implementation: every load reads the whole stream; nothing is held. */
export function readAndFold(store: EventStore): AggregateStates {
  return {
    load: async (stream, fold) =>
      foldAfter(fold, { state: fold.initialState(), revision: -1 }, await store.readStream(stream)),
    peek: () => undefined,
    append: (stream, fold, on, events, metadata) => appendOn(store, stream, fold, on, events, metadata),
  };
}
