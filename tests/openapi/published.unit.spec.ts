/**
 * The published document, read by an outside validator (@hyperjump/json-schema, see tests/support/published-openapi.ts):
 * it is a valid OpenAPI 3.1 document, every request body and answer has an example that validates (request
 * examples also with the service's own ajv), the guide's curl bodies are those examples, and the published
 * rewrite of the one-of blocks accepts and refuses what the service's validators accept and refuse.
 */
import { expect } from 'chai';
import { bodyValidator } from '../../shared-schema/contract/validation.js';
import { guide } from '../../shared-schema/contract/guide.js';
import { OPERATION_EXAMPLES } from '../../shared-schema/contract/examples.js';
import { OPERATIONS } from '../../shared-schema/contract/openapi-operations.js';
import { COMPONENT_SCHEMAS } from '../../shared-schema/contract/openapi.js';
import type { Json } from '../../shared-schema/contract/openapi-publish.js';
import {
  publishedDocument,
  validateAt,
  validateDocument,
  describeErrors,
  guideBodies,
  type Doc,
  PUBLISHED_BASE,
} from '../support/published-openapi.js';

const isObj = (v: unknown): v is Doc => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Every media object of a request body or an answer: [location of the media object, the object]. */
function* mediaObjects(doc: Doc): Generator<[string[], Doc]> {
  for (const [p, item] of Object.entries(doc.paths as Doc)) {
    for (const [method, op] of Object.entries(item as Doc)) {
      if (!isObj(op)) continue;
      const body = op.requestBody;
      if (isObj(body) && isObj(body.content)) {
        for (const [media, m] of Object.entries(body.content))
          yield [['paths', p, method, 'requestBody', 'content', media], m as Doc];
      }
      for (const [status, r] of Object.entries(op.responses as Doc)) {
        if (isObj(r) && isObj(r.content)) {
          for (const [media, m] of Object.entries(r.content))
            yield [['paths', p, method, 'responses', status, 'content', media], m as Doc];
        }
      }
    }
  }
  for (const [name, r] of Object.entries(((doc.components as Doc).responses ?? {}) as Doc)) {
    if (isObj(r) && isObj(r.content)) {
      for (const [media, m] of Object.entries(r.content))
        yield [['components', 'responses', name, 'content', media], m as Doc];
    }
  }
}

describe('Published OpenAPI document (outside validator)', () => {
  const { doc } = publishedDocument();

  it('is a valid OpenAPI 3.1 document for @hyperjump/json-schema (OAS 3.1 schema with the OAS dialect)', async () => {
    const out = await validateDocument();
    expect(out.valid, describeErrors(out)).to.equal(true);
  });

  it('has an example in every request body and answer, valid against its schema', async () => {
    let seen = 0;
    for (const [parts, media] of mediaObjects(doc)) {
      const where = parts.join(' ');
      expect(media, where).to.have.property('example');
      seen++;
      if (!parts.at(-1)!.includes('json')) {
        expect(media.example, where).to.be.a('string');
        continue;
      }
      const out = await validateAt([...parts, 'schema'], media.example);
      expect(out.valid, `${where}: ${describeErrors(out)}`).to.equal(true);
    }
    expect(seen).to.be.greaterThan(20);
  });

  it("validates the request examples with the service's own ajv validators too", () => {
    for (const op of Object.values(OPERATIONS)) {
      if (!op.body) continue;
      const example = OPERATION_EXAMPLES[op.operationId]?.request;
      expect(example, op.operationId).to.not.equal(undefined);
      expect(bodyValidator(op.body)(example), op.operationId).to.deep.equal([]);
    }
  });

  it("writes the guide's curl bodies from the same examples", () => {
    const bodies = guideBodies(guide(PUBLISHED_BASE));
    expect(bodies.map((b) => `${b.method} ${b.path}`)).to.deep.equal([
      'PUT /stores/loja-centro',
      'PUT /products/SKU-123-AZUL',
      'PATCH /products/SKU-123-AZUL',
      'POST /products/batch',
      'POST /sandbox/clicks',
      'POST /conversions',
      'PUT /webhook',
    ]);
    const ids = [
      'putStore',
      'putProduct',
      'patchProduct',
      'postProductBatch',
      'postSandboxClick',
      'postConversion',
      'putWebhook',
    ];
    bodies.forEach((b, i) => expect(b.body, ids[i]).to.deep.equal(OPERATION_EXAMPLES[ids[i]].request));
  });

  it('accepts and refuses what the service accepts and refuses (one-of blocks, nullable enums), except the two-decimal rule', async () => {
    const at = (name: string) => ['components', 'schemas', name];
    const product = OPERATION_EXAMPLES.putProduct.request as Doc;
    const cases: [string, Json][] = [
      ['Commission', { type: 'percentage', rate: 12.34 }],
      ['Commission', { type: 'percentage', rate: 0.07 }],
      ['Commission', { type: 'fixed', amount_cents: 500 }],
      ['Commission', null],
      ['Commission', { type: 'percentage' }],
      ['Commission', { type: 'percentage', rate: 5, amount_cents: 1 }],
      ['Commission', { type: 'fixed', amount_cents: 1.5 }],
      ['Commission', { type: 'other', rate: 5 }],
      ['Commission', { rate: 5 }],
      ['Commission', { type: 'percentage', rate: 101 }],
      ['Commission', 'percentage'],
      ['Shipping', { type: 'free' }],
      ['Shipping', { type: 'free', min_order_cents: 9900, delivery_days_max: 3 }],
      ['Shipping', { type: 'fixed', cost_cents: 1990 }],
      ['Shipping', { type: 'fixed', delivery_days_min: 2 }],
      ['Shipping', { type: 'free', cost_cents: 0 }],
      ['Shipping', null],
      ['Shipping', {}],
      ['BatchItem', { op: 'upsert', sku: 'SKU-1', product }],
      ['BatchItem', { op: 'delete', sku: 'SKU-OLD' }],
      ['BatchItem', { op: 'upsert', sku: 'SKU-1' }],
      ['BatchItem', { op: 'delete', sku: 'SKU-OLD', product }],
      ['BatchItem', { op: 'replace', sku: 'SKU-1' }],
      ['BatchItem', { op: 'upsert', sku: 'SKU 1', product: { ...product, shipping: { type: 'fixed' } } }],
      ['ProductInput', { ...product, commission: null }],
      ['ProductInput', { ...product, commission: { type: 'fixed', amount_cents: 500, rate: 1 } }],
      [
        'ProductStatus',
        {
          sku: 'A',
          store_id: 's',
          state: 'accepted',
          received_at: '2026-03-01T00:00:00Z',
          commission: null,
          commission_source: null,
        },
      ],
      [
        'ProductStatus',
        {
          sku: 'A',
          store_id: 's',
          state: 'accepted',
          received_at: '2026-03-01T00:00:00Z',
          commission_source: 'partner',
        },
      ],
      ['ProductStatus', { sku: 'A', store_id: 's', state: 'accepted', received_at: 'yesterday' }],
    ];
    for (const [name, value] of cases) {
      const service = bodyValidator(COMPONENT_SCHEMAS[name])(value).length === 0;
      const published = (await validateAt(at(name), value)).valid;
      expect(published, `${name} ${JSON.stringify(value)}: service says ${service}`).to.equal(service);
    }
    // The one published difference: more than two decimals is refused by the service only (said in the description).
    const three = { type: 'percentage', rate: 12.345 };
    expect(bodyValidator(COMPONENT_SCHEMAS.Commission)(three).map((e) => e.code)).to.deep.equal(['multiple_of']);
    expect((await validateAt(at('Commission'), three)).valid).to.equal(true);
    const rate = ((doc.components as Doc).schemas as Doc).CommissionPercentage as Doc;
    expect(rate).to.not.have.nested.property('properties.rate.multipleOf');
    expect(rate).to.have.nested.property('properties.rate.description').that.includes('At most 2 decimal places');
  });

  it('publishes the one-of blocks as oneOf with a discriminator, and nullable enums with a type', () => {
    const schemas = (doc.components as Doc).schemas as Doc;
    expect(JSON.stringify(schemas)).to.not.match(/"(if|then|else)":/);
    for (const [name, d, branches] of [
      ['Commission', 'type', ['CommissionPercentage', 'CommissionFixed']],
      ['Shipping', 'type', ['ShippingFree', 'ShippingFixed']],
      ['BatchItem', 'op', ['BatchItemUpsert', 'BatchItemDelete']],
    ] as const) {
      const s = schemas[name] as Doc;
      expect((s.discriminator as Doc).propertyName, name).to.equal(d);
      const refs = (s.oneOf as Doc[]).filter((b) => b.$ref).map((b) => (b.$ref as string).split('/').pop());
      expect(refs, name).to.deep.equal([...branches]);
      expect(
        Object.values((s.discriminator as Doc).mapping as Doc).map((r) => (r as string).split('/').pop()),
      ).to.deep.equal([...branches]);
      expect(
        (s.oneOf as Doc[]).some((b) => b.type === 'null'),
        `${name} null branch`,
      ).to.equal(name === 'Commission');
    }
    expect(((schemas.ProductStatus as Doc).properties as Doc).commission_source).to.deep.equal({
      type: ['string', 'null'],
      enum: ['product', 'store', null],
    });
    const walk = (v: unknown): void => {
      if (Array.isArray(v)) v.forEach(walk);
      else if (isObj(v)) {
        if (Array.isArray(v.enum) || 'const' in v) expect(v, JSON.stringify(v)).to.have.property('type');
        Object.values(v).forEach(walk);
      }
    };
    walk(schemas);
  });
});
