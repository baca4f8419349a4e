import { expect } from 'chai';
import fc from 'fast-check';
import { canonicalJson } from '../../shared-schema/http/json.js';

/** The recursive definition canonicalJson had before it kept its own stack: the texts must stay the same. */
function recursive(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(recursive).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${recursive(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

describe('canonicalJson', () => {
  it('writes every JSON value as the recursive definition does (sorted keys, same text)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        expect(canonicalJson(v)).to.equal(recursive(v));
      }),
      { seed: 3, numRuns: 500 },
    );
    expect(canonicalJson({ b: [1, { d: null, c: 'x' }], a: undefined })).to.equal(
      '{"a":null,"b":[1,{"c":"x","d":null}]}',
    );
  });

  it('takes a body nested 200 000 levels deep (the fuzz found a 500 from a stack overflow on Idempotency-Key)', () => {
    const depth = 200_000;
    const arrays = JSON.parse('['.repeat(depth) + ']'.repeat(depth)) as unknown;
    expect(canonicalJson(arrays)).to.equal('['.repeat(depth) + ']'.repeat(depth));
    const objects = JSON.parse('{"a":'.repeat(depth) + '1' + '}'.repeat(depth)) as unknown;
    expect(canonicalJson(objects).length).to.equal(depth * 6 + 1);
  });
});
