/**
 * Fuzzing of every write route against the embedded service started for real. Bodies are drawn from
 * the same JSON Schemas ajv validates them with (tests/support/schema-arbitrary.ts), then mostly mutated
 * (tests/support/body-mutations.ts); path parameters, query strings, Content-Type and Idempotency-Key vary too.
 *
 * The property, for every request: the answer is 2xx, or a 4xx `application/problem+json` whose `status` is the
 * answer's (a 422 lists its `errors`, each `{field, code, message}`) — never 5xx, never 429 (the brake is raised
 * for this service, so a 429 would hide a case) — and a refused request writes nothing: the event log's head is
 * the same after the answer as before the request.
 *
 * Seeded (FUZZ_SEED, default below) so a failure replays; FUZZ_RUNS sets the runs per route (default 250).
 * Nothing here depends on machine speed: the only waits are for a batch job to finish, bounded by a deadline.
 */
import { expect } from 'chai';
import fc from 'fast-check';
import { startTestService, type Partner, type TestService } from '../support/service.js';
import { until } from '../support/deadline.js';
import { publish, sandboxClick } from '../e2e/commerce-support.js';
import { validValues, type Json, type Schema, type ValidOptions } from '../support/schema-arbitrary.js';
import { MUTATION_KINDS, mutate, mutations, type Mutation, type MutationKind } from '../support/body-mutations.js';
import { StoreInput, ProductInput, ProductPatch } from '../../shared-schema/contract/schemas/catalog.js';
import { BatchInput, ConversionEventSchema, SandboxClickInput } from '../../shared-schema/contract/schemas/commerce.js';
import type { JsonSchema } from '../../shared-schema/contract/schemas/common.js';
import { portOf } from '../../infra/http/gateway.js';
import { ALL_SCOPES } from '../../shared-schema/events/partner.js';

/**
 * The admin API validates in code, without a JSON Schema; these say what it takes, for the generator only.
 */
const AdminPartnerInput: JsonSchema = {
  type: 'object',
  required: ['name', 'partner_type'],
  additionalProperties: false,
  properties: { name: { type: 'string', minLength: 2, maxLength: 120 }, partner_type: { enum: ['hub', 'store'] } },
};
const AdminKeyInput: JsonSchema = {
  type: 'object',
  required: ['environment'],
  additionalProperties: false,
  properties: {
    environment: { enum: ['live', 'test'] },
    scopes: { type: 'array', uniqueItems: true, items: { enum: [...ALL_SCOPES] } },
  },
};

const SEED = Number(process.env.FUZZ_SEED ?? 20260112);
const RUNS = Number(process.env.FUZZ_RUNS ?? 250);
const NOW = new Date('2026-01-02T12:00:00Z');
const ADMIN_TOKEN = 'test-admin-token-0123456789';

/** A CNPJ with the right check digits for any 12-digit base. */
function cnpjOf(base: string): string {
  const values = [...base].map((c) => c.charCodeAt(0) - 48);
  const digit = (w: number[]) => {
    const r = w.reduce((acc, wi, i) => acc + values[i] * wi, 0) % 11;
    return r < 2 ? 0 : 11 - r;
  };
  values.push(digit([5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]));
  values.push(digit([6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]));
  return values.join('');
}

// ------------------------------------------------------------------------------------------------ what is sent

interface Sent {
  method: string;
  path: string;
  body: Uint8Array | undefined;
  headers: Record<string, string>;
  description: string;
}

interface Received {
  status: number;
  contentType: string;
  text: string;
  requestId: string;
}

async function send(base: string, s: Sent): Promise<Received> {
  const res = await fetch(base + s.path, {
    method: s.method,
    headers: s.headers,
    ...(s.body !== undefined ? { body: new Uint8Array(s.body) } : {}),
  });
  return {
    status: res.status,
    contentType: res.headers.get('content-type') ?? '',
    text: await res.text(),
    requestId: res.headers.get('x-request-id') ?? '',
  };
}

/** Path parameters: mostly ones that exist or could, sometimes ones no resource can have. */
function paramValues(pool: readonly string[]): fc.Arbitrary<string> {
  const odd = fc.constantFrom(
    'x'.repeat(81),
    '%00',
    '%ZZ',
    '%E0%A4%A',
    '%F0%9F%98%80',
    '..',
    '.',
    '%2F',
    'a%20b',
    '%ED%A0%80',
    'sku%3Fq',
    '-',
    '_',
    'a'.repeat(80),
  );
  return fc.oneof(
    { arbitrary: fc.constantFrom(...pool), weight: 16 },
    { arbitrary: fc.stringMatching(/^[A-Za-z0-9._-]{1,20}$/), weight: 2 },
    { arbitrary: odd, weight: 2 },
  );
}

const ODD_TYPES = [
  'text/plain',
  'application/json; charset=utf-16',
  'APPLICATION/JSON',
  'application/problem+json',
  'application/jsonx',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/json;;;',
  'application/merge-patch+json',
  'json',
  '*/*',
  'application/json, text/plain',
];

interface HeaderChoice {
  contentType: string | null;
  idempotencyKey: string | null;
}

const headerChoices = (): fc.Arbitrary<HeaderChoice> =>
  fc.record({
    contentType: fc.oneof(
      { arbitrary: fc.constant('application/json'), weight: 16 },
      { arbitrary: fc.constantFrom<string | null>(null, ...ODD_TYPES), weight: 2 },
    ),
    idempotencyKey: fc.oneof(
      { arbitrary: fc.constant<string | null>(null), weight: 14 },
      // A small pool: the same key comes back with another body (422) or the same one (a replay).
      { arbitrary: fc.constantFrom('fuzz-key-1', 'fuzz-key-2', 'fuzz-key-3'), weight: 3 },
      {
        arbitrary: fc.constantFrom('k'.repeat(100), 'k'.repeat(101), 'k'.repeat(2000), 'a b', 'chave-\u00f1'),
        weight: 2,
      },
    ),
  });

const queryChoices = (): fc.Arbitrary<string> =>
  fc.oneof(
    { arbitrary: fc.constant(''), weight: 18 },
    { arbitrary: fc.constantFrom('?a=1', '?store_id=loja-a', '?', '?%ZZ=1', '?a'), weight: 1 },
  );

// ----------------------------------------------------------------------------------------------------- routes

interface Route {
  name: string;
  method: 'PUT' | 'PATCH' | 'POST' | 'DELETE';
  path: (param: string) => string;
  params: readonly string[];
  /** Body schema; none for DELETE (a body is still sent now and then). */
  schema?: JsonSchema;
  hints?: ValidOptions['hints'];
  /**
   * Makes a schema-valid body pass the rules the schema cannot state (the 'from' price above the price, a paid
   * conversion's refunds at 0, ...), applied to 3 bodies in 4 before mutating, so that cases reach the deciders.
   */
  coherent?: (body: Json) => Json;
  env: 'live' | 'test';
  /** The operator's admin API (its token) instead of the partner API. */
  door?: 'api' | 'admin';
  /** Mutations left out for this route (and why, where the route is declared). */
  without?: readonly MutationKind[];
}

interface Case {
  valid: Json;
  mutation: Mutation | null;
  param: string;
  headers: HeaderChoice;
  query: string;
}

function caseArbitrary(route: Route): fc.Arbitrary<Case> {
  const schema: Schema = route.schema ?? {
    type: 'object',
    properties: { note: { type: 'string', maxLength: 10 } },
    additionalProperties: false,
  };
  const valid = validValues(schema, {
    hints: route.hints ?? {},
    dates: { min: new Date('2025-06-01T00:00:00Z'), max: new Date('2026-01-04T00:00:00Z') },
  });
  const fitted = fc
    .tuple(valid, fc.oneof({ arbitrary: fc.constant(true), weight: 3 }, { arbitrary: fc.constant(false), weight: 1 }))
    .map(([v, fit]) => (fit && route.coherent ? route.coherent(v) : v));
  return fc.record({
    valid: fitted,
    mutation: fc.oneof(
      { arbitrary: fc.constant(null), weight: 1 },
      { arbitrary: mutations(MUTATION_KINDS.filter((k) => !route.without?.includes(k))), weight: 3 },
    ),
    param: paramValues(route.params),
    headers: headerChoices(),
    query: queryChoices(),
  });
}

function request(route: Route, c: Case, key: string): Sent {
  const schema: Schema = route.schema ?? true;
  const mutated = c.mutation
    ? mutate(schema, c.valid, c.mutation)
    : { bytes: new Uint8Array(Buffer.from(JSON.stringify(c.valid))), description: 'valid' };
  const withBody = route.method !== 'DELETE' || c.mutation !== null;
  const headers: Record<string, string> = { Authorization: `Bearer ${key}` };
  if (c.headers.contentType !== null && withBody) headers['Content-Type'] = c.headers.contentType;
  if (c.headers.idempotencyKey !== null) headers['Idempotency-Key'] = c.headers.idempotencyKey;
  const param = c.param;
  return {
    method: route.method,
    path: route.path(param) + c.query,
    body: withBody ? mutated.bytes : undefined,
    headers,
    description: `${route.method} ${route.path(param)}${c.query} [${mutated.description}] content-type=${c.headers.contentType} idempotency-key=${c.headers.idempotencyKey?.slice(0, 20) ?? null}`,
  };
}

// ----------------------------------------------------------------------------- bodies that pass the deciders

type Obj = { [key: string]: Json };
const isObj = (v: Json | undefined): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A product (or patch) whose 'from' price, when there is one, is above its price. */
function coherentProduct(p: Json): Json {
  if (!isObj(p)) return p;
  const out = { ...p };
  if (typeof out.product_url === 'string') out.product_url = `https://shop.test/p/${out.product_url.length}`;
  if (Array.isArray(out.image_urls)) out.image_urls = out.image_urls.map((_, i) => `https://cdn.shop.test/${i}.jpg`);
  if (
    typeof out.original_price_cents === 'number' &&
    typeof out.price_cents === 'number' &&
    out.original_price_cents <= out.price_cents
  ) {
    if (Object.keys(out).length > 2) delete out.original_price_cents;
    else out.original_price_cents = out.price_cents + 1;
  }
  return out;
}

function coherentBatch(b: Json): Json {
  if (!isObj(b) || !Array.isArray(b.items)) return b;
  return {
    ...b,
    items: b.items.map((i) =>
      isObj(i) && i.product !== undefined ? { ...i, product: coherentProduct(i.product) } : i,
    ),
  };
}

/** One line per SKU, small totals, refunds as the status wants them, `occurred_at` not before `paid_at`. */
function coherentConversion(body: Json): Json {
  if (!isObj(body) || !Array.isArray(body.items)) return body;
  // Mostly payments (a refund of an order never paid is a 409), picked from the body so that the seed decides.
  const status = body.status !== 'paid' && (body.event_id as string).length % 3 !== 0 ? 'paid' : body.status;
  const seen = new Set<string>();
  // The click was on tsku-1: the order must hold that SKU for the attribution to hold.
  const lines = body.items.map((i, n) => (n === 0 && isObj(i) ? { ...i, sku: 'tsku-1' } : i));
  const items = lines
    .filter((i) => isObj(i) && !seen.has(i.sku as string) && seen.add(i.sku as string))
    .map((i) => {
      const line = { ...(i as Obj) };
      line.quantity = Math.min(Number(line.quantity), 10);
      line.unit_price_cents = Math.min(Number(line.unit_price_cents), 1_000_000);
      const total = line.quantity * line.unit_price_cents;
      line.refunded_cents =
        status === 'paid' ? 0 : status === 'cancelled' ? total : Math.min(Number(line.refunded_cents), total);
      return line;
    });
  const occurred =
    status === 'paid' || Date.parse(body.occurred_at as string) < Date.parse(body.paid_at as string)
      ? body.paid_at
      : body.occurred_at;
  return { ...body, status: status ?? null, items, occurred_at: occurred ?? null };
}

// ------------------------------------------------------------------------------------------------- the checks

interface ProblemShape {
  type?: unknown;
  title?: unknown;
  status?: unknown;
  errors?: unknown;
}

/** Why `r` breaks the property (2xx, or a well-formed 4xx problem), or null. */
function answerFault(r: Received): string | null {
  if (r.status >= 500) return `answered ${r.status}: ${r.text.slice(0, 300)}`;
  if (r.status === 429) return 'answered 429: the rate brake got in the way (raise RATE_LIMIT_WRITES for this service)';
  if (r.status >= 200 && r.status < 300) {
    if (r.status === 204) return r.text === '' ? null : 'a 204 with a body';
    try {
      JSON.parse(r.text);
      return null;
    } catch {
      return `a ${r.status} whose body is not JSON: ${r.text.slice(0, 200)}`;
    }
  }
  if (r.status < 400) return `answered ${r.status}`;
  if (!r.contentType.startsWith('application/problem+json'))
    return `a ${r.status} as ${r.contentType || 'no content type'}, not application/problem+json`;
  let problem: ProblemShape;
  try {
    problem = JSON.parse(r.text) as ProblemShape;
  } catch {
    return `a ${r.status} whose body is not JSON: ${r.text.slice(0, 200)}`;
  }
  if (problem.status !== r.status) return `a ${r.status} whose problem says status ${String(problem.status)}`;
  if (typeof problem.type !== 'string' || typeof problem.title !== 'string')
    return `a ${r.status} problem without type/title: ${r.text.slice(0, 200)}`;
  if (r.status === 422 && problem.errors === undefined) return `a 422 without errors: ${r.text.slice(0, 200)}`;
  if (problem.errors !== undefined) {
    if (!Array.isArray(problem.errors) || problem.errors.length === 0)
      return `a ${r.status} with errors that is not a non-empty list: ${r.text.slice(0, 200)}`;
    for (const e of problem.errors as unknown[]) {
      const f = e as Record<string, unknown>;
      if (typeof f?.field !== 'string' || typeof f.code !== 'string' || typeof f.message !== 'string')
        return `a ${r.status} with a malformed error: ${JSON.stringify(e)}`;
    }
  }
  return null;
}

// ------------------------------------------------------------------------------------------------------ suite

describe('fuzzing the write routes (seeded; 2xx or 4xx problem, never 5xx; a refusal writes nothing)', function () {
  this.timeout(180_000);
  let t: TestService;
  let live: Partner;
  let test: Partner;
  let clickId: string;
  const tally: Record<string, Record<string, number>> = {};

  before(async () => {
    // The brake counts per key and minute of the manual clock, which does not move: raised so no case meets it.
    t = await startTestService({ RATE_LIMIT_WRITES: '100000000', RATE_LIMIT_READS: '100000000', ADMIN_TOKEN });
    t.clock.set(NOW);
    live = await t.partner({ type: 'hub', env: 'live', name: 'Hub Fuzz' });
    test = await t.key(live.partnerId, 'test');
    const store = (n: number) => ({
      name: 'Loja Fuzz',
      cnpj: cnpjOf(`1122233300${String(n).padStart(2, '0')}`),
      website_url: 'https://shop.test',
      domains: ['shop.test'],
      image_hosts: ['cdn.shop.test'],
    });
    for (const [p, id, n] of [
      [live, 'loja-a', 1],
      [live, 'loja-b', 2],
      [test, 'loja-t', 3],
    ] as const) {
      const r = await p.api.put(`/stores/${id}`, store(n));
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
    }
    expect((await t.approveStore(live, 'loja-a')).status).to.equal(200);
    const product = (storeId: string, i: number) => ({
      store_id: storeId,
      title: `Produto ${i} fuzz`,
      product_url: `https://shop.test/p/${i}`,
      image_urls: [`https://cdn.shop.test/${i}.jpg`],
      price_cents: 1000 + i,
      available: true,
      updated_at: NOW.toISOString(),
    });
    for (const [sku, i] of [
      ['sku-1', 1],
      ['sku-2', 2],
    ] as const)
      expect((await live.api.put(`/products/${sku}`, product('loja-a', i))).status).to.equal(200);
    for (const [sku, i] of [
      ['tsku-1', 1],
      ['tsku-2', 2],
    ] as const) {
      expect((await test.api.put(`/products/${sku}`, product('loja-t', i))).status).to.equal(200);
      await publish(t, test, 'test', 'loja-t', sku);
    }
    clickId = (await sandboxClick(test, 'loja-t', 'tsku-1')).click_id;
  });
  after(async () => {
    for (const [route, counts] of Object.entries(tally))
      console.log(
        `      ${route}: ${Object.entries(counts)
          .sort()
          .map(([s, n]) => `${s}×${n}`)
          .join(' ')}`,
      );
    await t?.close();
  });

  const productHints = (prefix: string, stores: string[]): NonNullable<ValidOptions['hints']> => ({
    [`${prefix}store_id`]: fc.constantFrom(...stores),
    [`${prefix}product_url`]: fc.nat(50).map((i) => `https://shop.test/p/${i}`),
    [`${prefix}image_urls[]`]: fc.nat(50).map((i) => `https://cdn.shop.test/${i}.jpg`),
    [`${prefix}updated_at`]: fc
      .date({ min: new Date('2025-12-01T00:00:00Z'), max: NOW, noInvalidDate: true })
      .map((d) => d.toISOString()),
  });
  // The sandbox click happens at NOW, the manual clock does not move, and a payment may be at most 5 min ahead.
  const times = () =>
    fc.date({ min: NOW, max: new Date(NOW.getTime() + 4 * 60_000), noInvalidDate: true }).map((d) => d.toISOString());

  const routes = (): Route[] => [
    {
      name: 'PUT /v1/stores/{store_id}',
      method: 'PUT',
      path: (id) => `/stores/${id}`,
      env: 'live',
      schema: StoreInput,
      params: ['loja-a', 'loja-b', 'loja-c', 'loja-d'],
      hints: { cnpj: fc.stringMatching(/^[0-9]{12}$/).map(cnpjOf), domains: fc.constant(['shop.test']) },
    },
    {
      name: 'PUT /v1/products/{sku}',
      method: 'PUT',
      path: (s) => `/products/${s}`,
      env: 'live',
      schema: ProductInput,
      params: ['sku-1', 'sku-2', 'sku-3', 'sku-4'],
      hints: productHints('', ['loja-a', 'loja-b']),
      coherent: coherentProduct,
    },
    {
      name: 'PATCH /v1/products/{sku}',
      method: 'PATCH',
      path: (s) => `/products/${s}`,
      env: 'live',
      schema: ProductPatch,
      params: ['sku-1', 'sku-2', 'sku-3'],
      hints: { updated_at: productHints('', ['-'])['updated_at'] },
      coherent: coherentProduct,
    },
    {
      name: 'DELETE /v1/products/{sku}',
      method: 'DELETE',
      path: (s) => `/products/${s}`,
      env: 'live',
      params: ['sku-3', 'sku-4', 'sku-5'],
    },
    {
      name: 'POST /v1/products/batch',
      method: 'POST',
      path: () => '/products/batch',
      env: 'live',
      schema: BatchInput,
      params: ['-'],
      hints: {
        'items[].sku': fc.constantFrom('sku-1', 'sku-2', 'sku-6', 'sku-7'),
        ...productHints('items[].product.', ['loja-a', 'loja-b']),
      },
      coherent: coherentBatch,
    },
    {
      name: 'POST /v1/conversions',
      method: 'POST',
      path: () => '/conversions',
      env: 'test',
      schema: ConversionEventSchema,
      params: ['-'],
      hints: {
        store_id: fc.constant('loja-t'),
        order_id: fc.constantFrom('order-1', 'order-2', 'order-3'),
        click_id: fc.constant(clickId),
        'items[].sku': fc.constantFrom('tsku-1', 'tsku-2'),
        paid_at: times(),
        occurred_at: times(),
        currency: fc.constant('BRL'),
      },
      coherent: coherentConversion,
    },
    {
      name: 'POST /v1/sandbox/clicks',
      method: 'POST',
      path: () => '/sandbox/clicks',
      env: 'test',
      schema: SandboxClickInput,
      params: ['-'],
      hints: { store_id: fc.constant('loja-t'), sku: fc.constantFrom('tsku-1', 'tsku-2') },
    },
    // Bodies below 64 KiB on the admin API (no huge strings, no deep nesting): its 413 neither drains the body nor
    // closes the connection, and the fetch of that 413 or of the next request on the connection met ECONNRESET
    // (found here with FUZZ_SEED 20260112; readable 413s are another change's work).
    {
      name: 'POST /admin/v1/partners',
      method: 'POST',
      path: () => '/partners',
      env: 'live',
      door: 'admin',
      schema: AdminPartnerInput,
      params: ['-'],
      without: ['huge_string', 'deep_nesting'],
    },
    {
      name: 'POST /admin/v1/partners/{id}/keys',
      method: 'POST',
      path: (id) => `/partners/${id}/keys`,
      env: 'live',
      door: 'admin',
      schema: AdminKeyInput,
      params: [live.partnerId, live.partnerId, 'pt_00000000000000000000'],
      without: ['huge_string', 'deep_nesting'],
    },
  ];

  /** Sends `sent` and checks the answer and the log's head; the answer is returned for the caller's waits. */
  async function check(sent: Sent, tallyAs: string, door: 'api' | 'admin' = 'api'): Promise<Received> {
    const before = await t.service.events.headPosition();
    const r = await send(door === 'admin' ? `http://127.0.0.1:${portOf(t.service.admin)}/admin/v1` : t.api, sent);
    const after = await t.service.events.headPosition();
    const counts = (tally[tallyAs] ??= {});
    counts[r.status] = (counts[r.status] ?? 0) + 1;
    const fault = answerFault(r);
    if (fault) throw new Error(`${sent.description}: ${fault} (X-Request-Id ${r.requestId})`);
    if (r.status >= 400 && after !== before) {
      const written = await t.service.events.readAll({ afterPosition: before });
      throw new Error(
        `${sent.description}: refused with ${r.status} yet the log moved ${before} → ${after}: ${written.map((e) => `${e.type}@${e.stream} (${e.metadata.request_id ?? '-'})`).join(', ')}`,
      );
    }
    return r;
  }

  /** One case of a route; a batch that was taken is waited for, so its job writes no event during a later case. */
  async function run(route: Route, c: Case): Promise<void> {
    const partner = route.env === 'live' ? live : test;
    const sent = request(route, c, route.door === 'admin' ? ADMIN_TOKEN : partner.key);
    const r = await check(sent, route.name, route.door ?? 'api');
    if (process.env.FUZZ_DEBUG && c.mutation === null)
      console.log(`${sent.description} → ${r.status} ${r.text.slice(0, 300)}`);
    if (route.name === 'POST /v1/products/batch' && r.status === 202) {
      const jobId = (JSON.parse(r.text) as { job_id: string }).job_id;
      await until(
        async () => ['done', 'failed'].includes((await partner.api.get(`/jobs/${jobId}`)).body.state),
        30_000,
        `job ${jobId} finished`,
        10,
      );
    }
  }

  const jsonHeaders = (key: string, extra: Record<string, string> = {}) => ({
    Authorization: `Bearer ${key}`,
    'Content-Type': 'application/json',
    ...extra,
  });

  // Found by this fuzz (FUZZ_SEED 20260112, route #6 seed 20260117, path 21): with an Idempotency-Key, the body's
  // fingerprint (canonicalJson, then recursive) overflowed the stack on a body nested 100 000 deep: a 500.
  it('regression: a body nested 100 000 deep with an Idempotency-Key is a 422, not a 500', async () => {
    for (const [path, raw] of [
      ['/products/sku-1', '{"store_id":' + '{"a":'.repeat(100_000) + '1' + '}'.repeat(100_000) + '}'],
      ['/products/sku-1', '['.repeat(300_000) + ']'.repeat(300_000)],
    ] as const) {
      const r = await check(
        {
          method: 'PUT',
          path,
          body: new Uint8Array(Buffer.from(raw)),
          headers: jsonHeaders(live.key, { 'Idempotency-Key': 'deep-1' }),
          description: `PUT ${path} nested`,
        },
        'regressions',
      );
      expect(r.status).to.equal(422);
    }
  });

  it('raw bodies JSON.stringify cannot write are answered 2xx or 422 and refusals write nothing', async () => {
    const conversion = (amount: string) =>
      `{"event_id":"raw-1","order_id":"raw-1","store_id":"loja-t","click_id":"${clickId}","status":"paid","currency":"BRL",` +
      `"paid_at":"${NOW.toISOString()}","occurred_at":"${NOW.toISOString()}","items":[{"sku":"tsku-1","quantity":1,"unit_price_cents":${amount},"refunded_cents":0}]}`;
    for (const amount of ['1e400', '-0', '9007199254740993', '-1e400', '1e-400', '100.0', '1E2']) {
      await check(
        {
          method: 'POST',
          path: '/conversions',
          body: new Uint8Array(Buffer.from(conversion(amount))),
          headers: jsonHeaders(test.key),
          description: `conversion with ${amount}`,
        },
        'regressions',
      );
    }
    const product =
      '{"store_id":"loja-a","title":"\ud800\ud800\ud800","product_url":"https://shop.test/p/1","image_urls":["https://cdn.shop.test/1.jpg"],"price_cents":1e400,"available":true,"updated_at":"2026-01-01T00:00:00Z"}';
    const r = await check(
      {
        method: 'PUT',
        path: '/products/sku-raw',
        body: new Uint8Array(Buffer.from(product)),
        headers: jsonHeaders(live.key, { 'Idempotency-Key': 'k'.repeat(101) }),
        description: 'product with 1e400',
      },
      'regressions',
    );
    expect(r.status).to.equal(422);
  });

  // The routes are built once the partner exists (before); their names here.
  const NAMES = [
    'PUT /v1/stores/{store_id}',
    'PUT /v1/products/{sku}',
    'PATCH /v1/products/{sku}',
    'DELETE /v1/products/{sku}',
    'POST /v1/products/batch',
    'POST /v1/conversions',
    'POST /v1/sandbox/clicks',
    'POST /admin/v1/partners',
    'POST /admin/v1/partners/{id}/keys',
  ];
  NAMES.forEach((name, index) => {
    it(`${name} (seed FUZZ_SEED+${index})`, async () => {
      const route = routes().find((r) => r.name === name)!;
      // The admin routes are the operator's, not the contract's: fewer runs.
      const runs = route.door === 'admin' ? Math.ceil(RUNS / 5) : RUNS;
      await fc.assert(
        fc.asyncProperty(caseArbitrary(route), (c) => run(route, c)),
        { seed: SEED + index, numRuns: runs, endOnFailure: true },
      );
    });
  });
});
