/**
 * The sentences of PORTAL.md that the other portal files do not reach on their own (docs/spec-coverage/portal.md
 * maps every sentence to its test): each Visibility check failing alone with its pt-BR detail, `fresh` at the 48 h
 * boundary by the service clock and not refreshed by an ignored write, a removed SKU still answered; the scopes and
 * the 401 of the four `/v1` reads; the order of `reasons` in Catalog health (count, then code); the exact fields of a
 * page of `/v1/events` and of a Notification, and its default `limit` of 50; and the portal pages of a session
 * whose key lacks `catalog`, the overview's catalog states, the reasons' advice and the stores' domains.
 */
import { expect } from 'chai';
import { streams } from '../../shared-schema/domain/streams.js';
import { PRODUCTS, productDocId, type ProductDoc } from '../../shared-schema/read-models/products.js';
import { productBody, startTestService, storeBody, type Partner, type TestService } from '../support/service.js';
import { HOUR, publish, registerStore } from './commerce-support.js';
import { coverOk, getFrom, rootOf, settle } from './shopper-support.js';
import { until } from '../support/deadline.js';

type Check = { check: string; ok: boolean; detail: string | null };
type Visibility = {
  sku: string;
  store_id: string;
  environment: string;
  searchable: boolean;
  checks: Check[];
  fresh_until: string | null;
  svc_url: string | null;
};

describe('PORTAL.md rules over HTTP: visibility checks one by one, scopes, reasons order, notification shape, portal scopes', function () {
  let t: TestService;
  let hub: Partner;
  const T0 = Date.parse('2026-10-05T09:00:00.000Z');
  const CNPJ_KEPT = storeBody().cnpj;

  const put = async (p: Partner, sku: string, overrides: Record<string, unknown> = {}, storeId = 'vis') => {
    const r = await p.api.put(
      `/products/${sku}`,
      productBody(storeId, { updated_at: t.clock.now().toISOString(), ...overrides }),
    );
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
  };
  const visibility = async (p: Partner, sku: string): Promise<Visibility> => {
    const r = await p.api.get(`/products/${sku}/visibility`);
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    return r.body as Visibility;
  };
  const failing = (v: Visibility) => v.checks.filter((c) => !c.ok).map((c) => c.check);
  const detailOf = (v: Visibility, check: string) => v.checks.find((c) => c.check === check)!.detail;

  before(async () => {
    t = await startTestService();
    t.clock.set(new Date(T0));
    hub = await t.partner({ type: 'hub', name: 'Regras' });
    // Store `vis`: approved for shop.test; then it declares novo.test too, which no operator approved yet.
    await registerStore(hub, 'vis', { cnpj: CNPJ_KEPT });
    await put(hub, 'ok');
    await publish(t, hub, 'live', 'vis', 'ok');
    await put(hub, 'unavailable', { available: false });
    await publish(t, hub, 'live', 'vis', 'unavailable');
    await put(hub, 'gone');
    await publish(t, hub, 'live', 'vis', 'gone');
    expect((await hub.api.delete('/products/gone')).status).to.equal(204);
    await registerStore(hub, 'vis', { cnpj: CNPJ_KEPT, domains: ['shop.test', 'novo.test'] });
    await put(hub, 'new-domain', { product_url: 'https://novo.test/p/1' });
    await coverOk(t, hub, 'new-domain');
    // Store `susp`: approved, its product accepted, then suspended by the operator.
    await registerStore(hub, 'susp');
    await put(hub, 'suspended', {}, 'susp');
    await publish(t, hub, 'live', 'susp', 'suspended');
    expect((await t.admin.post(`/partners/${hub.partnerId}/live/stores/susp/suspend`, {})).status).to.equal(200);
    await settle(t);
  });
  beforeEach(() => t.clock.set(new Date(T0)));
  after(async () => t?.close());

  describe('GET /v1/products/{sku}/visibility', () => {
    it('fails exactly the check of what is wrong, with a pt-BR detail saying what to do; null details when ok', async () => {
      const cases: [string, string[], RegExp][] = [
        ['ok', [], /./],
        ['unavailable', ['available'], /indisponível.*available: true/],
        // The state GET /v1/products/{sku} derives is pending (domain_not_approved): `accepted` fails with it.
        ['new-domain', ['accepted', 'domain_approved'], /domínio.*aprovad/i],
        ['suspended', ['accepted', 'store_active'], /loja não está ativa/],
      ];
      for (const [sku, expected, advice] of cases) {
        const v = await visibility(hub, sku);
        expect(failing(v), sku).to.deep.equal(expected);
        expect(v.searchable, sku).to.equal(expected.length === 0);
        for (const c of v.checks) expect(c.detail === null, `${sku} ${c.check}`).to.equal(c.ok);
        const last = expected[expected.length - 1];
        if (last) expect(detailOf(v, last), sku).to.match(advice);
        const state = (await hub.api.get(`/products/${sku}`)).body.state as string;
        expect(v.checks[1].ok, `${sku}: accepted is the state (${state})`).to.equal(state === 'accepted');
        expect(v.fresh_until === null, `${sku}: fresh_until null unless accepted`).to.equal(state !== 'accepted');
      }
    });

    it('answers a removed SKU (it exists): `accepted` fails saying it was removed, fresh_until and svc_url as GET /v1/products/{sku}', async () => {
      const product = (await hub.api.get('/products/gone')).body as { state: string; svc_url?: string | null };
      expect(product.state).to.equal('removed');
      const v = await visibility(hub, 'gone');
      expect(v.searchable).to.equal(false);
      expect(failing(v)).to.include('accepted');
      expect(detailOf(v, 'accepted')).to.match(/removido/);
      expect(v.fresh_until).to.equal(null);
      expect(v.svc_url).to.equal(product.svc_url ?? null);
      expect((await hub.api.get('/products/never-sent/visibility')).status).to.equal(404);
    });

    it('`fresh` holds for 48 h after the last applied write by the service clock, to the millisecond; then `accepted` fails too (stale)', async () => {
      const v0 = await visibility(hub, 'ok');
      expect(v0.fresh_until).to.equal(new Date(T0 + 48 * HOUR).toISOString());
      t.clock.set(new Date(T0 + 48 * HOUR));
      const at = await visibility(hub, 'ok');
      expect(failing(at), 'at exactly 48 h').to.deep.equal([]);
      expect(at.searchable).to.equal(true);
      t.clock.set(new Date(T0 + 48 * HOUR + 1));
      const after = await visibility(hub, 'ok');
      expect(failing(after), '1 ms later').to.deep.equal(['accepted', 'fresh']);
      expect(after.searchable).to.equal(false);
      expect(after.fresh_until).to.equal(null);
      expect(detailOf(after, 'fresh')).to.match(/48 horas/);
      expect(detailOf(after, 'accepted')).to.match(/desatualizado/);
    });

    it('a write ignored as older (updated_at before the last applied) refreshes nothing; an applied PATCH does', async () => {
      t.clock.set(new Date(T0 + 10 * HOUR));
      const older = await hub.api.patch('/products/unavailable', {
        price_cents: 111,
        updated_at: new Date(T0 - HOUR).toISOString(),
      });
      expect(older.status, JSON.stringify(older.body)).to.be.oneOf([200, 202]);
      await settle(t);
      expect((await visibility(hub, 'unavailable')).fresh_until).to.equal(new Date(T0 + 48 * HOUR).toISOString());
      const applied = await hub.api.patch('/products/unavailable', {
        available: true,
        updated_at: new Date(T0 + 10 * HOUR).toISOString(),
      });
      expect(applied.status, JSON.stringify(applied.body)).to.equal(200);
      await settle(t);
      const v = await visibility(hub, 'unavailable');
      expect(v.fresh_until).to.equal(new Date(T0 + 58 * HOUR).toISOString());
      expect(v.searchable).to.equal(true);
    });
  });

  describe('scopes and keys of the /v1 reads', () => {
    it('visibility and catalog health need `catalog`, activity by day needs `reports` (403); a wrong key gets 401', async () => {
      const reportsOnly = await t.key(hub.partnerId, 'live', ['reports']);
      const catalogOnly = await t.key(hub.partnerId, 'live', ['catalog']);
      for (const path of ['/products/ok/visibility', '/insights/catalog', '/events']) {
        expect((await reportsOnly.api.get(path)).status, `${path} without catalog`).to.equal(403);
        expect((await catalogOnly.api.get(path)).status, `${path} with catalog`).to.equal(200);
      }
      expect((await catalogOnly.api.get('/insights/daily')).status, 'daily without reports').to.equal(403);
      expect((await reportsOnly.api.get('/insights/daily')).status, 'daily with reports').to.equal(200);
      const wrong = t.as(`${hub.key.slice(0, -1)}${hub.key.endsWith('x') ? 'y' : 'x'}`);
      for (const path of ['/products/ok/visibility', '/insights/catalog', '/insights/daily', '/events'])
        expect((await wrong.get(path)).status, path).to.equal(401);
    });
  });

  describe('GET /v1/insights/daily window', () => {
    it('normalizes the window to UTC in the answer, and counts the UTC dates the window touches', async () => {
      const r = await hub.api.get(
        `/insights/daily?since=${encodeURIComponent('2026-10-01T21:30:00-03:00')}&until=${encodeURIComponent('2026-10-03T00:00:00+02:00')}`,
      );
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      expect([r.body.since, r.body.until]).to.deep.equal(['2026-10-02T00:30:00.000Z', '2026-10-02T22:00:00.000Z']);
      expect((r.body.days as { date: string }[]).map((d) => d.date)).to.deep.equal(['2026-10-02']);
    });
  });

  describe('GET /v1/insights/catalog reasons', () => {
    it('counts each code once per product of the rejected and pending ones, the largest count first, then by code', async () => {
      const p = await t.partner({ type: 'hub' });
      // A store never approved: its product is pending with domain_not_approved and store_not_active.
      await registerStore(p, 'fechada');
      await put(p, 'f-1', {}, 'fechada');
      // An approved store: a product on a domain not approved yet, and one whose cover failed (rejected).
      const cnpj = storeBody().cnpj;
      await registerStore(p, 'aberta', { cnpj });
      expect((await t.approveStore(p, 'aberta')).status).to.equal(200);
      await registerStore(p, 'aberta', { cnpj, domains: ['shop.test', 'novo.test'] });
      await put(p, 'a-dom', { product_url: 'https://novo.test/p/2' }, 'aberta');
      await put(p, 'a-rej', {}, 'aberta');
      const stream = streams.product({ partnerId: p.partnerId, env: 'live' }, 'a-rej');
      const now = t.clock.now().toISOString();
      await t.service.events.appendToStream(stream, [
        {
          type: 'CoverChecked',
          data: {
            sku: 'a-rej',
            url: 'https://cdn.shop.test/1.jpg',
            ok: false,
            reasons: [{ code: 'image_too_small', field: 'image_urls[0]', message: 'The cover is too small.' }],
            checked_at: now,
          },
          metadata: { recorded_at: now, actor: 'test' },
        },
      ]);
      // An accepted product adds no reason.
      await put(p, 'a-ok', {}, 'aberta');
      await coverOk(t, p, 'a-ok');
      await settle(t);
      const r = await p.api.get('/insights/catalog');
      expect(r.status).to.equal(200);
      expect(r.body.states).to.deep.equal({ pending: 2, accepted: 1, rejected: 1, stale: 0, removed: 0 });
      expect(r.body.searchable).to.equal(1);
      expect(r.body.reasons).to.deep.equal([
        { code: 'domain_not_approved', count: 2 },
        { code: 'image_too_small', count: 1 },
        { code: 'store_not_active', count: 1 },
      ]);
      const one = await p.api.get('/insights/catalog?store_id=aberta');
      expect(one.body.reasons).to.deep.equal([
        { code: 'domain_not_approved', count: 1 },
        { code: 'image_too_small', count: 1 },
      ]);
    });
  });

  describe('GET /v1/insights/catalog searchable for a test key', () => {
    it('counts a test offer passing every check but live, also from a product document of an older build', async () => {
      const p = await t.partner({ type: 'hub' });
      const testKey = await t.key(p.partnerId, 'test');
      await registerStore(testKey, 'teste');
      await put(testKey, 'tst', {}, 'teste');
      await publish(t, testKey, 'test', 'teste', 'tst');
      await settle(t);
      expect(failing(await visibility(testKey, 'tst'))).to.deep.equal(['live']);
      expect((await testKey.api.get('/insights/catalog')).body.searchable).to.equal(1);
      // The document as an older build kept it (no page host, availability or reason codes): counted the same way.
      const id = productDocId({ partnerId: p.partnerId, env: 'test' }, 'tst');
      await t.service.reads.transact(async (tx) => {
        const older: Partial<ProductDoc> = { ...(await tx.get<ProductDoc>(PRODUCTS, id))! };
        delete older.page_host;
        delete older.available;
        delete older.reason_codes;
        await tx.put(PRODUCTS, older as ProductDoc);
      });
      expect((await testKey.api.get('/insights/catalog')).body.searchable).to.equal(1);
    });
  });

  describe('GET /v1/events shapes', () => {
    it('answers exactly {data, next_cursor}, each Notification exactly {id, type, occurred_at, data}; 50 by default', async () => {
      const p = await t.partner({ type: 'hub' });
      await registerStore(p, 'muitas'); // never approved: each product's first state is one notification
      const skus = Array.from({ length: 51 }, (_, i) => `n-${String(i).padStart(2, '0')}`);
      for (const sku of skus) await put(p, sku, {}, 'muitas');
      await settle(t);
      await until(
        async () => ((await p.api.get('/events?limit=200')).body.data as unknown[]).length === skus.length,
        30_000,
        'the 51 notifications',
        50,
      );
      const first = await p.api.get('/events');
      expect(first.status).to.equal(200);
      expect(Object.keys(first.body).sort()).to.deep.equal(['data', 'next_cursor']);
      const data = first.body.data as Record<string, unknown>[];
      expect(data).to.have.length(50);
      for (const n of data) {
        expect(Object.keys(n).sort()).to.deep.equal(['data', 'id', 'occurred_at', 'type']);
        expect(n.type).to.equal('product.state_changed');
        expect(Object.keys(n.data as object).sort()).to.deep.equal(['reasons', 'sku', 'state', 'store_id']);
        // The service clock as the log booked it (never before an earlier booking: other tests moved the clock).
        expect(new Date(Date.parse(n.occurred_at as string)).toISOString()).to.equal(n.occurred_at);
      }
      expect(data.map((n) => (n.data as { sku: string }).sku)).to.deep.equal(skus.slice(0, 50));
      const rest = await p.api.get(`/events?cursor=${encodeURIComponent(first.body.next_cursor as string)}`);
      expect((rest.body.data as { data: { sku: string } }[]).map((n) => n.data.sku)).to.deep.equal(skus.slice(50));
    });

    it("notifies a re-check's verdict when it changes the state, and only then", async () => {
      const p = await t.partner({ type: 'hub' });
      await registerStore(p, 'recheck');
      await put(p, 'rc', {}, 'recheck');
      await publish(t, p, 'live', 'recheck', 'rc');
      const verdict = async (ok: boolean) => {
        const now = t.clock.now().toISOString();
        const reasons = ok
          ? []
          : [{ code: 'image_type', field: 'image_urls[0]', message: 'The cover is not an image.' }];
        const appended = await t.service.events.appendToStream(
          streams.product({ partnerId: p.partnerId, env: 'live' }, 'rc'),
          [
            {
              type: 'CoverChecked',
              data: { sku: 'rc', url: 'https://cdn.shop.test/1.jpg', ok, reasons, checked_at: now },
              metadata: { recorded_at: now, actor: 'test' },
            },
          ],
        );
        expect(await t.service.runner.waitFor(appended.position, 30_000)).to.equal(true);
      };
      await verdict(true); // the same verdict again: the state stays accepted
      await verdict(false);
      await verdict(false);
      await verdict(true);
      const states = (
        (await p.api.get('/events?type=product.state_changed&limit=200')).body.data as {
          data: { sku: string; state: string; reasons: { code: string }[] };
        }[]
      ).map((n) => `${n.data.state}${n.data.reasons.map((r) => ` ${r.code}`).join('')}`);
      expect(states).to.deep.equal([
        'pending store_not_active domain_not_approved',
        'accepted',
        'rejected image_type',
        'accepted',
      ]);
    });
  });

  describe('the portal', () => {
    let nextAddress = 0;
    const signIn = async (key: string): Promise<string> => {
      const r = await getFrom(
        `${rootOf(t)}/portal/entrar`,
        `127.0.5.${(nextAddress++ % 250) + 1}`,
        { 'Content-Type': 'application/x-www-form-urlencoded', Origin: rootOf(t) },
        'POST',
        `api_key=${encodeURIComponent(key)}`,
      );
      expect(r.status, r.text).to.equal(303);
      return r.headers.getSetCookie()[0].split(';')[0];
    };
    const page = (path: string, cookie: string) => getFrom(`${rootOf(t)}${path}`, '127.0.0.1', { Cookie: cookie });

    it("a session sees its key's scopes: without `catalog` the catalog, product and store pages answer 403", async () => {
      const reportsOnly = await t.key(hub.partnerId, 'live', ['reports']);
      const cookie = await signIn(reportsOnly.key);
      for (const path of ['/portal/catalogo', '/portal/produtos/ok', '/portal/lojas', '/portal/lojas/vis']) {
        const r = await page(path, cookie);
        expect(r.status, path).to.equal(403);
        expect(r.text, path).to.include('catalog');
      }
      expect((await page('/portal/extrato', cookie)).status).to.equal(200);
      expect((await page('/portal', cookie)).status).to.equal(200);
    });

    it("shows the catalog states on the overview, each reason's pt-BR advice on the catalog, and the stores' domains", async () => {
      const cookie = await signIn(hub.key);
      const states = (await hub.api.get('/insights/catalog')).body.states as Record<string, number>;
      const overview = await page('/portal', cookie);
      expect(overview.status).to.equal(200);
      expect(overview.text).to.match(new RegExp(`Pendentes</a><strong>${states.pending}</strong>`));
      expect(overview.text).to.match(new RegExp(`Removidos</a><strong>${states.removed}</strong>`));
      const catalog = await page('/portal/catalogo', cookie);
      expect(catalog.text).to.include('<code>domain_not_approved</code>');
      expect(catalog.text).to.match(/store_not_active<\/code>.*?<td class="n">1<\/td><td>[^<]*[Ll]oja[^<]*<\/td>/s);
      const stores = await page('/portal/lojas', cookie);
      expect(stores.text).to.include('<code>novo.test</code> — aguardando aprovação');
      expect(stores.text).to.include('<code>shop.test</code> — aprovado');
    });
  });
});
