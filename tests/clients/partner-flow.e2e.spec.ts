/**
 * The typed client (clients/typescript) against the running embedded service: the example's whole partner flow, run
 * in-process and as the script a partner runs; real 422 and idempotent replays. Under OPENAPI_CHECK_ANSWERS=1 (make
 * test) every answer the client receives is checked against the published document too (an injected fetch).
 */
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createClient, ProblemError, type PartnerClient } from '../../clients/typescript/src/client.js';
import { partnerFlow } from '../../clients/typescript/examples/partner-flow.js';
import { checkAnswer, checkingAnswers } from '../support/published-openapi.js';
import { startTestService, type Partner, type TestService } from '../support/service.js';

const EXAMPLE = fileURLToPath(new URL('../../clients/typescript/examples/partner-flow.js', import.meta.url));

describe('typed client against the running service', function () {
  this.timeout(60_000);
  let t: TestService;
  let partner: Partner;
  let sent: string[] = [];

  /** fetch that records each request and checks each answer against the published document. */
  const checkedFetch =
    (base: string): typeof fetch =>
    async (input, init) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      const method = init?.method ?? 'GET';
      sent.push(`${method} ${url.pathname}`);
      const res = await fetch(input, init);
      if (checkingAnswers()) {
        const text = await res.clone().text();
        const type = res.headers.get('content-type') ?? '';
        const path = url.pathname.slice(new URL(base).pathname.length) + url.search;
        await checkAnswer(
          base,
          method,
          path,
          res.status,
          type,
          type.includes('json') && text ? JSON.parse(text) : text,
        );
      }
      return res;
    };
  const clientFor = (key: string): PartnerClient =>
    createClient({ baseUrl: t.api, apiKey: key, fetch: checkedFetch(t.api) });

  before(async () => {
    t = await startTestService();
    partner = await t.partner({ env: 'test' });
  });
  after(async () => t?.close());
  beforeEach(() => {
    sent = [];
  });

  it("runs the example's whole flow: store, product, batch and job, sandbox click, paid order, refund, report", async () => {
    const lines: string[] = [];
    const r = await partnerFlow(clientFor(partner.key), { domain: 'shop.test', run: 'e2e', log: (l) => lines.push(l) });
    expect(r.job.state).to.equal('done');
    expect(r.job.totals).to.deep.include({ received: 3, rejected: 0 });
    expect(r.job.totals.removed).to.equal(1);
    expect(r.products).to.equal(3);
    expect(r.click.sku).to.equal('camiseta-e2e-1');
    expect(r.paid).to.deep.include({ status: 'paid', gross_cents: 5598, net_cents: 5598, duplicate: false });
    expect(r.refunded).to.deep.include({ status: 'refunded', refunded_cents: 2799, net_cents: 2799 });
    // 12.5 % of the net 2799, half up
    expect(r.order).to.deep.include({
      order_id: 'pedido-e2e',
      status: 'refunded',
      net_cents: 2799,
      expected_commission_cents: 350,
    });
    expect(r.clicks).to.equal(1);
    expect(r.report.totals).to.deep.include({
      clicks: 1,
      orders: 1,
      refunded_orders: 1,
      net_cents: 2799,
      expected_commission_cents: 350,
    });
    expect(r.report.stores.map((s) => s.store_id)).to.deep.equal(['loja-e2e']);
    expect(lines.join('\n')).to.include('order pedido-e2e: refunded');
    // two pages of products (limit 2), every write once: nothing was repeated
    expect(sent.filter((s) => s === 'GET /v1/products')).to.have.length(2);
    expect(sent.filter((s) => s.startsWith('POST /v1/conversions'))).to.have.length(2);
  });

  it('runs as the script a partner runs (SERVICE_URL, API_KEY)', async () => {
    const r = await new Promise<{ code: number; out: string }>((resolve) => {
      execFile(
        process.execPath,
        [EXAMPLE],
        {
          env: {
            ...process.env,
            SERVICE_URL: t.api.replace(/\/v1$/, ''),
            API_KEY: partner.key,
            STORE_DOMAIN: 'shop.test',
          },
          timeout: 50_000,
        },
        (err, stdout, stderr) =>
          resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : 1, out: stdout + stderr }),
      );
    });
    expect(r.code, r.out).to.equal(0);
    expect(r.out)
      .to.include('partner flow done')
      .and.match(/order pedido-[a-z0-9]+: refunded, net 2799/);
  });

  it('a real 422 is thrown once with every invalid field; a live key refuses the example', async () => {
    const api = clientFor(partner.key);
    const err = await api
      .putProduct('sku-x', {
        store_id: 'loja-e2e',
        title: 'x',
        product_url: 'http://shop.test/p',
        image_urls: [],
        price_cents: -1,
        available: true,
        updated_at: '2026-03-01T10:00:00Z',
      })
      .catch((e: unknown) => e);
    expect(err).to.be.instanceOf(ProblemError);
    const pe = err as ProblemError;
    expect(pe.status).to.equal(422);
    expect(pe.errors.map((e) => e.field)).to.include.members(['product_url', 'image_urls', 'price_cents']);
    expect(pe.requestId).to.be.a('string');
    expect(sent).to.deep.equal(['PUT /v1/products/sku-x']);

    const live = await t.partner({ env: 'live' });
    const refused = await partnerFlow(clientFor(live.key)).catch((e: unknown) => e);
    expect(String(refused)).to.include('needs a test key');
  });

  it('the same Idempotency-Key replays the first answer; with another body it is a 422', async () => {
    const api = clientFor(partner.key);
    const body = {
      name: 'Loja Idem',
      cnpj: '11222333000181',
      website_url: 'https://shop.test',
      domains: ['shop.test'],
    };
    const first = await api.putStore('loja-idem', body, { idempotencyKey: 'client-idem-1' });
    const again = await api.putStore('loja-idem', body, { idempotencyKey: 'client-idem-1' });
    expect(again).to.deep.equal(first);
    const other = await api
      .putStore('loja-idem', { ...body, name: 'Outro nome' }, { idempotencyKey: 'client-idem-1' })
      .catch((e: unknown) => e);
    expect((other as ProblemError).status).to.equal(422);
  });
});
