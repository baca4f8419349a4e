/**
 * The one shape of every aggregate of the write side (emmett's decider):
 *   - `decide(command, state)` returns the events to append and the answer, or throws a ProblemError;
 *   - `evolve(state, event)` folds one of the aggregate's typed events into the state;
 *   - `initialState()` is the state of a stream that does not exist.
 * Both functions are pure: no I/O, no clock (the time comes in the command), no metadata (the caller adds it when
 * it appends). `command-api/aggregate-repository.ts` runs a decider against the event store.
 */
import type { EventMetadata, NewEvent, RecordedEvent } from '../../shared-schema/ports/event-store.js';

/** A member of an aggregate's event union. */
export interface TypedEvent {
  type: string;
  data: unknown;
}

export interface Decision<E, R> {
  events: E[];
  result: R;
}

/** An event of the union as read back from its stream, with its revision in the stream and its metadata. */
export type Stored<E> = E & { revision: number; metadata: EventMetadata };

/** The fold of a stream into a state: what a load needs. Every decider is one; a read-only view of a stream too. */
export interface Fold<S, E> {
  /** Distinguishes cache entries when two folds read the same stream. */
  name: string;
  initialState: () => S;
  evolve: (state: S, event: Stored<E>) => S;
}

export interface Decider<S, C, E, R> extends Fold<S, E> {
  decide: (command: C, state: S) => Decision<E, R>;
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

/** The state a fold reaches over recorded events (starting from `from`, by default the initial state). */
export function foldRecorded<S, E>(
  fold: Fold<S, E>,
  events: readonly RecordedEvent[],
  from: S = fold.initialState(),
): S {
  return events.reduce((state, e) => fold.evolve(state, stored<E & TypedEvent>(e)), from);
}

/** A typed event with the metadata it is appended with. */
export function event<E extends TypedEvent>(e: E, metadata: EventMetadata): NewEvent {
  return { type: e.type, data: e.data, metadata };
}

/** Exhaustiveness check for `switch` over a union. */
export function unreachable(x: never): never {
  throw new Error(`unhandled case: ${JSON.stringify(x)}`);
}
