/**
 * The published contract: an OpenAPI 3.1 document generated from the very JSON Schemas the doors validate with
 * (one source of truth). Every named schema becomes a component; wherever a schema object is (by identity) a named
 * component, the document says `$ref` instead of repeating it. Each schema is then published in the form client
 * generators read (openapi-publish.ts: if/then one-of blocks as `oneOf` + `discriminator`, typed enums, no
 * fractional `multipleOf`). Every request body and answer carries an `example` (examples.ts). Pure: no I/O.
 */
import { stringify } from 'yaml';
import { PUBLIC_PATHS, routeKey, type RouteSpec } from '../http/routes.js';
import { DOCUMENTS, OPERATIONS, ProductPage, StorePage, type OperationSpec } from './openapi-operations.js';
import {
  Commission,
  Cursor,
  DateTime,
  Domain,
  ExternalId,
  HttpsUrl,
  Limit,
  Problem,
  RejectionReason,
  Shipping,
  type JsonSchema,
} from './schemas/common.js';
import {
  Account,
  ProductInput,
  ProductPatch,
  ProductStateSchema,
  ProductStatus,
  Store,
  StoreInput,
} from './schemas/catalog.js';
import * as commerce from './schemas/commerce.js';
import { Notification, NotificationPage } from './schemas/notifications.js';
import { Webhook, WebhookAttempt, WebhookInput, WebhookRegistration } from './schemas/webhooks.js';
import * as insights from './schemas/insights.js';
import { publishSchema, type BranchSink, type Json } from './openapi-publish.js';
import { OPERATION_EXAMPLES, problemExample } from './examples.js';
import { LEDGER_COMPONENTS, PERIOD_PARAM } from './openapi-ledger.js';

export const CONTRACT_VERSION = '1.0.0-beta.2';

/** Named schemas, published under `#/components/schemas/<name>`. */
export const COMPONENT_SCHEMAS: Record<string, JsonSchema> = {
  ExternalId,
  HttpsUrl,
  Domain,
  DateTime,
  Cursor,
  Limit,
  Commission,
  Shipping,
  RejectionReason,
  Problem,
  Account,
  StoreInput,
  Store,
  StorePage,
  ProductState: ProductStateSchema,
  ProductInput,
  ProductPatch,
  ProductStatus,
  ProductPage,
  BatchItem: commerce.BatchItem,
  BatchInput: commerce.BatchInput,
  JobTotals: commerce.JobTotals,
  Job: commerce.Job,
  PartnerClick: commerce.PartnerClick,
  ClickPage: commerce.ClickPage,
  SandboxClickInput: commerce.SandboxClickInput,
  ConversionStatus: commerce.ConversionStatus,
  Currency: commerce.Currency,
  ConversionItem: commerce.ConversionItem,
  ConversionEvent: commerce.ConversionEventSchema,
  CommissionSnapshotItem: commerce.CommissionSnapshotItem,
  OrderView: commerce.OrderView,
  ConversionReceipt: commerce.ConversionReceipt,
  ConversionPage: commerce.ConversionPage,
  CommercialTotals: commerce.CommercialTotals,
  StoreCommercialTotals: commerce.StoreCommercialTotals,
  CommissionReport: commerce.CommissionReport,
  Notification,
  NotificationPage,
  WebhookInput,
  WebhookRegistration,
  WebhookAttempt,
  Webhook,
  VisibilityCheck: insights.VisibilityCheck,
  Visibility: insights.Visibility,
  CatalogInsights: insights.CatalogInsights,
  DailyActivity: insights.DailyActivity,
  DailyInsights: insights.DailyInsights,
  ...LEDGER_COMPONENTS,
};

const PATH_PARAMS: Record<string, { schema: JsonSchema; description: string }> = {
  store_id: { schema: ExternalId, description: 'Partner-chosen store id.' },
  sku: { schema: ExternalId, description: 'Stable partner-side SKU; each colour or size variation has its own.' },
  job_id: { schema: { type: 'string' }, description: 'Id returned by `POST /products/batch`.' },
  order_id: { schema: ExternalId, description: 'Partner-side order id.' },
  period: PERIOD_PARAM,
};

const PROBLEMS: Record<number, { name: string; description: string }> = {
  401: {
    name: 'Unauthorized',
    description: 'Key missing, invalid or revoked: send `Authorization: Bearer <API_KEY>`.',
  },
  403: {
    name: 'Forbidden',
    description: 'The key lacks the scope of this route, or a live key called a test-only route (`test_key_required`).',
  },
  404: { name: 'NotFound', description: 'The resource does not exist for this partner and environment.' },
  409: {
    name: 'Conflict',
    description:
      'Conflict, code in `errors[].code`: `event_conflict`, `order_conflict`, `payment_required`, `invalid_transition` (conversions), `sku_store_conflict` (products), `period_open` (closings: the period has not ended), `idempotency_in_flight` (a request with the same `Idempotency-Key` is still running). Correct the cause before repeating.',
  },
  413: {
    name: 'TooLarge',
    description: 'Body above 5 MB (batch) or 1 MB (other routes), or a batch above 1000 items. Nothing written.',
  },
  422: {
    name: 'Invalid',
    description:
      'Invalid body or query: `errors` lists every invalid field at once (`field` is a JSON path such as `items[3].unit_price_cents`, `""` for the whole body). Also: the same `Idempotency-Key` with another route or body, `invalid_attribution` on conversions. Text a shopper sees refuses control characters and bidirectional overrides (`control_character`); a store refuses a public suffix as a domain (`public_suffix`) and a change of its CNPJ (`immutable`). Correct all fields before repeating.',
  },
  429: {
    name: 'RateLimited',
    description: 'Rate brake (600 writes and 1200 reads per minute per key): wait `Retry-After` seconds.',
  },
  503: {
    name: 'Unavailable',
    description:
      'A statement or closing whose window has ended waits until every event recorded before the request is in it; it answers 503 when that takes longer than a few seconds, rather than a window that could change. Wait `Retry-After` seconds and repeat.',
  },
};

/** Replaces every sub-schema that is (by identity) a named component with a `$ref`, except `self` at the root. */
function withRefs(value: unknown, names: Map<object, string>, self?: object): Json {
  if (Array.isArray(value)) return value.map((v) => withRefs(v, names));
  if (value === null || typeof value !== 'object') return value as Json;
  const name = names.get(value);
  if (name !== undefined && value !== self) return { $ref: `#/components/schemas/${name}` };
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withRefs(v, names)]));
}

const componentNames = () => new Map<object, string>(Object.entries(COMPONENT_SCHEMAS).map(([n, s]) => [s, n]));

/**
 * The published form of a schema used in place (a body, a parameter): components become `$ref`s, the rest is
 * rewritten by publishSchema. Exported for the tests that check the document carries the validating schemas.
 */
export function publishedSchema(schema: JsonSchema): Json {
  return publishSchema(withRefs(schema, componentNames()));
}

/**
 * The published components: each named schema, rewritten, followed by the branches of its one-of block
 * (`CommissionPercentage`, `CommissionFixed`, …) so that the discriminator maps each value to a named schema.
 */
export function publishedComponents(): Record<string, Json> {
  const names = componentNames();
  const out: Record<string, Json> = {};
  for (const [name, schema] of Object.entries(COMPONENT_SCHEMAS)) {
    const branches: Record<string, Json> = {};
    const sink: BranchSink = { add: (n, s) => ((branches[n] = s), `#/components/schemas/${n}`) };
    out[name] = publishSchema(withRefs(schema, names, schema), sink, name);
    for (const [n, s] of Object.entries(branches)) {
      if (n in out || n in COMPONENT_SCHEMAS) throw new Error(`openapi: component ${n} would be published twice`);
      out[n] = s;
    }
  }
  return out;
}

const openApiPath = (path: string) => path.replace(/:([a-z_]+)/g, '{$1}');
const isWrite = (r: RouteSpec) => r.method !== 'GET';

function problemStatuses(route: RouteSpec, op: OperationSpec): number[] {
  const set = new Set<number>([401, 422, 429, ...(op.extraProblems ?? [])]);
  if (route.scope || route.testOnly) set.add(403);
  if (isWrite(route)) set.add(409);
  if (op.body) set.add(413);
  return [...set].sort((a, b) => a - b);
}

function operation(route: RouteSpec, op: OperationSpec, ref: (s: JsonSchema) => Json): Record<string, unknown> {
  const parameters: unknown[] = [];
  for (const [, name] of route.path.matchAll(/:([a-z_]+)/g)) {
    const p = PATH_PARAMS[name];
    if (!p) throw new Error(`openapi: no description of path parameter ${name}`);
    parameters.push({ name, in: 'path', required: true, description: p.description, schema: ref(p.schema) });
  }
  if (op.query) {
    const required = (op.query.required as string[] | undefined) ?? [];
    for (const [name, schema] of Object.entries(op.query.properties as Record<string, JsonSchema>)) {
      parameters.push({ name, in: 'query', required: required.includes(name), schema: ref(schema) });
    }
  }
  if (isWrite(route)) parameters.push({ $ref: '#/components/parameters/IdempotencyKey' });

  const examples = OPERATION_EXAMPLES[op.operationId] ?? {};
  const ok: Record<string, unknown> = {
    description: op.ok.description,
    headers: { 'X-Request-Id': { $ref: '#/components/headers/XRequestId' } },
  };
  if (op.ok.schema)
    ok.content = {
      [op.ok.type ?? 'application/json']: { schema: ref(op.ok.schema), ...example(examples.response, op.operationId) },
    };
  const responses: Record<string, unknown> = { [String(op.ok.status)]: ok };
  for (const status of problemStatuses(route, op))
    responses[String(status)] = { $ref: `#/components/responses/${PROBLEMS[status].name}` };

  const out: Record<string, unknown> = {
    operationId: op.operationId,
    tags: [op.tag],
    summary: op.summary,
    description: op.description + (route.scope ? ` Scope: \`${route.scope}\`.` : ''),
  };
  if (parameters.length > 0) out.parameters = parameters;
  if (op.body)
    out.requestBody = {
      required: true,
      content: { 'application/json': { schema: ref(op.body), ...example(examples.request, op.operationId) } },
    };
  out.responses = responses;
  return out;
}

function example(value: Json | undefined, operationId: string): { example?: Json } {
  if (value === undefined) throw new Error(`openapi: no example for ${operationId}`);
  return { example: value };
}

function problemResponse(status: number, apiBaseUrl: string): Json {
  const headers: Record<string, Json> = { 'X-Request-Id': { $ref: '#/components/headers/XRequestId' } };
  if (status === 429 || status === 503) headers['Retry-After'] = { $ref: '#/components/headers/RetryAfter' };
  return {
    description: PROBLEMS[status].description,
    headers,
    content: {
      'application/problem+json': {
        schema: { $ref: '#/components/schemas/Problem' },
        example: problemExample(apiBaseUrl, status),
      },
    },
  };
}

const DESCRIPTION = `Partner Commerce API: stores and hubs send catalog data and commission rules, read clicks and reports, and
report paid orders, refunds and cancellations.

Conventions: JSON in UTF-8; money in integer cents of BRL (\`29990\` is R$ 299,90); dates ISO 8601 with time zone;
errors are RFC 9457 problems (\`application/problem+json\`) listing every invalid field in \`errors\`; every answer
carries \`X-Request-Id\`. The key (\`Authorization: Bearer <API_KEY>\`) decides the environment: \`ik_test_…\` or
\`ik_live_…\`. Writes accept \`Idempotency-Key\` (24 h). Phase 3 paths (\`/promotions\`, \`/coupons\`, \`/campaigns\`)
are not part of this contract and answer 404. The integration guide is at \`/guia.md\`.`;

/** Short examples of the public documents (their heads). */
const DOCUMENT_EXAMPLES: Record<string, Json> = {
  'application/json': { openapi: '3.1.0', info: { title: 'Partner Commerce API', version: CONTRACT_VERSION } },
  'application/yaml': `openapi: 3.1.0\ninfo:\n  title: Partner Commerce API\n  version: ${CONTRACT_VERSION}\n`,
  'text/markdown': '# Guia de integração — Partner Commerce API\n',
};

/**
 * The routes of `routes` in the order of their published operations (OPERATIONS): a route without an operation, or
 * an operation without a route, is a contract that drifted from the doors, refused at start-up.
 */
export function publishedRoutes(routes: readonly RouteSpec[]): RouteSpec[] {
  const byKey = new Map(routes.map((r) => [routeKey(r), r]));
  const missing = routes.filter((r) => !(routeKey(r) in OPERATIONS)).map(routeKey);
  const unserved = Object.keys(OPERATIONS).filter((k) => !byKey.has(k));
  if (missing.length > 0) throw new Error(`openapi: no operation for ${missing.join(', ')}`);
  if (unserved.length > 0) throw new Error(`openapi: no route declared for ${unserved.join(', ')}`);
  return Object.keys(OPERATIONS).map((k) => byKey.get(k)!);
}

/**
 * The OpenAPI 3.1 document of the contract, served at `{apiBaseUrl}/openapi.json` and `.yaml`: one operation for
 * each of `routes` (the routes the doors declare, infra/wiring/api-routes.ts).
 */
export function buildOpenApi(apiBaseUrl: string, routes: readonly RouteSpec[]): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: { title: 'Partner Commerce API', version: CONTRACT_VERSION, description: DESCRIPTION },
    servers: [{ url: apiBaseUrl }],
    security: [{ bearerAuth: [] }],
    tags: [
      'Account',
      'Stores',
      'Products',
      'Clicks',
      'Conversions',
      'Reports',
      'Insights',
      'Notifications',
      'Documents',
    ].map((name) => ({ name })),
    paths: { ...operationPaths(routes), ...documentPaths() },
    components: components(apiBaseUrl),
  };
}

/** One operation for each published route, by path and method. */
function operationPaths(routes: readonly RouteSpec[]): Record<string, Record<string, unknown>> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of publishedRoutes(routes)) {
    (paths[openApiPath(route.path)] ??= {})[route.method.toLowerCase()] = operation(
      route,
      OPERATIONS[routeKey(route)],
      publishedSchema,
    );
  }
  return paths;
}

/** The public documents (this document as JSON and YAML, the guide): a GET each, with no key and no rate brake. */
function documentPaths(): Record<string, Record<string, unknown>> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const path of PUBLIC_PATHS) {
    const d = DOCUMENTS[path];
    if (!d) throw new Error(`openapi: no description of public document ${path}`);
    paths[path] = {
      get: {
        operationId: d.operationId,
        tags: ['Documents'],
        summary: d.summary,
        description: 'Public: no key, no rate brake.',
        security: [],
        responses: {
          '200': {
            description: d.summary,
            headers: { 'X-Request-Id': { $ref: '#/components/headers/XRequestId' } },
            content: { [d.type]: { schema: d.schema, example: DOCUMENT_EXAMPLES[d.type] } },
          },
        },
      },
    };
  }
  return paths;
}

/** The shared parts the operations refer to: schemas, the key, the idempotency header, the problems. */
function components(apiBaseUrl: string): Record<string, unknown> {
  return {
    schemas: publishedComponents(),
    securitySchemes: {
      bearerAuth: {
        type: 'http',
        scheme: 'bearer',
        description: '`Authorization: Bearer <API_KEY>`; `ik_test_…` or `ik_live_…`.',
      },
    },
    parameters: {
      IdempotencyKey: {
        name: 'Idempotency-Key',
        in: 'header',
        required: false,
        description:
          'Same key, route and body within 24 h replays the original answer without writing; another route or body answers 422.',
        schema: { type: 'string', maxLength: 100 },
      },
    },
    headers: {
      XRequestId: {
        description: 'Request id generated by the service; quote it to support.',
        schema: { type: 'string' },
      },
      RetryAfter: { description: 'Seconds to wait before repeating.', schema: { type: 'integer', minimum: 1 } },
    },
    responses: Object.fromEntries(
      Object.keys(PROBLEMS).map((s) => [PROBLEMS[Number(s)].name, problemResponse(Number(s), apiBaseUrl)]),
    ),
  };
}

/** YAML form of the document (no anchors or aliases, no folded lines). */
export function toYaml(doc: unknown): string {
  return stringify(doc, { aliasDuplicateObjects: false, lineWidth: 0 });
}
