/**
 * Given events / when a command / then events, an answer or a problem — one helper for every decider of
 * command-api/deciders/ (they share one shape, decider.ts). Events are compared whole (type and data), a problem by
 * its status and every `field: code` it lists.
 */
import { expect } from 'chai';
import type { Decider, Decision, Fold, TypedEvent } from '../../command-api/deciders/decider.js';
import type { EventMetadata } from '../../shared-schema/ports/event-store.js';
import { ProblemError } from '../../shared-schema/contract/problems.js';

/** Metadata of the history's events (a decider reads it only where the contract needs it, e.g. a job's actor). */
export const META: EventMetadata = {
  recorded_at: '2026-01-01T00:00:00.000Z',
  actor: 'key_test',
  request_id: 'req_test',
};

/** The state the repository folds from `history` (revisions from `from`, metadata META). */
export function fold<S, E>(decider: Fold<S, E>, history: readonly E[], state = decider.initialState(), from = 0): S {
  return history.reduce((s, e, i) => decider.evolve(s, { ...e, revision: from + i, metadata: META }), state);
}

/** The events of `commands` decided one after another from the initial state; each must be accepted. */
export function recorded<S, C, E extends TypedEvent, R>(decider: Decider<S, C, E, R>, ...commands: C[]): E[] {
  const out: E[] = [];
  let state = decider.initialState();
  for (const command of commands) {
    const { events } = decider.decide(command, state);
    state = fold(decider, events, state, out.length);
    out.push(...events);
  }
  return out;
}

export function given<S, C, E extends TypedEvent, R>(decider: Decider<S, C, E, R>, ...history: E[]): Given<S, C, E, R> {
  return new Given(decider, fold(decider, history), history.length);
}

export class Given<S, C, E extends TypedEvent, R> {
  constructor(
    readonly decider: Decider<S, C, E, R>,
    readonly state: S,
    private readonly revision: number,
  ) {}

  /** Decides now: a ProblemError is kept for `thenThrows`; any other error is thrown here. */
  when(command: C): Then<S, E, R> {
    try {
      return new Then(this.decider.decide(command, this.state), null, (events) =>
        fold(this.decider, events, this.state, this.revision),
      );
    } catch (err) {
      if (!(err instanceof ProblemError)) throw err;
      return new Then<S, E, R>(null, err, () => this.state);
    }
  }
}

export class Then<S, E, R> {
  constructor(
    readonly decision: Decision<E, R> | null,
    readonly problem: ProblemError | null,
    private readonly evolved: (events: readonly E[]) => S,
  ) {}

  /** Exactly these events, compared whole; returns the answer. */
  then(...expected: E[]): R {
    expect(this.problem?.message, 'the decision threw a problem').to.equal(undefined);
    expect(this.decision!.events).to.deep.equal(expected);
    return this.decision!.result;
  }

  /** No event; returns the answer. */
  thenNothing(): R {
    return this.then();
  }

  /** A problem with this status and exactly these `field: code` errors, in any order. */
  thenThrows(status: number, ...errors: string[]): ProblemError {
    expect(this.decision?.events, 'the decision did not throw a problem').to.equal(undefined);
    expect(this.problem!.status).to.equal(status);
    expect(this.problem!.errors.map((e) => `${e.field}: ${e.code}`)).to.have.members(errors);
    expect(this.problem!.errors).to.have.length(errors.length);
    return this.problem!;
  }

  /** The state after the decision's events (the state given when it threw). */
  get after(): S {
    return this.evolved(this.decision?.events ?? []);
  }
}
