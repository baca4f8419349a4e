import { expect } from 'chai';
import { streams } from '../../shared-schema/domain/streams.js';
import { startTestService, type Partner, type TestService } from '../support/service.js';
import { getFrom } from './shopper-support.js';
import { expectProblem } from '../support/e2e.js';
import {
  DAY,
  HOUR,
  addressOf,
  buyUrlOf,
  codes,
  iso,
  offerPageUrl,
  plus,
  publish,
  putProduct,
  redirectClick,
  redirectUrl,
  registerStore,
  sandboxClick,
  visit,
} from './commerce-support.js';

describe('commercial cycle over HTTP: redirector and clicks', function () {
  let t: TestService;
  let hub: Partner;
  let hubTest: Partner;
  let other: Partner;
  const T0 = Date.parse('2026-03-01T12:00:00.000Z');

  before(async () => {
    t = await startTestService();
    t.clock.set(new Date(T0));
    hub = await t.partner({ type: 'hub' });
    hubTest = await t.key(hub.partnerId, 'test');
    other = await t.partner({ type: 'hub', name: 'Outra Loja' });
    await registerStore(hub, 'Loja-A');
    await putProduct(t, hub, 'Loja-A', 'sku-1', {
      product_url: 'https://shop.test/p/1?color=blue&svc_click=old&size=M#reviews',
      price_cents: 12345,
    });
    await putProduct(t, hub, 'Loja-A', 'sku-pending', { product_url: 'https://shop.test/p/2' });
    await putProduct(t, hub, 'Loja-A', 'sku-off', { product_url: 'https://shop.test/p/3', available: false });
    await publish(t, hub, 'live', 'Loja-A', 'sku-off');
    await publish(t, hub, 'live', 'Loja-A', 'sku-1');
    await registerStore(hubTest, 'loja-t');
    await putProduct(t, hubTest, 'loja-t', 'sku-t', { price_cents: 500 });
    await registerStore(hubTest, 'loja-u');
    await putProduct(t, hubTest, 'loja-u', 'sku-u');
  });
  beforeEach(() => t.clock.set(new Date(T0))); // a test that moves the clock moves it for itself only
  after(async () => t.close());

  describe('the redirector at /r/ (buy_url)', () => {
    it('records a click of a live accepted product and sends the shopper on with svc_click, the rest of the query kept', async () => {
      const r = await visit(redirectUrl(t, addressOf(hub, 'loja-a'), 'sku-1'));
      expect(r.status).to.equal(302);
      const location = r.headers.get('location')!;
      const id = new URL(location).searchParams.get('svc_click')!;
      expect(id).to.match(/^ic_[A-Za-z0-9_-]{22}$/);
      // the old svc_click is replaced, the other parameters and the fragment stay as sent
      expect(location).to.equal(`https://shop.test/p/1?color=blue&size=M&svc_click=${id}#reviews`);
      t.clock.advance(1); // the default window [now − 30 days, now) leaves out a click at exactly now
      const clicks = await hub.api.get('/clicks');
      expect(clicks.status).to.equal(200);
      const click = clicks.body.data.find((c: { click_id: string }) => c.click_id === id);
      expect(click).to.deep.equal({
        click_id: id,
        store_id: 'Loja-A',
        sku: 'sku-1',
        price_cents: 12345,
        occurred_at: iso(T0),
      });
      // the event holds what the contract allows, nothing about the shopper
      const [recorded] = await t.service.events.readStream(
        streams.click({ partnerId: hub.partnerId, env: 'live' }, id),
      );
      expect(Object.keys(recorded.data as object).sort()).to.deep.equal([
        'click_id',
        'environment',
        'occurred_at',
        'partner_id',
        'price_cents',
        'sku',
        'source',
        'store_id',
      ]);
    });

    it('answers a 404 page and records nothing for an offer that is not searchable, unknown or test', async () => {
      const before = (await hub.api.get('/clicks')).body.data.length;
      for (const url of [
        redirectUrl(t, addressOf(hub, 'loja-a'), 'sku-pending'), // pending: cover never checked
        redirectUrl(t, addressOf(hub, 'loja-a'), 'sku-off'), // accepted, but available: false
        redirectUrl(t, addressOf(hub, 'loja-a'), 'sku-nope'),
        redirectUrl(t, addressOf(hub, 'loja-b'), 'sku-1'), // wrong store address
        redirectUrl(t, addressOf(other, 'loja-a'), 'sku-1'), // another partner's address
        redirectUrl(t, 'loja-a', 'sku-1'), // the address without its partner
        redirectUrl(t, addressOf(hubTest, 'loja-t'), 'sku-t', '/test'), // test products are served to nobody
        redirectUrl(t, addressOf(hub, 'loja-a'), 'sku-1', '/test'),
      ]) {
        const r = await visit(url);
        expect(r.status, url).to.equal(404);
        expect(r.headers.get('content-type')).to.contain('text/html');
        expect(await r.text()).to.contain('lang="pt-BR"');
        const json = await fetch(url, { redirect: 'manual', headers: { Accept: 'application/json' } });
        expect(json.status, url).to.equal(404);
        expect(json.headers.get('content-type')).to.contain('application/problem+json');
        expect(await json.json()).to.include({ status: 404, title: 'Not Found' });
      }
      expect((await hub.api.get('/clicks')).body.data.length).to.equal(before);
      expect((await hubTest.api.get('/clicks')).body.data).to.deep.equal([]);
    });

    it('answers HEAD without recording a click, and 405 to other methods', async () => {
      const before = (await hub.api.get('/clicks')).body.data.length;
      const head = await visit(redirectUrl(t, addressOf(hub, 'loja-a'), 'sku-1'), 'HEAD');
      expect(head.status).to.equal(302);
      expect(head.headers.get('location')).to.not.contain('svc_click=ic_');
      expect((await visit(redirectUrl(t, addressOf(hub, 'loja-a'), 'sku-1'), 'POST')).status).to.equal(405);
      expect((await hub.api.get('/clicks')).body.data.length).to.equal(before);
    });

    it('stops redirecting once the product goes stale (48 h without a write) or is removed', async () => {
      await registerStore(hub, 'loja-s');
      await putProduct(t, hub, 'loja-s', 'sku-s');
      await publish(t, hub, 'live', 'loja-s', 'sku-s');
      await putProduct(t, hub, 'loja-s', 'sku-r', { product_url: 'https://shop.test/p/r' });
      await publish(t, hub, 'live', 'loja-s', 'sku-r');
      expect((await visit(redirectUrl(t, addressOf(hub, 'loja-s'), 'sku-r'))).status).to.equal(302);
      expect((await hub.api.delete('/products/sku-r')).status).to.equal(204);
      await hub.api.get('/products/sku-r'); // read-your-writes: the removal is projected
      expect((await visit(redirectUrl(t, addressOf(hub, 'loja-s'), 'sku-r'))).status).to.equal(404);
      expect((await visit(redirectUrl(t, addressOf(hub, 'loja-s'), 'sku-s'))).status).to.equal(302);
      t.clock.advance(48 * 3_600_000 + 1000);
      expect((await visit(redirectUrl(t, addressOf(hub, 'loja-s'), 'sku-s'))).status).to.equal(404);
    });

    it('brakes at 60 recorded clicks a minute per client address: the 61st GET is a 429 that records nothing, HEAD is not counted', async () => {
      const start = T0 + 2 * HOUR; // a fresh minute of the service clock, within 48 h of the product's last write
      t.clock.set(new Date(start));
      const url = await buyUrlOf(t, hub, 'sku-1');
      const from = '127.0.0.21';
      const window = `since=${encodeURIComponent(iso(start))}&until=${encodeURIComponent(iso(start + 2 * 60_000))}`;
      const recorded = async (): Promise<number> => {
        const r = await hub.api.get(`/clicks?${window}&limit=200`);
        expect(r.status).to.equal(200);
        return (r.body as { data: unknown[] }).data.length;
      };
      for (let i = 0; i < 5; i++) expect((await getFrom(url, from, {}, 'HEAD')).status, 'HEAD').to.equal(302);
      for (let i = 0; i < 60; i++) expect((await getFrom(url, from)).status, `click ${i + 1}`).to.equal(302);
      t.clock.advance(30_500);
      const refused = await getFrom(url, from);
      expect(refused.status).to.equal(429);
      expect(refused.headers.get('retry-after')).to.equal('30'); // 29.5 s left in the minute, rounded up
      expect(refused.headers.get('location')).to.equal(null);
      expect(refused.headers.get('content-type')).to.equal('text/html; charset=utf-8');
      expect(refused.text).to.contain('Muitos cliques');
      const json = await getFrom(url, from, { Accept: 'application/json' });
      expectProblem({ status: json.status, headers: json.headers, body: JSON.parse(json.text) }, 429);
      expect(json.headers.get('content-type')).to.equal('application/problem+json');
      expect(Number(json.headers.get('retry-after'))).to.be.within(1, 60);
      expect(json.headers.get('vary')).to.equal('Accept');
      expect(json.headers.get('x-content-type-options')).to.equal('nosniff');
      expect(JSON.parse(json.text)).to.include({ title: 'Too Many Requests' });
      // A client cannot pick its address: an X-Forwarded-For it writes itself is not believed.
      const forged = await getFrom(url, from, { 'X-Forwarded-For': '198.51.100.8' });
      expect(forged.status, 'a forged X-Forwarded-For').to.equal(429);
      expect((await getFrom(url, from, {}, 'HEAD')).status, 'HEAD records nothing and is not braked').to.equal(302);
      expect(await recorded(), 'the refused GETs recorded nothing').to.equal(60);
      expect((await getFrom(url, '127.0.0.22')).status, 'another address').to.equal(302);
      t.clock.set(new Date(start + 60_000));
      expect((await getFrom(url, from)).status, 'the next minute').to.equal(302);
      expect(await recorded()).to.equal(62);
    });
  });

  describe('svc_url (/p/) is the offer page', () => {
    it('shows the offer (HTML, or the JSON Offer) with "Ir à loja" to the redirector, and records no click', async () => {
      t.clock.advance(1000); // the default window [now − 30 days, now) leaves out a click at exactly now
      const before = (await hub.api.get('/clicks')).body.data.length;
      const product = await hub.api.get('/products/sku-1');
      const svcUrl = offerPageUrl(t, addressOf(hub, 'loja-a'), 'sku-1');
      expect(new URL(product.body.svc_url).pathname).to.equal(new URL(svcUrl).pathname);
      const page = await visit(svcUrl);
      expect(page.status).to.equal(200);
      expect(page.headers.get('content-type')).to.contain('text/html');
      const html = await page.text();
      expect(html)
        .to.contain('R$ 123,45')
        .and.contain(`<a class="buy" href="/r/${addressOf(hub, 'loja-a')}/sku-1" rel="nofollow">Ir à loja</a>`);
      const head = await visit(svcUrl, 'HEAD');
      expect(head.status).to.equal(200);
      const json = await fetch(svcUrl, { headers: { Accept: 'application/json' } });
      expect(json.status).to.equal(200);
      const offer = await json.json();
      expect(offer).to.include({ sku: 'sku-1', price_cents: 12345, offer_url: product.body.svc_url });
      expect(offer.buy_url).to.equal(product.body.svc_url.replace('/p/', '/r/'));
      expect(offer.store).to.deep.equal({ store_id: 'Loja-A', name: 'Loja Exemplo' });
      t.clock.advance(1);
      expect((await hub.api.get('/clicks')).body.data.length).to.equal(before);
    });

    it('answers 404 (HTML, or a Problem for JSON) for what is not searchable and for the test area, 405 to writes', async () => {
      for (const url of [
        offerPageUrl(t, addressOf(hub, 'loja-a'), 'sku-pending'),
        offerPageUrl(t, addressOf(hub, 'loja-a'), 'sku-off'),
        offerPageUrl(t, addressOf(hub, 'loja-a'), 'sku-nope'),
        offerPageUrl(t, addressOf(hubTest, 'loja-t'), 'sku-t', '/test'),
        offerPageUrl(t, addressOf(hub, 'loja-a'), 'sku-1', '/test'),
      ]) {
        const r = await visit(url);
        expect(r.status, url).to.equal(404);
        expect(r.headers.get('content-type'), url).to.contain('text/html');
        const json = await fetch(url, { headers: { Accept: 'application/json' } });
        expect(json.status, url).to.equal(404);
        expect(json.headers.get('content-type'), url).to.contain('application/problem+json');
      }
      const post = await visit(offerPageUrl(t, addressOf(hub, 'loja-a'), 'sku-1'), 'POST');
      expect(post.status).to.equal(405);
      expect(post.headers.get('allow')).to.equal('GET, HEAD');
    });
  });

  describe('the same store_id at two partners', () => {
    it('gives each partner its own address: svc_url, offer page, redirect and clicks stay with the owner', async () => {
      const first = await t.partner({ type: 'hub', name: 'Primeira' });
      const second = await t.partner({ type: 'hub', name: 'Segunda' });
      // The second registers A's id in other cases: still a store of its own, at an address of its own.
      await registerStore(first, 'dupla', { name: 'Loja Primeira' });
      await registerStore(second, 'Dupla', { name: 'Loja Segunda' });
      await putProduct(t, first, 'dupla', 'same', { product_url: 'https://shop.test/first', price_cents: 1111 });
      await putProduct(t, second, 'Dupla', 'same', { product_url: 'https://shop.test/second', price_cents: 2222 });
      await publish(t, first, 'live', 'dupla', 'same');
      t.clock.advance(1000);
      await publish(t, second, 'live', 'Dupla', 'same');

      const base = t.api.replace(/\/v1$/, '');
      const path = (u: string): string => new URL(u).pathname;
      const owners = [
        { p: first, url: 'https://shop.test/first', price: 1111, store: 'Loja Primeira' },
        { p: second, url: 'https://shop.test/second', price: 2222, store: 'Loja Segunda' },
      ];
      const svcUrls = new Set<string>();
      for (const o of owners) {
        const address = `${o.p.partnerId.toLowerCase()}/dupla`;
        const svcUrl = (await o.p.api.get('/products/same')).body.svc_url as string;
        svcUrls.add(svcUrl);
        expect(path(svcUrl)).to.equal(`/p/${address}/same`);

        const page = await fetch(`${base}/p/${address}/same`, { headers: { Accept: 'application/json' } });
        expect(page.status, svcUrl).to.equal(200);
        const offer = await page.json();
        expect(offer).to.include({ price_cents: o.price, offer_url: svcUrl });
        expect(offer.store.name).to.equal(o.store);
        expect(path(offer.buy_url)).to.equal(`/r/${address}/same`);
        expect(await (await visit(`${base}/p/${address}/same`)).text()).to.contain(`href="/r/${address}/same"`);

        const head = await visit(`${base}/r/${address}/same`, 'HEAD');
        expect(head.status).to.equal(302);
        expect(head.headers.get('location')).to.equal(o.url);
        const r = await visit(`${base}/r/${address}/same`);
        expect(r.status).to.equal(302);
        expect(r.headers.get('location')).to.match(new RegExp(`^${o.url}\\?svc_click=ic_`));
      }
      expect(svcUrls.size, 'two svc_url').to.equal(2);
      const search = await fetch(`${base}/api/search?q=${encodeURIComponent('camiseta azul')}&limit=50`);
      const found = ((await search.json()).results as { offers: { buy_url: string }[] }[]).flatMap((p) =>
        p.offers.map((o) => path(o.buy_url)),
      );
      for (const o of owners) expect(found).to.include(`/r/${o.p.partnerId.toLowerCase()}/dupla/same`);

      t.clock.advance(1);
      for (const o of owners) {
        const clicks = (await o.p.api.get('/clicks')).body.data as { store_id: string; price_cents: number }[];
        expect(
          clicks.map((c) => c.price_cents),
          'one click each (HEAD records none), on its own offer',
        ).to.deep.equal([o.price]);
      }
    });
  });

  describe('POST /sandbox/clicks', () => {
    it('creates a test click for a SKU of the store, with its price, at the clock', async () => {
      const r = await hubTest.api.post('/sandbox/clicks', { store_id: 'loja-t', sku: 'sku-t' });
      expect(r.status).to.equal(200);
      expect(r.body).to.include({ store_id: 'loja-t', sku: 'sku-t', price_cents: 500, occurred_at: iso(T0) });
      expect(r.body.click_id).to.match(/^ic_[A-Za-z0-9_-]{22}$/);
      t.clock.advance(1);
      const list = await hubTest.api.get('/clicks');
      expect(list.body.data.map((c: { click_id: string }) => c.click_id)).to.include(r.body.click_id);
      expect((await hub.api.get('/clicks')).body.data.map((c: { click_id: string }) => c.click_id)).to.not.include(
        r.body.click_id,
      );
    });

    it('refuses a SKU outside the store, an unknown store, a bad body; 403 for a live key', async () => {
      const wrongStore = await hubTest.api.post('/sandbox/clicks', { store_id: 'loja-t', sku: 'sku-u' });
      expect(wrongStore.status).to.equal(422);
      expect(codes(wrongStore.body)).to.deep.equal(['sku:sku_not_found']);
      const unknown = await hubTest.api.post('/sandbox/clicks', { store_id: 'loja-x', sku: 'nope' });
      expect(codes(unknown.body)).to.deep.equal(['sku:sku_not_found', 'store_id:store_not_found']);
      const bad = await hubTest.api.post('/sandbox/clicks', { store_id: 'a b', extra: 1 });
      expect(codes(bad.body)).to.deep.equal(['extra:unknown_field', 'sku:required', 'store_id:pattern']);
      const live = await hub.api.post('/sandbox/clicks', { store_id: 'Loja-A', sku: 'sku-1' });
      expect(live.status).to.equal(403);
      expect(codes(live.body)).to.deep.equal([':test_key_required']);
    });

    it('replays the first answer for the same Idempotency-Key', async () => {
      const headers = { 'Idempotency-Key': 'sandbox-1' };
      const first = await hubTest.api.post('/sandbox/clicks', { store_id: 'loja-u', sku: 'sku-u' }, headers);
      const again = await hubTest.api.post('/sandbox/clicks', { store_id: 'loja-u', sku: 'sku-u' }, headers);
      expect(again.status).to.equal(200);
      expect(again.body).to.deep.equal(first.body);
    });
  });

  describe('GET /clicks', () => {
    let p: Partner;
    const clicks: { click_id: string; store_id: string; occurred_at: string }[] = [];
    const start = Date.parse('2026-04-01T00:00:00.000Z');

    before(async () => {
      p = await t.partner({ type: 'hub', env: 'test', name: 'Lista' });
      for (const s of ['s-b', 's-a']) {
        await registerStore(p, s);
        await putProduct(t, p, s, `${s}-sku`);
      }
      // two clicks at the same instant in two stores, then one a day for four days
      t.clock.set(new Date(start));
      for (const s of ['s-b', 's-a', 's-b'])
        clicks.push(await sandboxClick(p, s, `${s}-sku`).then((c) => ({ ...c, store_id: s })));
      for (let d = 1; d <= 4; d++) {
        t.clock.set(new Date(start + d * DAY));
        clicks.push(await sandboxClick(p, 's-a', 's-a-sku').then((c) => ({ ...c, store_id: 's-a' })));
      }
    });

    const sorted = () =>
      [...clicks].sort(
        (a, b) =>
          a.occurred_at.localeCompare(b.occurred_at) ||
          a.store_id.localeCompare(b.store_id) ||
          (a.click_id < b.click_id ? -1 : 1),
      );

    it('lists by occurred_at, store_id, click_id over the default window: the 30 days up to now', async () => {
      t.clock.set(new Date(start + 4 * DAY));
      const r = await p.api.get('/clicks');
      expect(r.status).to.equal(200);
      expect(r.body.until).to.equal(iso(start + 4 * DAY));
      expect(r.body.since).to.equal(iso(start + 4 * DAY - 30 * DAY));
      // the last click occurred exactly at now: outside [since, until)
      expect(r.body.data.map((c: { click_id: string }) => c.click_id)).to.deep.equal(
        sorted()
          .slice(0, 6)
          .map((c) => c.click_id),
      );
      expect(r.body.next_cursor).to.equal(null);
      t.clock.advance(1);
      expect((await p.api.get('/clicks')).body.data).to.have.length(7);
    });

    it('returns the window normalized to UTC and filters by store', async () => {
      const r = await p.api.get(
        `/clicks?since=${encodeURIComponent('2026-03-31T21:00:00-03:00')}&until=2026-04-02T00:00:00Z&store_id=s-a`,
      );
      expect(r.status).to.equal(200);
      expect(r.body.since).to.equal('2026-04-01T00:00:00.000Z');
      expect(r.body.until).to.equal('2026-04-02T00:00:00.000Z');
      expect(r.body.data.map((c: { click_id: string }) => c.click_id)).to.deep.equal(
        sorted()
          .filter((c) => c.store_id === 's-a' && c.occurred_at < r.body.until)
          .map((c) => c.click_id),
      );
    });

    it('refuses windows above 31 days or not increasing with 422 window; 31 days exactly is fine', async () => {
      const long = await p.api.get(
        `/clicks?since=2026-03-01T00:00:00Z&until=${encodeURIComponent(iso(Date.parse('2026-03-01T00:00:00Z') + 31 * DAY + 1))}`,
      );
      expect(long.status).to.equal(422);
      expect(codes(long.body)).to.deep.equal(['until:window']);
      const exact = await p.api.get(`/clicks?since=2026-03-01T00:00:00Z&until=2026-04-01T00:00:00Z`);
      expect(exact.status).to.equal(200);
      const backwards = await p.api.get('/clicks?since=2026-04-02T00:00:00Z&until=2026-04-02T00:00:00Z');
      expect(codes(backwards.body)).to.deep.equal(['until:window']);
      const bad = await p.api.get('/clicks?since=yesterday&limit=0&color=red');
      expect(codes(bad.body)).to.deep.equal(['color:unknown_field', 'limit:minimum', 'since:date_time']);
    });

    it('pages with limit and a cursor that keeps the window, even when the clock moves', async () => {
      t.clock.set(new Date(start + 10 * DAY));
      const seen: string[] = [];
      let r = await p.api.get('/clicks?limit=3');
      const window = { since: r.body.since, until: r.body.until };
      seen.push(...r.body.data.map((c: { click_id: string }) => c.click_id));
      t.clock.advance(DAY); // a default window would now be another one
      while (r.body.next_cursor) {
        const next = await p.api.get(`/clicks?limit=3&cursor=${r.body.next_cursor}`);
        expect(next.status).to.equal(200);
        expect({ since: next.body.since, until: next.body.until }).to.deep.equal(window);
        seen.push(...next.body.data.map((c: { click_id: string }) => c.click_id));
        r = next;
      }
      expect(seen).to.deep.equal(sorted().map((c) => c.click_id));
    });

    it('accepts the same window again with a cursor, refuses another one and foreign or edited cursors', async () => {
      const q = 'since=2026-04-01T00:00:00Z&until=2026-04-20T00:00:00Z';
      const first = await p.api.get(`/clicks?${q}&limit=2`);
      const cursor = first.body.next_cursor as string;
      const same = await p.api.get(
        `/clicks?since=${encodeURIComponent('2026-03-31T21:00:00.000-03:00')}&until=2026-04-20T00:00:00Z&limit=2&cursor=${cursor}`,
      );
      expect(same.status).to.equal(200);
      expect(same.body.data[0].click_id).to.equal(sorted()[2].click_id);
      const moved = await p.api.get(`/clicks?since=2026-04-02T00:00:00Z&until=2026-04-20T00:00:00Z&cursor=${cursor}`);
      expect(moved.status).to.equal(422);
      expect(codes(moved.body)).to.deep.equal(['cursor:invalid']);
      expect(codes((await hubTest.api.get(`/clicks?cursor=${cursor}`)).body)).to.deep.equal(['cursor:invalid']);
      expect(codes((await p.api.get(`/conversions?cursor=${cursor}`)).body)).to.deep.equal(['cursor:invalid']);
      // The signature's last two characters changed (to others: a random signature may end in `xx`).
      const tampered = `${cursor.slice(0, -2)}${cursor.endsWith('xx') ? 'yy' : 'xx'}`;
      expect(codes((await p.api.get(`/clicks?cursor=${tampered}`)).body)).to.deep.equal(['cursor:invalid']);
    });

    it('keeps partners and environments apart', async () => {
      t.clock.set(new Date(start + 5 * DAY));
      expect((await other.api.get('/clicks')).body.data).to.deep.equal([]);
      const live = await t.key(p.partnerId, 'live');
      expect((await live.api.get('/clicks')).body.data).to.deep.equal([]);
      expect((await p.api.get('/clicks')).body.data).to.have.length(7);
    });
  });

  describe('ownership', () => {
    it('redirect clicks feed GET /clicks of the owning partner only', async () => {
      t.clock.set(new Date(T0 + 3_600_000));
      const id = await redirectClick(t, hub, 'Loja-A', 'sku-1');
      t.clock.advance(1);
      const mine = await hub.api.get(`/clicks?since=${encodeURIComponent(plus(iso(T0), 1))}`);
      expect(mine.body.data.map((c: { click_id: string }) => c.click_id)).to.include(id);
      expect((await other.api.get('/clicks')).body.data).to.deep.equal([]);
    });
  });
});
