/**
 * Command handling for the deciders of `deciders/` (one shape, `deciders/decider.ts`), through the aggregate-state
 * port (shared-schema/ports/aggregate-states.ts; infra chooses the implementation, with or without a cache):
 *   1. load the state: the stream folded with the decider's `evolve`;
 *   2. decide with the pure `decide`;
 *   3. append with the revision the state was folded to as the expected revision;
 *   4. on a concurrency conflict, go back to 1 (`retryOnConflict`).
 * The writers of one stream in this process take turns (`StreamLocks`); the expected revision settles races with
 * other processes.
 */
import type { EventMetadata } from '../shared-schema/ports/event-store.js';
import type { AggregateStates, Loaded } from '../shared-schema/ports/aggregate-states.js';
import { retryOnConflict } from './conflict-retry.js';
import type { Decider, Decision, TypedEvent } from './deciders/decider.js';

export type { Loaded } from '../shared-schema/ports/aggregate-states.js';

export interface Handled<S, R> extends Loaded<S> {
  result: R;
  /** Log position of the last appended event, or undefined when nothing was appended. */
  position?: number;
}

export class AggregateRepository {
  private readonly locks = new StreamLocks();

  constructor(private readonly states: AggregateStates) {}

  readonly load: AggregateStates['load'] = (stream, fold) => this.states.load(stream, fold);
  /** For commands that span several streams and run their own attempt inside `serialized`. */
  readonly append: AggregateStates['append'] = (stream, fold, on, events, metadata) =>
    this.states.append(stream, fold, on, events, metadata);

  /** `work` alone among this process's writers of `lockKey`, taken again on a lost race. */
  serialized<T>(lockKey: string, work: (attempt: number) => Promise<T>): Promise<T> {
    return this.locks.exclusive(lockKey, () => retryOnConflict(work));
  }

  /** Decide `command` on the stream and append the events with `metadata`. */
  handle<S, C, E extends TypedEvent, R>(
    stream: string,
    decider: Decider<S, C, E, R>,
    command: C,
    metadata: EventMetadata,
  ): Promise<Handled<S, R>> {
    const appendDecided = async (on: Loaded<S>, decision: Decision<E, R>): Promise<Handled<S, R>> => {
      if (decision.events.length === 0) return { ...on, result: decision.result };
      return { ...(await this.append(stream, decider, on, decision.events, metadata)), result: decision.result };
    };
    return this.serialized(stream, async (attempt) => {
      // A state held from earlier needs no read: the append's expected revision checks that it is current. Only an
      // append checks it, so a decision on it that refuses or appends nothing is taken again on a read state.
      const held = attempt === 1 ? this.states.peek(stream, decider) : undefined;
      const onHeld = held && decidedOrUndefined(() => decider.decide(command, held.state));
      if (held && onHeld && onHeld.events.length > 0) return appendDecided(held, onHeld);

      const loaded = await this.load(stream, decider);
      return appendDecided(loaded, decider.decide(command, loaded.state));
    });
  }
}

/**
 * Runs work alone among this process's callers for a key; other keys run freely. Writers of one stream in one
 * process then never race each other (a burst of N writes would otherwise need N attempts for the last one, past
 * the retry's bound); the expected revision still guards against other processes.
 */
class StreamLocks {
  private readonly tails = new Map<string, Promise<void>>();

  async exclusive<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const tail = previous.then(() => new Promise<void>((resolve) => (release = resolve)));
    this.tails.set(key, tail);
    await previous;
    try {
      return await work();
    } finally {
      release();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }
}

/** The decision, or undefined when it refuses (the caller decides again on a read state, where a refusal stands). */
function decidedOrUndefined<D>(decide: () => D): D | undefined {
  try {
    return decide();
  } catch {
    return undefined;
  }
}
