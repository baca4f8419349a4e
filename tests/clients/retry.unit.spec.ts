/**
 * The client's retry against a loopback stub server (node:http): the contract's client handling. Waits go through an
 * injected sleep that records them and returns at once, and the jitter through an injected random: no real waits,
 * nothing that depends on the machine's speed.
 */
import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  createClient,
  JobTimeoutError,
  ProblemError,
  RetriesExhaustedError,
  backoffMs,
  type ClientOptions,
} from '../../clients/typescript/src/client.js';

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}
/** One scripted answer: status, headers, body; `drop` closes the connection without answering. */
interface Scripted {
  status?: number;
  headers?: Record<string, string>;
  body?: unknown;
  drop?: boolean;
}

const problem = (status: number, title: string, extra: Record<string, unknown> = {}) => ({
  status,
  headers: { 'Content-Type': 'application/problem+json', 'X-Request-Id': `req-${status}` },
  body: { type: `https://api.example.test/v1/problemas/${status}`, title, status, ...extra },
});
const ok = (body: unknown, status = 200): Scripted => ({
  status,
  headers: { 'Content-Type': 'application/json' },
  body,
});

const RECEIPT = {
  event_id: 'e1',
  order_id: 'o1',
  store_id: 's1',
  click_id: 'ic_0123456789abcdefXYZ',
  status: 'paid',
  currency: 'BRL',
  paid_at: '2026-03-01T10:00:00Z',
  occurred_at: '2026-03-01T10:00:00Z',
  items: [],
  gross_cents: 0,
  refunded_cents: 0,
  net_cents: 0,
  expected_commission_cents: 0,
  known_expected_commission_cents: 0,
  commission_snapshot_at: '2026-03-01T10:00:00Z',
  recorded_at: '2026-03-01T10:00:00Z',
  updated_at: '2026-03-01T10:00:00Z',
  duplicate: false,
  ignored_stale: false,
};
const EVENT = {
  event_id: 'e1',
  order_id: 'o1',
  store_id: 's1',
  click_id: 'ic_0123456789abcdefXYZ',
  status: 'paid' as const,
  currency: 'BRL' as const,
  paid_at: '2026-03-01T10:00:00Z',
  occurred_at: '2026-03-01T10:00:00Z',
  items: [{ sku: 'SKU-1', quantity: 1, unit_price_cents: 100, refunded_cents: 0 }],
};
const JOB = (state: string) => ({
  job_id: 'job_1',
  state,
  totals: { received: 1, accepted: 0, rejected: 0, pending: 0 },
  created_at: '2026-03-01T10:00:00Z',
});

describe('typed client: retry as the contract says (loopback stub server, recorded waits)', () => {
  let server: http.Server;
  let base = '';
  let script: Scripted[] = [];
  let seen: Seen[] = [];
  let waits: number[] = [];

  before(async () => {
    server = http.createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (c: string) => (body += c));
      req.on('end', () => {
        seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
        const next = script.shift() ?? { status: 500, body: { type: 'about:blank', title: 'no script', status: 500 } };
        if (next.drop) {
          req.socket.destroy();
          return;
        }
        const text =
          next.body === undefined ? '' : typeof next.body === 'string' ? next.body : JSON.stringify(next.body);
        res.writeHead(next.status ?? 200, next.headers ?? {});
        res.end(text);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  beforeEach(() => {
    script = [];
    seen = [];
    waits = [];
  });

  const api = (options: Partial<ClientOptions> = {}) =>
    createClient({
      baseUrl: base,
      apiKey: 'ik_test_stub',
      sleep: async (ms) => {
        waits.push(ms);
      },
      random: () => 0.5,
      ...options,
    });

  it('503 twice then 200: three sends with the same Idempotency-Key and body, and growing waits', async () => {
    script = [problem(503, 'Service Unavailable'), problem(503, 'Service Unavailable'), ok(RECEIPT)];
    const receipt = await api().postConversion(EVENT);
    expect(receipt.order_id).to.equal('o1');
    expect(seen).to.have.length(3);
    const keys = seen.map((s) => s.headers['idempotency-key']);
    expect(keys[0]).to.be.a('string').and.have.length.greaterThan(10);
    expect(new Set(keys).size).to.equal(1);
    expect(new Set(seen.map((s) => s.body)).size).to.equal(1);
    expect(JSON.parse(seen[0].body)).to.deep.equal(EVENT);
    expect(seen[0].headers.authorization).to.equal('Bearer ik_test_stub');
    // base 500 ms, doubled at each repeat, equal jitter with random 0.5: 250 + 125, then 500 + 250
    expect(waits).to.deep.equal([375, 750]);
  });

  it('the waits grow whatever the jitter draws, and stop growing at maxDelayMs', () => {
    for (const r of [0, 0.3, 0.999]) {
      for (const s of [0, 0.5, 0.999]) {
        const ws = [1, 2, 3, 4].map((n, i) => backoffMs(n, 500, 8000, () => (i % 2 === 0 ? r : s)));
        for (let i = 1; i < ws.length; i++) expect(ws[i], ws.join()).to.be.at.least(ws[i - 1]);
        expect(ws[0]).to.be.within(250, 500);
        expect(ws[3]).to.be.within(2000, 4000);
      }
    }
    expect(backoffMs(10, 500, 8000, () => 1)).to.equal(8000);
    expect(backoffMs(10, 500, 8000, () => 0)).to.equal(4000);
  });

  it('a network failure (connection closed without an answer) is repeated with the same Idempotency-Key', async () => {
    script = [
      { drop: true },
      ok({ sku: 'SKU-1', store_id: 's1', state: 'pending', received_at: '2026-03-01T10:00:00Z' }),
    ];
    const p = await api().patchProduct(
      'SKU-1',
      { price_cents: 100, updated_at: '2026-03-01T10:00:00Z' },
      { idempotencyKey: 'my-key-1' },
    );
    expect(p.state).to.equal('pending');
    expect(seen.map((s) => s.headers['idempotency-key'])).to.deep.equal(['my-key-1', 'my-key-1']);
    expect(seen.map((s) => `${s.method} ${s.url}`)).to.deep.equal([
      'PATCH /v1/products/SKU-1',
      'PATCH /v1/products/SKU-1',
    ]);
    expect(waits).to.deep.equal([375]);
  });

  it('429 with Retry-After: 2 waits 2 s (recorded, not real), then repeats with the same key', async () => {
    const limited = problem(429, 'Too Many Requests');
    script = [
      { ...limited, headers: { ...limited.headers, 'Retry-After': '2' } },
      ok({ click_id: 'ic_x', store_id: 's1', sku: 'SKU-1', price_cents: 100, occurred_at: '2026-03-01T10:00:00Z' }),
    ];
    const click = await api().sandboxClick({ store_id: 's1', sku: 'SKU-1' });
    expect(click.click_id).to.equal('ic_x');
    expect(waits).to.deep.equal([2000]);
    expect(seen).to.have.length(2);
    expect(seen[0].headers['idempotency-key']).to.equal(seen[1].headers['idempotency-key']);
  });

  it('a 429 whose Retry-After is beyond maxRetryAfterMs is thrown at once, with its Retry-After', async () => {
    const limited = problem(429, 'Too Many Requests');
    script = [{ ...limited, headers: { ...limited.headers, 'Retry-After': '120' } }];
    const err = await api({ retry: { maxRetryAfterMs: 60_000 } })
      .me()
      .catch((e: unknown) => e);
    expect(err).to.be.instanceOf(ProblemError);
    expect((err as ProblemError).status).to.equal(429);
    expect((err as ProblemError).retryAfterSeconds).to.equal(120);
    expect(waits).to.deep.equal([]);
    expect(seen).to.have.length(1);
  });

  it('422 is not repeated and surfaces every invalid field (errors[]) as a ProblemError', async () => {
    const errors = [
      { field: 'shipping.cost_cents', code: 'required', message: 'cost_cents is required' },
      { field: 'price_cents', code: 'integer', message: 'must be an integer' },
    ];
    script = [problem(422, 'Unprocessable Content', { errors, request_id: 'req-422' })];
    const err = await api()
      .putProduct('SKU-1', {
        store_id: 's1',
        title: 't',
        product_url: 'https://shop.test/p',
        image_urls: ['https://shop.test/1.jpg'],
        price_cents: 1,
        available: true,
        updated_at: '2026-03-01T10:00:00Z',
      })
      .catch((e: unknown) => e);
    expect(err).to.be.instanceOf(ProblemError);
    const pe = err as ProblemError;
    expect(pe.status).to.equal(422);
    expect(pe.errors).to.deep.equal(errors);
    expect(pe.problem.title).to.equal('Unprocessable Content');
    expect(pe.requestId).to.equal('req-422');
    expect(pe.message).to.include('PUT /v1/products/SKU-1: 422').and.include('shipping.cost_cents: required');
    expect(seen).to.have.length(1);
    expect(waits).to.deep.equal([]);
  });

  it('no other 4xx is repeated (401, 404, 409, 413)', async () => {
    for (const status of [401, 404, 409, 413]) {
      seen = [];
      script = [problem(status, 'no'), ok({})];
      const err = await api()
        .getJob('job_1')
        .catch((e: unknown) => e);
      expect((err as ProblemError).status).to.equal(status);
      expect(seen).to.have.length(1);
    }
    expect(waits).to.deep.equal([]);
  });

  it('gives up after maxAttempts: the last 5xx is thrown; a network failure as RetriesExhaustedError', async () => {
    script = [problem(503, 'a'), problem(502, 'b'), problem(500, 'c')];
    const err = await api({ retry: { maxAttempts: 3, baseDelayMs: 100, maxDelayMs: 150 } })
      .me()
      .catch((e: unknown) => e);
    expect((err as ProblemError).status).to.equal(500);
    expect(waits).to.deep.equal([75, 113]); // 50 + 25; ceiling 150: 75 + 37.5
    waits = [];
    script = [{ drop: true }, { drop: true }];
    const net = await api({ retry: { maxAttempts: 2 } })
      .deleteProduct('SKU-9')
      .catch((e: unknown) => e);
    expect(net).to.be.instanceOf(RetriesExhaustedError);
    expect((net as RetriesExhaustedError).attempts).to.equal(2);
    expect(waits).to.deep.equal([375]);
  });

  it('a 5xx that is not a problem (a proxy page) still becomes a ProblemError; retry: false repeats nothing', async () => {
    script = [{ status: 502, headers: { 'Content-Type': 'text/html' }, body: '<html>bad gateway</html>' }];
    const err = await api({ retry: false })
      .me()
      .catch((e: unknown) => e);
    expect(err).to.be.instanceOf(ProblemError);
    expect((err as ProblemError).problem).to.deep.include({ type: 'about:blank', status: 502 });
    expect(seen).to.have.length(1);
    expect(waits).to.deep.equal([]);
  });

  it('reads carry no Idempotency-Key; each write call gets its own unless one is given', async () => {
    script = [
      ok({ partner_id: 'p', name: 'n', partner_type: 'hub', environment: 'test', scopes: [] }),
      { status: 204 },
      { status: 204 },
    ];
    const client = api();
    await client.me();
    expect(await client.deleteProduct('a b/c')).to.equal(undefined);
    await client.deleteProduct('SKU-2');
    expect(seen[0].headers['idempotency-key']).to.equal(undefined);
    expect(seen[1].url).to.equal('/v1/products/a%20b%2Fc');
    expect(seen[1].headers['idempotency-key']).to.not.equal(seen[2].headers['idempotency-key']);
  });

  it('waitForJob reads until done with the injected sleep, and gives up with JobTimeoutError', async () => {
    script = [ok(JOB('queued')), ok(JOB('running')), ok({ ...JOB('done'), finished_at: '2026-03-01T10:00:01Z' })];
    const job = await api().waitForJob('job_1', { intervalMs: 250 });
    expect(job.state).to.equal('done');
    expect(waits).to.deep.equal([250, 250]);
    waits = [];
    script = [ok(JOB('running')), ok(JOB('running')), ok(JOB('running'))];
    const err = await api()
      .waitForJob('job_1', { intervalMs: 500, timeoutMs: 1000 })
      .catch((e: unknown) => e);
    expect(err).to.be.instanceOf(JobTimeoutError);
    expect(waits).to.deep.equal([500, 500]);
  });

  it("pages follows next_cursor and keeps the first answer's since/until on the following pages", async () => {
    const click = {
      click_id: 'ic_1',
      store_id: 's1',
      sku: 'SKU-1',
      price_cents: 1,
      occurred_at: '2026-03-01T10:00:00Z',
    };
    const window = { since: '2026-02-01T00:00:00.000Z', until: '2026-03-03T00:00:00.000Z' };
    script = [
      ok({ data: [click], next_cursor: 'c1', ...window }),
      ok({ data: [click, click], next_cursor: null, ...window }),
    ];
    let n = 0;
    for await (const page of api().pages.clicks({ store_id: 's1', limit: 1 })) n += page.data.length;
    expect(n).to.equal(3);
    expect(seen[0].url).to.equal('/v1/clicks?store_id=s1&limit=1');
    const second = new URL(seen[1].url, 'http://x').searchParams;
    expect(Object.fromEntries(second)).to.deep.equal({ store_id: 's1', limit: '1', cursor: 'c1', ...window });
  });
});
