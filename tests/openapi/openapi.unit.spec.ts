import { expect } from 'chai';
import { PROBLEM_PAGE_PATHS } from '../../shared-schema/html/problem-pages.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { parse as parseYaml } from 'yaml';
import {
  buildOpenApi,
  publishedRoutes,
  toYaml,
  COMPONENT_SCHEMAS,
  CONTRACT_VERSION,
  publishedSchema,
} from '../../shared-schema/contract/openapi.js';
import { publishSchema, type Json } from '../../shared-schema/contract/openapi-publish.js';
import { guide } from '../../shared-schema/contract/guide.js';
import { PUBLIC_PATHS, DOCUMENTATION_PATHS, routeKey } from '../../shared-schema/http/routes.js';
import { API_ROUTES } from '../../infra/wiring/api-routes.js';
import { READ_ROUTES } from '../../query-api/read-routes.js';
import type { JsonSchema } from '../../shared-schema/contract/schemas/common.js';
import { ProductInput, ProductPatch, StoreInput } from '../../shared-schema/contract/schemas/catalog.js';
import * as commerce from '../../shared-schema/contract/schemas/commerce.js';
import { WebhookInput } from '../../shared-schema/contract/schemas/webhooks.js';
import { NO_QUERY } from '../../query-api/no-query.js';
import { publicDocumentLookup, publicDocuments } from '../../infra/http/public-documents.js';

type Obj = Record<string, any>;
const BASE = 'https://api.example.test/v1';
const doc = buildOpenApi(BASE, API_ROUTES) as Obj;
const openApiPath = (p: string) => p.replace(/:([a-z_]+)/g, '{$1}');

/** Follows a local `$ref` (`#/a/b`). */
function resolve(ref: string): Obj {
  expect(ref, ref).to.match(/^#\//);
  let node: any = doc;
  for (const part of ref.slice(2).split('/')) {
    node = node?.[part];
    expect(node, `${ref} resolves`).to.not.equal(undefined);
  }
  return node;
}

/** The schema with every `$ref` to a component replaced by the component, recursively. */
function deref(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(deref);
  if (value === null || typeof value !== 'object') return value;
  const ref = (value as Obj).$ref;
  if (typeof ref === 'string') return deref(resolve(ref));
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, deref(v)]));
}

/** deref, and without the discriminators' `mapping` (the inline form of a one-of block has none). */
function inline(value: unknown): unknown {
  const out = deref(value);
  const strip = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(strip);
    if (v === null || typeof v !== 'object') return v;
    return Object.fromEntries(
      Object.entries(v).map(([k, x]) => [
        k,
        k === 'discriminator' ? { propertyName: (x as Obj).propertyName } : strip(x),
      ]),
    );
  };
  return strip(out);
}

function* refsIn(value: unknown): Generator<string> {
  if (Array.isArray(value)) for (const v of value) yield* refsIn(v);
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k === '$ref' && typeof v === 'string') yield v;
      else yield* refsIn(v);
    }
  }
}

/** A minimal structural schema of an OpenAPI 3.1 document: what a client generator relies on. */
const response = { type: 'object', oneOf: [{ required: ['$ref'] }, { required: ['description'] }] };
const operationSchema = {
  type: 'object',
  required: ['operationId', 'responses'],
  properties: {
    operationId: { type: 'string', pattern: '^[A-Za-z]+$' },
    tags: { type: 'array', items: { type: 'string' } },
    summary: { type: 'string' },
    description: { type: 'string' },
    security: { type: 'array' },
    parameters: {
      type: 'array',
      items: {
        oneOf: [
          { type: 'object', required: ['$ref'], properties: { $ref: { type: 'string' } }, additionalProperties: false },
          {
            type: 'object',
            required: ['name', 'in', 'schema'],
            properties: {
              name: { type: 'string' },
              in: { enum: ['path', 'query', 'header', 'cookie'] },
              required: { type: 'boolean' },
              schema: { type: 'object' },
            },
            if: { properties: { in: { const: 'path' } } },
            then: { required: ['required'], properties: { required: { const: true } } },
          },
        ],
      },
    },
    requestBody: {
      type: 'object',
      required: ['content'],
      properties: { required: { type: 'boolean' }, content: { type: 'object', minProperties: 1 } },
    },
    responses: {
      type: 'object',
      minProperties: 1,
      propertyNames: { pattern: '^[1-5][0-9][0-9]$' },
      additionalProperties: response,
    },
  },
};
const STRUCTURE = {
  type: 'object',
  required: ['openapi', 'info', 'paths', 'components'],
  properties: {
    openapi: { const: '3.1.0' },
    info: {
      type: 'object',
      required: ['title', 'version'],
      properties: { title: { type: 'string', minLength: 1 }, version: { type: 'string' } },
    },
    servers: { type: 'array', items: { type: 'object', required: ['url'] } },
    security: { type: 'array', items: { type: 'object' } },
    paths: {
      type: 'object',
      propertyNames: { pattern: '^/' },
      additionalProperties: {
        type: 'object',
        propertyNames: {
          enum: [
            'get',
            'put',
            'post',
            'delete',
            'patch',
            'head',
            'options',
            'trace',
            'parameters',
            'summary',
            'description',
          ],
        },
        additionalProperties: operationSchema,
      },
    },
    components: {
      type: 'object',
      properties: {
        schemas: { type: 'object', additionalProperties: { type: ['object', 'boolean'] } },
        securitySchemes: { type: 'object', additionalProperties: { type: 'object', required: ['type'] } },
        responses: { type: 'object', additionalProperties: response },
      },
    },
  },
};

const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (
  a: Ajv2020,
) => Ajv2020;

describe('OpenAPI document', () => {
  it('is structurally an OpenAPI 3.1 document with the contract version, the server and a bearer scheme', () => {
    const validate = new Ajv2020({ allErrors: true, strict: false }).compile(STRUCTURE);
    expect(validate(doc), JSON.stringify(validate.errors)).to.equal(true);
    expect(doc.info.version).to.equal('1.0.0-beta.2').and.equal(CONTRACT_VERSION);
    expect(doc.servers).to.deep.equal([{ url: BASE }]);
    expect(doc.components.securitySchemes.bearerAuth).to.include({ type: 'http', scheme: 'bearer' });
    expect(doc.security).to.deep.equal([{ bearerAuth: [] }]);
  });

  it('resolves every $ref, and every component schema compiles as JSON Schema 2020-12', () => {
    for (const ref of refsIn(doc)) resolve(ref);
    const ajv = addFormats(new Ajv2020({ strict: false }));
    ajv.addSchema({ $id: 'doc', components: doc.components });
    for (const name of Object.keys(doc.components.schemas)) {
      expect(ajv.getSchema(`doc#/components/schemas/${name}`), name).to.be.a('function');
    }
  });

  it('has every route of API_ROUTES with its method and path parameters, and no other authenticated path', () => {
    const expected = new Set(API_ROUTES.map((r) => `${r.method.toLowerCase()} ${openApiPath(r.path)}`));
    const seen = new Set<string>();
    const ids = new Set<string>();
    for (const [path, item] of Object.entries(doc.paths as Obj)) {
      for (const [method, op] of Object.entries(item as Obj)) {
        ids.add(op.operationId);
        if (PUBLIC_PATHS.includes(path)) continue;
        seen.add(`${method} ${path}`);
        const pathParams = (op.parameters ?? []).filter((p: Obj) => p.in === 'path').map((p: Obj) => p.name);
        expect(pathParams, `${method} ${path}`).to.deep.equal([...path.matchAll(/\{([a-z_]+)\}/g)].map((m) => m[1]));
      }
    }
    expect([...seen].sort()).to.deep.equal([...expected].sort());
    expect(ids.size, 'operationIds are unique').to.equal(API_ROUTES.length + PUBLIC_PATHS.length);
  });

  it('refuses a declared route without an operation, and an operation without a declared route', () => {
    expect(publishedRoutes(API_ROUTES).map(routeKey).sort()).to.deep.equal(API_ROUTES.map(routeKey).sort());
    const extra = { method: 'GET', path: '/promotions', scope: 'catalog' } as const;
    expect(() => publishedRoutes([...API_ROUTES, extra])).to.throw('no operation for GET /promotions');
    const withoutMe = API_ROUTES.filter((r) => r.path !== '/me');
    expect(() => publishedRoutes(withoutMe)).to.throw('no route declared for GET /me');
    expect(() => buildOpenApi(BASE, withoutMe)).to.throw('no route declared for GET /me');
  });

  it('publishes no Phase 3 path', () => {
    for (const path of Object.keys(doc.paths)) expect(path).to.not.match(/^\/(promotions|coupons|campaigns)\b/);
    expect(JSON.stringify(doc.paths)).to.not.match(/\/(promotions|coupons|campaigns)\//);
  });

  it('marks the three public documents security: [] and answers them with their media type', () => {
    const types: Record<string, string> = {
      '/openapi.json': 'application/json',
      '/openapi.yaml': 'application/yaml',
      '/guia.md': 'text/markdown',
    };
    for (const path of PUBLIC_PATHS) {
      const op = doc.paths[path].get;
      expect(op.security, path).to.deep.equal([]);
      expect(Object.keys(op.responses['200'].content)).to.deep.equal([types[path]]);
      expect(Object.keys(op.responses)).to.deep.equal(['200']);
    }
  });

  it('gives writes an Idempotency-Key header, and every route its success and problem answers', () => {
    for (const r of API_ROUTES) {
      const op = doc.paths[openApiPath(r.path)][r.method.toLowerCase()];
      const headers = (op.parameters ?? []).map((p: Obj) => deref(p)).filter((p: Obj) => p.in === 'header');
      if (r.method === 'GET') expect(headers, r.path).to.deep.equal([]);
      else
        expect(headers).to.deep.equal([
          {
            name: 'Idempotency-Key',
            in: 'header',
            required: false,
            description: headers[0]?.description,
            schema: { type: 'string', maxLength: 100 },
          },
        ]);

      const statuses = Object.keys(op.responses);
      const ok = r.method === 'DELETE' ? '204' : r.path === '/products/batch' ? '202' : '200';
      expect(statuses[0], `${r.method} ${r.path}`).to.equal(ok);
      expect(statuses).to.include.members(['401', '422', '429']);
      if (r.scope) expect(statuses).to.include('403');
      if (r.method !== 'GET' && r.method !== 'DELETE') expect(statuses).to.include('413');
      if (ok === '204') expect(op.responses[ok].content).to.equal(undefined);
      else
        expect(Object.keys(op.responses[ok].content)).to.deep.equal([
          r.path.endsWith('.csv') ? 'text/csv' : 'application/json',
        ]);
      for (const s of statuses.slice(1)) {
        const problem = deref(op.responses[s]) as Obj;
        expect(problem.content['application/problem+json'].schema).to.deep.equal(COMPONENT_SCHEMAS.Problem);
        expect(problem.headers).to.have.property('X-Request-Id');
        if (s === '429')
          expect((problem.headers as Obj)['Retry-After'].schema).to.deep.equal({ type: 'integer', minimum: 1 });
      }
    }
    const notFound = [
      'GET /stores/:store_id',
      'GET /products/:sku',
      'PATCH /products/:sku',
      'GET /jobs/:job_id',
      'GET /conversions/:order_id',
    ];
    for (const key of notFound) {
      const [method, path] = key.split(' ');
      expect(doc.paths[openApiPath(path)][method.toLowerCase()].responses, key).to.have.property('404');
    }
    expect(doc.paths['/conversions'].post.responses).to.have.property('409');
  });

  it('carries the very request body schemas the validators use (in their published form)', () => {
    const bodies: Record<string, JsonSchema> = {
      'PUT /stores/:store_id': StoreInput,
      'PUT /products/:sku': ProductInput,
      'PATCH /products/:sku': ProductPatch,
      'POST /products/batch': commerce.BatchInput,
      'POST /sandbox/clicks': commerce.SandboxClickInput,
      'POST /conversions': commerce.ConversionEventSchema,
      'PUT /webhook': WebhookInput,
    };
    for (const r of API_ROUTES) {
      const key = `${r.method} ${r.path}`;
      const op = doc.paths[openApiPath(r.path)][r.method.toLowerCase()];
      if (!bodies[key]) {
        expect(op.requestBody, key).to.equal(undefined);
        continue;
      }
      expect(op.requestBody.required).to.equal(true);
      expect(deref(op.requestBody.content['application/json'].schema), key).to.deep.equal(
        deref(publishedSchema(bodies[key])),
      );
    }
    // The components themselves, refs resolved, are the published rewrite of the exported objects.
    const inlineForm = (s: JsonSchema) => deref(publishSchema(JSON.parse(JSON.stringify(s)) as Json));
    for (const [name, schema] of Object.entries(COMPONENT_SCHEMAS))
      expect(inline(doc.components.schemas[name]), name).to.deep.equal(inlineForm(schema));
  });

  it('carries the very query schemas the query door validates with, as parameters', () => {
    const queries: Record<string, JsonSchema | undefined> = {
      'GET /clicks': commerce.ListClicksQuery,
      'GET /conversions': commerce.ListConversionsQuery,
      'GET /conversions/:order_id': commerce.GetConversionQuery,
      'GET /reports/commission': commerce.CommissionReportQuery,
      'GET /jobs/:job_id': NO_QUERY, // until its read route lands beside the catalog's
    };
    for (const route of READ_ROUTES) queries[routeKey(route)] = route.query;
    for (const r of API_ROUTES) {
      const key = `${r.method} ${r.path}`;
      const op = doc.paths[openApiPath(r.path)][r.method.toLowerCase()];
      const params = (op.parameters ?? []).filter((p: Obj) => p.in === 'query');
      const schema = queries[key];
      if (r.method !== 'GET') {
        expect(params, key).to.deep.equal([]);
        continue;
      }
      expect(schema, `query schema known for ${key}`).to.not.equal(undefined);
      expect(schema!.additionalProperties, key).to.equal(false);
      const properties = schema!.properties as Record<string, JsonSchema>;
      expect(
        params.map((p: Obj) => p.name),
        key,
      ).to.deep.equal(Object.keys(properties));
      for (const p of params) {
        expect(deref(p.schema), `${key} ${p.name}`).to.deep.equal(deref(publishedSchema(properties[p.name])));
        expect(p.required, `${key} ${p.name} required`).to.equal(
          ((schema!.required as string[]) ?? []).includes(p.name),
        );
      }
    }
  });

  it('validates sample answers of the commercial cycle against the published schemas', () => {
    const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));
    ajv.addSchema({ $id: 'doc', components: doc.components });
    const check = (name: string, value: unknown) => {
      const v = ajv.getSchema(`doc#/components/schemas/${name}`)!;
      expect(v(value), `${name}: ${JSON.stringify(v.errors)}`).to.equal(true);
      return v;
    };
    const totals = {
      clicks: 3,
      orders: 1,
      paid_orders: 1,
      refunded_orders: 0,
      cancelled_orders: 0,
      gross_cents: 50000,
      refunded_cents: 0,
      net_cents: 50000,
      unknown_commission_orders: 0,
      known_expected_commission_cents: 2500,
      expected_commission_cents: 2500,
    };
    const order = {
      event_id: 'e1',
      order_id: '9001',
      store_id: 's',
      click_id: 'ic_AbCdEfGhIjKlMnOpQrStUv',
      status: 'paid',
      currency: 'BRL',
      paid_at: '2026-03-02T10:00:00Z',
      occurred_at: '2026-03-02T10:00:00Z',
      items: [
        {
          sku: 'A',
          quantity: 2,
          unit_price_cents: 25000,
          refunded_cents: 0,
          commission: { type: 'percentage', rate: 5 },
          commission_source: 'store',
          expected_commission_cents: 2500,
        },
      ],
      gross_cents: 50000,
      refunded_cents: 0,
      net_cents: 50000,
      expected_commission_cents: 2500,
      known_expected_commission_cents: 2500,
      commission_snapshot_at: '2026-03-02T10:00:01Z',
      recorded_at: '2026-03-02T10:00:01Z',
      updated_at: '2026-03-02T10:00:01Z',
    };
    check('OrderView', order);
    const receipt = check('ConversionReceipt', { ...order, duplicate: false, ignored_stale: false });
    expect(receipt({ ...order, duplicate: false }), 'receipt needs ignored_stale').to.equal(false);
    check('ConversionPage', {
      data: [order],
      next_cursor: null,
      since: '2026-03-01T00:00:00Z',
      until: '2026-03-31T00:00:00Z',
    });
    const report = check('CommissionReport', {
      since: '2026-03-01T00:00:00Z',
      until: '2026-03-31T00:00:00Z',
      currency: 'BRL',
      environment: 'test',
      basis: 'paid_at_current_state',
      commission_is: 'expected_not_settled',
      totals,
      stores: [{ store_id: 's', ...totals, expected_commission_cents: null }],
    });
    expect(report({ since: 'x' }), 'report needs its fields').to.equal(false);
    check('Job', {
      job_id: 'job_1',
      state: 'done',
      totals: { received: 2, accepted: 1, rejected: 1, pending: 0, removed: 0 },
      errors: [{ index: 1, sku: 'B', reasons: [{ code: 'store_not_found', field: 'store_id', message: 'm' }] }],
      created_at: '2026-03-02T10:00:00Z',
      finished_at: null,
    });
    check('ClickPage', {
      data: [
        {
          click_id: 'ic_AbCdEfGhIjKlMnOpQrStUv',
          store_id: 's',
          sku: 'A',
          price_cents: null,
          occurred_at: '2026-03-02T10:00:00Z',
        },
      ],
      next_cursor: 'c',
      since: '2026-03-01T00:00:00Z',
      until: '2026-03-31T00:00:00Z',
    });
  });

  it('serves the YAML and the JSON as the same document, and a guide written for this base URL', () => {
    expect(parseYaml(toYaml(doc))).to.deep.equal(doc);
    const docs = publicDocuments(BASE);
    expect(Object.keys(docs).sort()).to.deep.equal(
      [...PUBLIC_PATHS, ...DOCUMENTATION_PATHS, ...PROBLEM_PAGE_PATHS].sort(),
    );
    expect(docs['/openapi.json'].type).to.equal('application/json');
    expect(docs['/openapi.yaml'].type).to.equal('application/yaml');
    expect(docs['/guia.md'].type).to.equal('text/markdown; charset=utf-8');
    expect(JSON.parse(docs['/openapi.json'].body)).to.deep.equal(doc);
    expect(parseYaml(docs['/openapi.yaml'].body)).to.deep.equal(doc);
    expect(docs['/openapi.yaml'].body).to.not.match(/^\s*[&*]a\d/m);

    const text = guide(BASE);
    expect(docs['/guia.md'].body).to.equal(text);
    expect(text).to.match(/^# /).and.include(`BASE="${BASE}"`).and.include(CONTRACT_VERSION);
    expect(text).to.not.match(/\{base_url\}|undefined|\$\{/);
    for (const r of API_ROUTES) expect(text, r.path).to.include(openApiPath(r.path));
  });

  it('finds every document by its path, and no route as a document', () => {
    const docs = publicDocuments(BASE);
    const lookup = publicDocumentLookup(BASE);
    for (const [path, document] of Object.entries(docs)) expect(lookup(path), path).to.deep.equal(document);
    for (const path of ['/products', '/products/sku-1', '/docs/none.html', '/problemas/999', '/openapi'])
      expect(lookup(path), path).to.equal(undefined);
  });
});
