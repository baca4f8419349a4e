/**
 * The one shape of every aggregate of the write side (emmett's decider):
 *   - `decide(command, state)` returns the events to append and the answer, or throws a ProblemError;
 *   - `evolve(state, event)` folds one of the aggregate's typed events into the state;
 *   - `initialState()` is the state of a stream that does not exist.
 * Both functions are pure: no I/O, no clock (the time comes in the command), no metadata (the caller adds it when
 * it appends). `command-api/aggregate-repository.ts` runs a decider against the aggregate-state port.
 */
import type { RecordedEvent } from '../../shared-schema/ports/event-store.js';
import { stored, type Fold, type TypedEvent } from '../../shared-schema/ports/aggregate-states.js';

export type { Fold, Stored, TypedEvent } from '../../shared-schema/ports/aggregate-states.js';
export { event, stored } from '../../shared-schema/ports/aggregate-states.js';

export interface Decision<E, R> {
  events: E[];
  result: R;
}

export interface Decider<S, C, E, R> extends Fold<S, E> {
  decide: (command: C, state: S) => Decision<E, R>;
}

/** The state a fold reaches over recorded events (starting from `from`, by default the initial state). */
export function foldRecorded<S, E>(
  fold: Fold<S, E>,
  events: readonly RecordedEvent[],
  from: S = fold.initialState(),
): S {
  return events.reduce((state, e) => fold.evolve(state, stored<E & TypedEvent>(e)), from);
}

/** Exhaustiveness check for `switch` over a union. */
export function unreachable(x: never): never {
  throw new Error(`unhandled case: ${JSON.stringify(x)}`);
}
