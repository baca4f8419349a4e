/** Given events / when command / then events or problem — for the deciders built on command-api/aggregate-repository.ts. */
import { expect } from 'chai';
import type { Aggregate, Decision } from '../../command-api/aggregate-repository.js';
import type { EventMetadata, NewEvent } from '../../shared-schema/ports/event-store.js';
import { ProblemError } from '../../shared-schema/problems.js';

export const META: EventMetadata = { recorded_at: '2026-01-01T00:00:00.000Z', actor: 'key_test' };

export function fold<S>(aggregate: Aggregate<S>, events: { type: string; data: unknown }[]): S {
  return events.reduce<S>(
    (state, e, i) => aggregate.evolve(state, { ...e, id: `e${i}`, stream: 's', revision: i, position: i + 1, metadata: META }),
    aggregate.initial(),
  );
}

export function given<S, C, R>(aggregate: Aggregate<S>, decide: (c: C, s: S) => Decision<R>, history: { type: string; data: unknown }[]) {
  const state = fold(aggregate, history);
  return {
    when(command: C) {
      const run = () => decide(command, state);
      return {
        then(expected: { type: string; data?: unknown }[]): R {
          const { events, result } = run();
          expect(events.map((e: NewEvent) => (expected.find((x) => x.type === e.type)?.data === undefined ? { type: e.type } : { type: e.type, data: e.data }))).to.deep.equal(
            expected.map((x) => (x.data === undefined ? { type: x.type } : x)),
          );
          return result;
        },
        thenNothing(): R {
          const { events, result } = run();
          expect(events).to.deep.equal([]);
          return result;
        },
        thenThrows(status: number, code?: string, field?: string): void {
          try {
            run();
          } catch (err) {
            expect(err).to.be.instanceOf(ProblemError);
            const p = err as ProblemError;
            expect(p.status).to.equal(status);
            if (code) expect(p.errors.map((e) => e.code)).to.include(code);
            if (field !== undefined) expect(p.errors.map((e) => e.field)).to.include(field);
            return;
          }
          expect.fail('expected the decision to throw a problem');
        },
      };
    },
  };
}
