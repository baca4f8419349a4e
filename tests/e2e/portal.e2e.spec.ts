/**
 * The partner portal over HTTP (PORTAL.md "The portal"): sign-in into a server-side session (cookie attributes, a
 * wrong, revoked or malformed key answers 401 with no cookie, the brake of 10 sign-ins a minute per address), the
 * origin check of form posts, the end of a session (sign-out, key revoked, 12 h by the service clock), what a session
 * sees (its partner and environment only: 404 elsewhere), the pages' numbers (the `/v1` reads), the clicks per
 * channel (FEEDS.md), escaping and the security headers.
 */
import { expect } from 'chai';
import { startTestService, type Partner, type TestService } from '../support/service.js';
import { HOUR, paidBody, publish, putProduct, registerStore, sandboxClick } from './commerce-support.js';
import { getFrom, rootOf, settle, type RawAnswer } from './shopper-support.js';
import { feed, newChannel, tsvRows, type Channel } from './feeds-support.js';
import { until } from '../support/deadline.js';

describe('partner portal over HTTP: /portal', function () {
  let t: TestService;
  let hub: Partner;
  let hubTest: Partner;
  let other: Partner;
  const T0 = Date.parse('2026-09-14T12:00:00.000Z');
  const AUGUST = Date.parse('2026-08-10T12:00:00.000Z');
  // The sign-in brake counts per address: each test signs in from addresses of its own.
  let nextAddress = 0;
  const address = (): string => `127.0.3.${(nextAddress++ % 250) + 1}`;
  const site = () => rootOf(t);

  const page = (path: string, cookie?: string, from = '127.0.0.1'): Promise<RawAnswer> =>
    getFrom(`${site()}${path}`, from, cookie ? { Cookie: cookie } : {});
  const post = (path: string, form: string, headers: Record<string, string> = {}, from = address()) =>
    getFrom(
      `${site()}${path}`,
      from,
      { 'Content-Type': 'application/x-www-form-urlencoded', Origin: site(), ...headers },
      'POST',
      form,
    );
  /** Signs in with `key`; the `name=value` of the session cookie. */
  const signIn = async (key: string): Promise<string> => {
    const r = await post('/portal/entrar', `api_key=${encodeURIComponent(key)}`);
    expect(r.status, r.text).to.equal(303);
    expect(r.headers.get('location')).to.equal('/portal');
    return r.headers.getSetCookie()[0].split(';')[0];
  };
  const isSignInForm = (r: RawAnswer) => r.text.includes('name="api_key"');

  before(async () => {
    t = await startTestService();
    t.clock.set(new Date(AUGUST));
    hub = await t.partner({ type: 'hub', name: 'Hub <b>Ótimo</b>' });
    hubTest = await t.key(hub.partnerId, 'test');
    // A movement in August (a closed month by T0) for the statement and closings pages.
    await registerStore(hubTest, 'loja-t', { default_commission: { type: 'percentage', rate: 10 } });
    await putProduct(t, hubTest, 'loja-t', 'sku-t', { title: 'Bule de teste' });
    await publish(t, hubTest, 'test', 'loja-t', 'sku-t');
    const click = (await sandboxClick(hubTest, 'loja-t', 'sku-t')).click_id;
    const paid = await hubTest.api.post(
      '/conversions',
      paidBody({
        event_id: 'pedido-ago-pago',
        order_id: 'pedido-ago',
        store_id: 'loja-t',
        click_id: click,
        paid_at: new Date(AUGUST).toISOString(),
        items: [{ sku: 'sku-t', quantity: 2, unit_price_cents: 4550, refunded_cents: 0 }],
      }),
    );
    expect(paid.status, JSON.stringify(paid.body)).to.equal(200);
    t.clock.set(new Date(T0));
    other = await t.partner({ type: 'hub', name: 'Outro' });
    await registerStore(hub, 'loja-a', { name: 'Loja <i>A</i> & Cia' });
    await putProduct(t, hub, 'loja-a', 'sku-1', { title: 'Chaleira <script>alert(1)</script>' });
    await publish(t, hub, 'live', 'loja-a', 'sku-1');
    await putProduct(t, hub, 'loja-a', 'sku-2', { title: 'Bule pendente' });
    await registerStore(other, 'loja-o');
    await putProduct(t, other, 'loja-o', 'sku-o', { title: 'Produto de outro' });
    await sandboxClick(hubTest, 'loja-t', 'sku-t');
    // The portal reads the read models as they are (a session carries no write position): a read of each key's
    // last write waits until it is projected, so every page below sees the writes above.
    for (const [p, path] of [
      [hub, '/products/sku-2'],
      [other, '/products/sku-o'],
      [hubTest, '/clicks'],
    ] as const)
      expect((await p.api.get(path)).status, path).to.equal(200);
  });
  beforeEach(() => t.clock.set(new Date(T0)));
  after(async () => t.close());

  it('shows the sign-in form without a session: pt-BR HTML, no-store, a CSP that runs no script', async () => {
    const r = await page('/portal');
    expect(r.status).to.equal(200);
    expect(r.headers.get('content-type')).to.match(/^text\/html/);
    expect(r.text).to.include('<html lang="pt-BR">');
    expect(isSignInForm(r)).to.equal(true);
    expect(r.text).to.not.match(/<script/i);
    const csp = r.headers.get('content-security-policy') ?? '';
    expect(csp).to.include("script-src 'none'");
    expect(csp).to.include("frame-ancestors 'none'");
    expect(csp).to.not.include('unsafe-inline');
    expect(r.headers.get('x-content-type-options')).to.equal('nosniff');
    expect(r.headers.get('referrer-policy')).to.equal('strict-origin-when-cross-origin');
    expect(r.headers.get('cache-control')).to.equal('no-store');
    // A page behind the session sends a visitor without one to the form.
    const catalog = await page('/portal/catalogo');
    expect(catalog.status).to.equal(303);
    expect(catalog.headers.get('location')).to.equal('/portal');
  });

  it('signs in with a valid key: 303 to /portal and an HttpOnly, SameSite=Lax, Path=/portal cookie holding an opaque id, never the key', async () => {
    const r = await post('/portal/entrar', `api_key=${hub.key}`);
    expect(r.status, r.text).to.equal(303);
    const cookies = r.headers.getSetCookie();
    expect(cookies).to.have.length(1);
    const parts = cookies[0].split(';').map((s) => s.trim());
    const [name, value] = parts[0].split('=');
    expect(name).to.equal('portal_sessao');
    expect(value).to.match(/^[A-Za-z0-9_-]{40,}$/);
    expect(cookies[0]).to.not.include(hub.key);
    expect(cookies[0]).to.not.include(hub.key.slice(8));
    expect(parts).to.include.members(['HttpOnly', 'SameSite=Lax', 'Path=/portal']);
    expect(
      parts.some((p) => p.toLowerCase() === 'secure'),
      'no Secure on an http base',
    ).to.equal(false);
    const home = await page('/portal', parts[0]);
    expect(home.status).to.equal(200);
    expect(isSignInForm(home)).to.equal(false);
    expect(home.text).to.include('Visão geral');
    // The partner's name is text: escaped.
    expect(home.text).to.include('Hub &lt;b&gt;Ótimo&lt;/b&gt;');
    expect(home.text).to.not.include('<b>Ótimo</b>');
  });

  it('answers 401 with the form and no cookie for a wrong, malformed or revoked key', async () => {
    const revoked = await t.key(hub.partnerId, 'live');
    expect((await t.admin.delete(`/keys/${revoked.keyId}`)).status).to.equal(204);
    // The partner's key with its last character changed (to another one: a random key may end in `x`).
    const wrong = `${hub.key.slice(0, -1)}${hub.key.endsWith('x') ? 'y' : 'x'}`;
    for (const key of [wrong, 'not a key!', '', 'ik_live_', revoked.key, 'x'.repeat(300)]) {
      const r = await post('/portal/entrar', `api_key=${encodeURIComponent(key)}`);
      expect(r.status, key).to.equal(401);
      expect(r.headers.getSetCookie(), key).to.deep.equal([]);
      expect(isSignInForm(r), key).to.equal(true);
      expect(r.text).to.include('Chave inválida');
    }
    const none = await post('/portal/entrar', '');
    expect(none.status).to.equal(401);
  });

  it('brakes sign-ins at 10 a minute per client address (429 with Retry-After), by the service clock', async () => {
    const from = address();
    for (let i = 0; i < 10; i++) expect((await post('/portal/entrar', 'api_key=wrong', {}, from)).status).to.equal(401);
    const braked = await post('/portal/entrar', `api_key=${hub.key}`, {}, from);
    expect(braked.status).to.equal(429);
    expect(Number(braked.headers.get('retry-after'))).to.be.within(1, 60);
    expect(braked.headers.getSetCookie()).to.deep.equal([]);
    expect((await post('/portal/entrar', `api_key=${hub.key}`, {}, address())).status, 'another address').to.equal(303);
    t.clock.set(new Date(T0 + 60_000));
    expect((await post('/portal/entrar', `api_key=${hub.key}`, {}, from)).status, 'the next minute').to.equal(303);
  });

  it('refuses a form post from another origin, or with none, with 403 (sign-in and sign-out)', async () => {
    const cookie = await signIn(hub.key);
    const refused: Record<string, string>[] = [
      { Origin: 'http://evil.example' },
      { Origin: 'null', Referer: 'http://evil.example/form' },
      { Origin: '' },
    ];
    for (const headers of refused) {
      const r = await post('/portal/entrar', `api_key=${hub.key}`, headers);
      expect(r.status, JSON.stringify(headers)).to.equal(403);
      expect(r.headers.getSetCookie()).to.deep.equal([]);
      const out = await post('/portal/sair', '', { ...headers, Cookie: cookie });
      expect(out.status, JSON.stringify(headers)).to.equal(403);
    }
    expect((await page('/portal', cookie)).text).to.include('Visão geral');
    // The site's own pages post with their Referer when a browser sends no Origin.
    const referred = await post('/portal/entrar', `api_key=${hub.key}`, { Origin: '', Referer: `${site()}/portal` });
    expect(referred.status).to.equal(303);
  });

  it('ends the session on POST /portal/sair: the cookie is cleared and no longer opens a page', async () => {
    const cookie = await signIn(hub.key);
    const out = await post('/portal/sair', '', { Cookie: cookie });
    expect(out.status).to.equal(303);
    expect(out.headers.get('location')).to.equal('/portal');
    expect(out.headers.getSetCookie()[0]).to.match(/^portal_sessao=; Path=\/portal; Max-Age=0/);
    const after = await page('/portal', cookie);
    expect(isSignInForm(after)).to.equal(true);
    expect((await page('/portal/lojas', cookie)).status).to.equal(303);
  });

  it('ends the session when its key is revoked', async () => {
    const key = await t.key(hub.partnerId, 'live');
    const cookie = await signIn(key.key);
    expect((await page('/portal/lojas', cookie)).status).to.equal(200);
    expect((await t.admin.delete(`/keys/${key.keyId}`)).status).to.equal(204);
    const after = await page('/portal', cookie);
    expect(isSignInForm(after)).to.equal(true);
    expect((await page('/portal/lojas', cookie)).status).to.equal(303);
  });

  it('ends the session 12 h after sign-in by the service clock', async () => {
    const cookie = await signIn(hub.key);
    t.clock.set(new Date(T0 + 12 * HOUR - 1));
    expect((await page('/portal/lojas', cookie)).status, 'just before 12 h').to.equal(200);
    t.clock.set(new Date(T0 + 12 * HOUR));
    expect(isSignInForm(await page('/portal', cookie)), 'at 12 h').to.equal(true);
    t.clock.set(new Date(T0));
    expect((await page('/portal/lojas', cookie)).status, 'an ended session stays ended').to.equal(303);
  });

  it("sees exactly its key's partner and environment: another partner's or environment's SKU or store answers 404", async () => {
    const live = await signIn(hub.key);
    const test = await signIn(hubTest.key);
    const stranger = await signIn(other.key);
    expect((await page('/portal/produtos/sku-1', live)).status).to.equal(200);
    expect((await page('/portal/lojas/loja-a', live)).status).to.equal(200);
    for (const [cookie, path] of [
      [stranger, '/portal/produtos/sku-1'],
      [stranger, '/portal/lojas/loja-a'],
      [test, '/portal/produtos/sku-1'],
      [test, '/portal/lojas/loja-a'],
      [live, '/portal/produtos/sku-t'],
      [live, '/portal/lojas/loja-t'],
      [live, '/portal/produtos/sku-o'],
      [live, '/portal/lojas/loja-o'],
      [live, '/portal/nada'],
    ]) {
      const r = await page(path, cookie);
      expect(r.status, path).to.equal(404);
      expect(r.text, path).to.not.include('Produto de outro');
    }
    const search = await page('/portal/catalogo?sku=sku-o', live);
    expect(search.status).to.equal(404);
    const stores = await page('/portal/lojas', stranger);
    expect(stores.text).to.include('loja-o');
    expect(stores.text).to.not.include('loja-a');
  });

  it('shows the catalog states and searchable count of GET /v1/insights/catalog, the products of a state, and finds a SKU', async () => {
    const cookie = await signIn(hub.key);
    const insights = (await hub.api.get('/insights/catalog')).body as { states: Record<string, number> };
    expect(insights.states).to.include({ accepted: 1, pending: 1 });
    const catalog = await page('/portal/catalogo', cookie);
    expect(catalog.status).to.equal(200);
    expect(catalog.text).to.match(/Aceitos<\/a><strong>1<\/strong>/);
    expect(catalog.text).to.match(/Pendentes<\/a><strong>1<\/strong>/);
    const pending = await page('/portal/catalogo?estado=pending', cookie);
    expect(pending.text).to.include('/portal/produtos/sku-2');
    expect(pending.text).to.not.include('/portal/produtos/sku-1');
    const found = await page('/portal/catalogo?sku=sku-1', cookie);
    expect(found.status).to.equal(200);
    expect(found.text).to.include('Produto sku-1');
  });

  it('pages the products of a state and of a reason, 50 at a time, each product once', async () => {
    const many = await t.partner({ type: 'hub', name: 'Muitos' });
    await registerStore(many, 'loja-m'); // never approved: every product pending with store_not_active
    const skus = Array.from({ length: 57 }, (_, i) => `m-${String(i).padStart(3, '0')}`);
    for (const sku of skus) await putProduct(t, many, 'loja-m', sku, { title: `Produto ${sku}` });
    // A portal page reads the read models as they are (a session carries no write position): wait until the
    // writes are projected, as a partner reloading the page would.
    await until(
      async () => {
        const r = await many.api.get('/products?state=pending&limit=100');
        return (r.body as { data: unknown[] }).data.length === skus.length;
      },
      30_000,
      'the 57 products projected',
      50,
    );
    const cookie = await signIn(many.key);
    for (const first of ['/portal/catalogo?estado=pending', '/portal/catalogo?motivo=store_not_active']) {
      const seen: string[] = [];
      let pages = 0;
      for (let next: string | null = first; next !== null; pages++) {
        const r = await page(next, cookie);
        expect(r.status, next).to.equal(200);
        seen.push(...[...r.text.matchAll(/href="\/portal\/produtos\/(m-[0-9]+)"/g)].map((m) => m[1]));
        const link = /<a href="([^"]+)" rel="next">/.exec(r.text);
        next = link ? link[1].replace(/&amp;/g, '&') : null;
      }
      expect(pages, first).to.equal(2);
      expect(seen, first).to.deep.equal(skus);
    }
  });

  it('shows a product: its visibility checklist, a preview of its offer card (marked, also for test products) and its history, partner text escaped', async () => {
    const live = await signIn(hub.key);
    const r = await page('/portal/produtos/sku-1', live);
    expect(r.status).to.equal(200);
    expect(r.text).to.include('Esta oferta aparece na busca');
    expect(r.text).to.include('Prévia');
    expect(r.text).to.include('Chaleira &lt;script&gt;alert(1)&lt;/script&gt;');
    expect(r.text).to.not.match(/<script/i);
    expect(r.text).to.include('Loja &lt;i&gt;A&lt;/i&gt; &amp; Cia');
    expect(r.text).to.include('Produto enviado (PUT)');
    expect(r.text).to.include('Imagem de capa verificada e aprovada');
    expect(r.text, 'a preview records no click: no link to the redirector').to.not.include('/r/');
    const test = await page('/portal/produtos/sku-t', await signIn(hubTest.key));
    expect(test.status).to.equal(200);
    expect(test.text).to.include('Prévia');
    expect(test.text).to.include('Esta oferta não aparece na busca');
    expect(test.text).to.include('ambiente de teste');
  });

  it('draws the last 30 days of GET /v1/insights/daily as SVG charts with the same numbers as a table', async () => {
    t.clock.set(new Date(T0 + HOUR)); // the click at T0 inside the window [now − 30 days, now)
    const cookie = await signIn(hubTest.key);
    const daily = (await hubTest.api.get('/insights/daily')).body as { days: { date: string; clicks: number }[] };
    expect(daily.days.reduce((a, d) => a + d.clicks, 0)).to.equal(1);
    const r = await page('/portal', cookie);
    expect(r.text.match(/<svg class="chart"/g)).to.have.length(4);
    expect(r.text.match(/<tbody>.*?<\/tbody>/s)?.[0].match(/<tr>/g)).to.have.length(daily.days.length);
    expect(r.text).to.include('1 cliques');
  });

  it("counts the window's clicks per channel: the service's own pages and each channel by its name (escaped), the partner's only", async () => {
    const mine = await newChannel(t, 'Comparador <b>Já</b>');
    const theirs = await newChannel(t, 'Canal do outro');
    await publish(t, other, 'live', 'loja-o', 'sku-o');
    await settle(t);
    const local = (url: string) => url.replace(/^https?:\/\/[^/]+/, site());
    /** The `buy_url` of the offer of `sku`, as the channel's full feed links it. */
    const buyUrl = async (channel: Channel, sku: string): Promise<string> => {
      const rows = tsvRows((await feed(t, '/feeds/offers.tsv', channel.token)).text);
      const row = rows.find((r) => r.link.includes(`/${sku}?`));
      expect(row, `${sku} in the feed`).to.not.equal(undefined);
      const offer = await getFrom(local(row!.link), '127.0.4.1', { Accept: 'application/json' });
      expect(offer.status, offer.text).to.equal(200);
      return local((JSON.parse(offer.text) as { buy_url: string }).buy_url);
    };
    const mineBuy = await buyUrl(mine, 'sku-1');
    expect(mineBuy).to.contain(`?canal=${mine.channel_id}`);
    for (const from of ['127.0.4.2', '127.0.4.3']) expect((await getFrom(mineBuy, from)).status).to.equal(302);
    expect((await getFrom(mineBuy.split('?')[0], '127.0.4.4')).status).to.equal(302); // a direct click
    expect((await getFrom(await buyUrl(theirs, 'sku-o'), '127.0.4.5')).status).to.equal(302);
    await settle(t);
    t.clock.set(new Date(T0 + HOUR)); // the clicks at T0 inside the window [now − 30 days, now)

    const table = async (key: string): Promise<string[][]> => {
      const r = await page('/portal', await signIn(key));
      expect(r.status).to.equal(200);
      const found = /<caption>Cliques por canal.*?<tbody>(.*?)<\/tbody>/s.exec(r.text);
      expect(found, 'the clicks per channel table').to.not.equal(null);
      return [...found![1].matchAll(/<tr><th scope="row">(.*?)<\/th><td class="n">([0-9]+)<\/td><\/tr>/g)].map((m) => [
        m[1],
        m[2],
      ]);
    };
    expect(await table(hub.key)).to.deep.equal([
      ['Páginas do serviço', '1'],
      ['Comparador &lt;b&gt;Já&lt;/b&gt;', '2'],
    ]);
    expect(await table(other.key)).to.deep.equal([
      ['Páginas do serviço', '0'],
      ['Canal do outro', '1'],
    ]);
    // The same clicks as the window's total; the partner's click list keeps the PartnerClick shape.
    const daily = (await hub.api.get('/insights/daily')).body as { totals: { clicks: number } };
    expect(daily.totals.clicks).to.equal(3);
    const clicks = (await hub.api.get('/clicks')).body.data as Record<string, unknown>[];
    expect(clicks).to.have.length(3);
    for (const c of clicks)
      expect(Object.keys(c).sort()).to.deep.equal(['click_id', 'occurred_at', 'price_cents', 'sku', 'store_id']);
  });

  it("shows the statement's balance (GET /v1/statement) and the closed months with their CSV, byte for byte", async () => {
    const cookie = await signIn(hubTest.key);
    const v1 = (await hubTest.api.get('/statement')).body as { closing: { net_cents: number } };
    expect(v1.closing.net_cents).to.equal(9100);
    for (const path of ['/portal', '/portal/extrato']) {
      const r = await page(path, cookie);
      expect(r.status, path).to.equal(200);
      expect(r.text, path).to.include('R$ 91,00 líquidos, R$ 9,10 de comissão esperada');
    }
    const closings = await page('/portal/fechamentos', cookie);
    expect(closings.status).to.equal(200);
    expect(closings.text).to.include('href="/portal/fechamentos/2026-08/movimentos.csv"');
    const csv = await page('/portal/fechamentos/2026-08/movimentos.csv', cookie);
    expect(csv.status).to.equal(200);
    expect(csv.headers.get('content-type')).to.equal('text/csv; charset=utf-8');
    expect(csv.headers.get('content-disposition')).to.match(/^attachment; filename="movements-test-2026-08.csv"/);
    const same = await hubTest.api.get('/closings/2026-08/movements.csv');
    expect(csv.text).to.equal(same.body);
    expect(csv.text).to.include('pedido-ago');
    for (const period of ['2026-09', '2026-13', 'agosto'])
      expect((await page(`/portal/fechamentos/${period}/movimentos.csv`, cookie)).status, period).to.equal(404);
    // Another partner's closing of the same month holds nothing of this one.
    const stranger = await page('/portal/fechamentos/2026-08/movimentos.csv', await signIn(other.key));
    expect(stranger.text).to.not.include('pedido-ago');
    // A key without `reports` sees no money.
    const catalogOnly = await t.key(hub.partnerId, 'test', ['catalog']);
    const limited = await signIn(catalogOnly.key);
    expect((await page('/portal/extrato', limited)).status).to.equal(403);
    expect((await page('/portal/fechamentos', limited)).status).to.equal(403);
    expect((await page('/portal', limited)).text).to.include('não tem o escopo <code>reports</code>');
  });

  it('marks the session cookie Secure when PUBLIC_BASE_URL is https', async function () {
    if (process.env.TOPOLOGY === 'multi') this.skip(); // the multi topology keeps its own base
    const s = await startTestService({ PUBLIC_BASE_URL: 'https://portal.example.test' });
    try {
      const p = await s.partner({ type: 'hub' });
      const r = await getFrom(
        `${rootOf(s)}/portal/entrar`,
        address(),
        { 'Content-Type': 'application/x-www-form-urlencoded', Origin: 'https://portal.example.test' },
        'POST',
        `api_key=${p.key}`,
      );
      expect(r.status, r.text).to.equal(303);
      const parts = r.headers
        .getSetCookie()[0]
        .split(';')
        .map((x) => x.trim());
      expect(parts).to.include.members(['Secure', 'HttpOnly', 'SameSite=Lax', 'Path=/portal']);
    } finally {
      await s.close();
    }
  });
});
