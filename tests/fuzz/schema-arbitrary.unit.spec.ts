/**
 * The fuzz generator checked against the validator it feeds: every value drawn from a request schema passes the
 * ajv validator compiled from that schema (so the fuzz tests start from valid bodies), and the mutations that must
 * make a body invalid do.
 */
import { expect } from 'chai';
import fc from 'fast-check';
import { bodyValidator, unicodeErrors } from '../../shared-schema/contract/validation.js';
import { MAX_FIELD_ERRORS, invalid } from '../../shared-schema/contract/problems.js';
import { StoreInput, ProductInput, ProductPatch } from '../../shared-schema/contract/schemas/catalog.js';
import { BatchInput, ConversionEventSchema, SandboxClickInput } from '../../shared-schema/contract/schemas/commerce.js';
import { BatchShape } from '../../shared-schema/contract/schemas/batch.js';
import { Commission, Shipping, type JsonSchema } from '../../shared-schema/contract/schemas/common.js';
import { schemaAt, validValues, type Json } from '../support/schema-arbitrary.js';
import { mutate, type MutationKind } from '../support/body-mutations.js';

const SCHEMAS: Record<string, JsonSchema> = {
  StoreInput,
  ProductInput,
  ProductPatch,
  BatchInput,
  BatchShape,
  ConversionEvent: ConversionEventSchema,
  SandboxClickInput,
  Commission,
  Shipping,
};

describe('schema-arbitrary: values from the request schemas', () => {
  for (const [name, schema] of Object.entries(SCHEMAS)) {
    it(`draws only values ${name} accepts`, () => {
      const validate = bodyValidator(schema);
      fc.assert(
        fc.property(validValues(schema), (v) => {
          expect(validate(v), JSON.stringify(v)).to.deep.equal([]);
        }),
        { seed: 12, numRuns: 150 },
      );
    });
  }

  it('draws every variant of an if/then schema (both commissions and null, both shippings)', () => {
    const kinds = new Set(
      fc
        .sample(validValues(Commission), { seed: 1, numRuns: 200 })
        .map((c) => (c === null ? 'null' : String((c as { type: string }).type))),
    );
    expect([...kinds].sort()).to.deep.equal(['fixed', 'null', 'percentage']);
    const shippings = new Set(
      fc.sample(validValues(Shipping), { seed: 1, numRuns: 100 }).map((s) => (s as { type: string }).type),
    );
    expect([...shippings].sort()).to.deep.equal(['fixed', 'free']);
  });

  it('finds the schema of a node through if/then variants and arrays', () => {
    const value = {
      items: [{ op: 'upsert', sku: 'a', product: { price_cents: 1, commission: { type: 'percentage', rate: 5 } } }],
    };
    expect(schemaAt(BatchInput, value, ['items', 0, 'product', 'price_cents'])).to.include({
      type: 'integer',
      minimum: 1,
    });
    expect(schemaAt(BatchInput, value, ['items', 0, 'product', 'commission', 'rate'])).to.include({
      multipleOf: 0.01,
      maximum: 100,
    });
    expect(schemaAt(BatchInput, value, ['items', 0, 'nope'])).to.equal(undefined);
  });

  it('refuses a keyword it does not handle instead of drawing values the validator would refuse', () => {
    expect(() => validValues({ type: 'string', contentEncoding: 'base64' })).to.throw(/contentEncoding/);
  });

  it('makes valid bodies invalid with the mutations that always must (missing required, extra field, bounds, wrong type)', () => {
    const validate = bodyValidator(ProductInput);
    const kinds: MutationKind[] = ['missing_required', 'extra_field', 'wrong_type'];
    fc.assert(
      fc.property(
        validValues(ProductInput),
        fc.constantFrom(...kinds),
        fc.nat(1000),
        fc.nat(1000),
        (v, kind, pick, variant) => {
          const { bytes, description } = mutate(ProductInput, v, { kind, pick, variant });
          const text = Buffer.from(bytes).toString('utf8');
          const parsed = JSON.parse(text) as Json;
          expect(validate(parsed), `${description}: ${text}`).to.not.deep.equal([]);
        },
      ),
      { seed: 7, numRuns: 300 },
    );
  });

  it('writes numbers and escapes JSON.stringify cannot: 1e400, -0, lone surrogates, deep nesting', () => {
    const body = { store_id: 'loja', sku: 'x' };
    const text = (kind: MutationKind, variant: number, pick = 1) =>
      Buffer.from(mutate(SandboxClickInput, body, { kind, pick, variant }).bytes).toString('utf8');
    expect(text('odd_number', 0)).to.equal('{"store_id":1e400,"sku":"x"}');
    expect(text('odd_number', 2)).to.equal('{"store_id":-0,"sku":"x"}');
    expect(text('lone_surrogate', 0, 0)).to.equal('{"store_id":"\\ud800","sku":"x"}');
    const deep = text('deep_nesting', 1);
    expect(deep.length).to.equal('{"store_id":,"sku":"x"}'.length + 20_000);
    expect(deep.startsWith('{"store_id":[[[[')).to.equal(true);
  });
});

describe('unicodeErrors (lone surrogates anywhere in a body)', () => {
  it('walks a body nested 100 000 deep in one step per level (it copied the path per level: quadratic, found by the fuzz)', () => {
    let deep: unknown = '\ud800';
    for (let i = 0; i < 100_000; i++) deep = [deep];
    const errors = unicodeErrors({ a: deep });
    expect(errors).to.have.length(1);
    expect(errors[0].field).to.equal(`a${'[0]'.repeat(100_000)}`);
  });
  it('stops one past a hundred errors (a problem lists a hundred and says the list was cut)', () => {
    const errors = unicodeErrors(Array.from({ length: 5000 }, () => '\udc00'));
    expect(errors).to.have.length(MAX_FIELD_ERRORS + 1);
    const problem = invalid(errors).toBody('https://x.example/v1');
    expect(problem.errors).to.have.length(MAX_FIELD_ERRORS);
    expect(problem.errors_truncated).to.equal(true);
  });
});
