/** The depth scan that refuses deeply nested JSON before JSON.parse agrees with the parsed value's depth. */
import { expect } from 'chai';
import fc from 'fast-check';
import { MAX_JSON_DEPTH, jsonDeeperThan } from '../../shared-schema/http/json.js';

/** Arrays and objects inside one another, counted on the parsed value. */
function depthOf(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0;
  const children = Array.isArray(value) ? value : Object.values(value as Record<string, unknown>);
  return 1 + children.reduce((max: number, child) => Math.max(max, depthOf(child)), 0);
}

describe('jsonDeeperThan (the depth of raw JSON, before parsing)', () => {
  it('agrees with the parsed depth for any JSON, brackets and escapes inside strings included', () => {
    const text = fc.string({ unit: fc.constantFrom('[', ']', '{', '}', '"', '\\', 'a', 'é', '\u0000') });
    const json = fc.letrec((tie) => ({
      node: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        text,
        fc.integer(),
        fc.constant(null),
        fc.array(tie('node'), { maxLength: 3 }),
        fc.dictionary(text, tie('node'), { maxKeys: 3 }),
      ),
    })).node;
    fc.assert(
      fc.property(json, fc.integer({ min: 0, max: 8 }), (value, max) => {
        const raw = Buffer.from(JSON.stringify(value));
        expect(jsonDeeperThan(raw, max)).to.equal(depthOf(value) > max);
      }),
      { seed: 64, numRuns: 2000 },
    );
  });

  it('stops at the first level past the limit of a body of brackets', () => {
    expect(jsonDeeperThan(Buffer.from('['.repeat(MAX_JSON_DEPTH)), MAX_JSON_DEPTH)).to.equal(false);
    expect(jsonDeeperThan(Buffer.from('['.repeat(MAX_JSON_DEPTH + 1)), MAX_JSON_DEPTH)).to.equal(true);
    expect(jsonDeeperThan(Buffer.from(`"${'['.repeat(1000)}"`), MAX_JSON_DEPTH)).to.equal(false);
  });
});
