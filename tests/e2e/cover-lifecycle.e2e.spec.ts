/**
 * The product life cycle through HTTP with the real cover check against local HTTPS servers: every transition of
 * the state table, the re-check periods and the 48 hours on the manual clock (moved through the admin API, which
 * waits for the re-check scan it triggers). The service runs one check at a time (COVER_CHECK_CONCURRENCY=1), so a
 * product sent later is checked later: `settle()` uses that as a barrier before asserting that nothing was fetched.
 */
import { expect } from 'chai';
import { productBody, startTestService, storeBody, type Partner, type TestService } from '../support/service.js';
import { startImageServers, type ImageServers } from '../support/https-image-server.js';
import { coverTestEnv, type CoverEnv } from '../support/cover-env.js';
import { until } from '../support/deadline.js';

const HOUR = 60 * 60 * 1000;

describe('cover check and the product life cycle (e2e)', function () {
  this.timeout(30_000);
  let servers: ImageServers;
  let cover: CoverEnv;
  let t: TestService;
  let hub: Partner;
  let seq = 0;
  let updatedAt = Date.parse('2026-01-01T00:00:00Z');

  before(async () => {
    servers = await startImageServers();
    cover = coverTestEnv(servers, { extra: { COVER_CHECK_CONCURRENCY: '1' } });
    t = await startTestService(cover.env);
    t.clock.set(new Date('2026-01-02T00:00:00Z'));
    hub = await t.partner({ type: 'hub' });
    expect((await hub.api.put('/stores/main', storeBody())).status).to.equal(200);
    expect((await t.approveStore(hub, 'main')).status).to.equal(200);
  });
  after(async () => {
    await t?.close();
    await servers?.close();
    cover?.cleanup();
  });

  const img = (path: string) => servers.url('cdn.shop.test', path);
  /** A strictly newer updated_at on every send, never ahead of the clock. */
  const nextUpdatedAt = () => new Date(Math.min((updatedAt += 1000), t.clock.now().getTime())).toISOString();
  const put = (sku: string, coverUrl: string, overrides: Record<string, unknown> = {}, storeId = 'main') =>
    hub.api.put(
      `/products/${sku}`,
      productBody(storeId, { image_urls: [coverUrl], updated_at: nextUpdatedAt(), ...overrides }),
    );
  const read = async (sku: string) => (await hub.api.get(`/products/${sku}`)).body;
  const settledState = async (sku: string, state: string) => {
    await until(async () => (await read(sku)).state === state, 30_000, `${sku} ${state}`, 100);
    return read(sku);
  };
  const coverChecks = async (sku: string) => {
    const r = await t.admin.get(`/streams/${encodeURIComponent(`product-live:${hub.partnerId}:${sku}`)}`);
    return (r.body.events as { type: string }[]).filter((e) => e.type === 'CoverChecked').length;
  };
  /** Every check asked for before now has run: a new product sent now has been checked. */
  const settle = async () => {
    const sku = `barrier-${++seq}`;
    await put(sku, img(`/img/800x600.jpg?barrier=${seq}`));
    await settledState(sku, 'accepted');
  };
  /** The ProductFreshnessLapsed events of a product's stream, as the log holds them. */
  const lapses = async (sku: string) => {
    const r = await t.admin.get(`/streams/${encodeURIComponent(`product-live:${hub.partnerId}:${sku}`)}`);
    return (r.body.events as { type: string; data: unknown; metadata: { recorded_at: string } }[]).filter(
      (e) => e.type === 'ProductFreshnessLapsed',
    );
  };
  const advance = async (ms: number) => expect((await t.admin.post('/clock', { advance_ms: ms })).status).to.equal(200);
  const codes = (body: { reasons: { code: string; field?: string }[] }) =>
    body.reasons.map((r) => `${r.field}:${r.code}`);

  describe('the image, judged through the whole service', () => {
    it('accepts JPEG, PNG and WebP of 800×600 (published_at, svc_url); the write answer said pending', async () => {
      for (const ext of ['jpg', 'png', 'webp']) {
        const sent = await put(`ok-${ext}`, img(`/img/800x600.${ext}`));
        expect(sent.status).to.equal(200);
        expect(sent.body.state).to.equal('pending');
        expect(sent.body.published_at, 'never published yet').to.equal(null);
        expect(sent.body).to.not.have.property('svc_url');
      }
      const publishedAt = t.clock.now().toISOString();
      for (const ext of ['jpg', 'png', 'webp']) {
        const got = await settledState(`ok-${ext}`, 'accepted');
        expect(got.reasons).to.deep.equal([]);
        expect(got.published_at).to.equal(publishedAt);
        expect(new URL(got.svc_url).pathname).to.equal(`/p/${hub.partnerId.toLowerCase()}/main/ok-${ext}`);
      }
      // A later write answers with the first publication, whether it keeps the cover (PATCH) or sends it again (PUT).
      t.clock.advance(60_000);
      const patched = await hub.api.patch('/products/ok-jpg', { price_cents: 4321, updated_at: nextUpdatedAt() });
      expect(patched.status).to.equal(200);
      expect(patched.body).to.include({ state: 'accepted', published_at: publishedAt });
      const resent = await put('ok-png', img('/img/800x600.png'));
      expect(resent.body.published_at).to.equal(publishedAt);
    });

    it('rejects a GIF (image_type), a 499×800 cover (image_too_small), a 404 and a redirect outside the store (image_unreachable)', async () => {
      const evilBefore = servers.evil.connections();
      const cases: [string, string, string][] = [
        ['bad-gif', '/img/600x600.gif', 'image_type'],
        ['bad-small', '/img/499x800.jpg', 'image_too_small'],
        ['bad-404', '/status/404', 'image_unreachable'],
        ['bad-redirect', '/redirect/outside', 'image_unreachable'],
      ];
      for (const [sku, path] of cases) expect((await put(sku, img(path))).body.state).to.equal('pending');
      for (const [sku, , code] of cases) {
        const got = await settledState(sku, 'rejected');
        expect(codes(got), sku).to.deep.equal([`image_urls[0]:${code}`]);
        expect(got.published_at).to.equal(null);
        expect(got).to.not.have.property('svc_url');
      }
      expect(servers.evil.connections(), 'the redirect target outside the store was never contacted').to.equal(
        evilBefore,
      );
      const listed = await hub.api.get('/products?state=rejected');
      expect(listed.body.data.map((p: { sku: string }) => p.sku)).to.include.members(cases.map((c) => c[0]));
    });

    it('follows a redirect inside the store hosts and accepts what it finds', async () => {
      await put('redirect-in', img('/redirect/inside'));
      await settledState('redirect-in', 'accepted');
    });
  });

  describe('operator actions', () => {
    it('holds a product pending until the store is active and its domain approved, then publishes it', async () => {
      expect((await hub.api.put('/stores/wait', storeBody({ domains: ['shop.test', 'shop2.test'] }))).status).to.equal(
        200,
      );
      servers.setSwitch('waiting', '800x600.jpg');
      const sent = await put('waiting', img('/switch/waiting'), { product_url: 'https://www.shop2.test/p/1' }, 'wait');
      expect(codes(sent.body)).to.deep.equal(['store_id:store_not_active', 'product_url:domain_not_approved']);
      await settle();
      expect(servers.requests('/switch/waiting'), 'the cover is checked while the store waits').to.equal(1);
      let got = await read('waiting');
      expect(got.state).to.equal('pending');
      expect(codes(got)).to.deep.equal(['store_id:store_not_active', 'product_url:domain_not_approved']);

      await t.admin.post(`/partners/${hub.partnerId}/live/stores/wait/domains/shop2.test/approve`, {});
      got = await read('waiting');
      expect(got.state).to.equal('pending');
      expect(codes(got)).to.deep.equal(['store_id:store_not_active']);

      t.clock.advance(60_000);
      await t.approveStore(hub, 'wait');
      got = await read('waiting');
      expect(got.state).to.equal('accepted');
      expect(got.reasons).to.deep.equal([]);
      const publishedAt = t.clock.now().toISOString();
      expect(got.published_at).to.equal(publishedAt);
      expect(new URL(got.svc_url).pathname).to.equal(`/p/${hub.partnerId.toLowerCase()}/wait/waiting`);

      await t.admin.post(`/partners/${hub.partnerId}/live/stores/wait/suspend`, {});
      got = await read('waiting');
      expect(got.state).to.equal('pending');
      expect(codes(got)).to.deep.equal(['store_id:store_not_active']);
      expect(got).to.not.have.property('svc_url');

      t.clock.advance(60_000);
      await t.admin.post(`/partners/${hub.partnerId}/live/stores/wait/reinstate`, {});
      got = await read('waiting');
      expect(got.state).to.equal('accepted');
      expect(got.published_at, 'published_at is the first publication').to.equal(publishedAt);
      expect(servers.requests('/switch/waiting'), 'operator actions check nothing').to.equal(1);
    });

    it('holds the products of a domain the store drops, until it is declared and approved again', async () => {
      expect((await hub.api.put('/stores/drop', storeBody({ domains: ['shop.test', 'shop3.test'] }))).status).to.equal(
        200,
      );
      await t.approveStore(hub, 'drop');
      await put('on-dropped', img('/img/800x600.jpg?drop'), { product_url: 'https://shop3.test/p' }, 'drop');
      await settledState('on-dropped', 'accepted');
      const store = (await hub.api.get('/stores/drop')).body;
      const { store_id: _id, status: _s, domains_approved: _d, ...input } = store;
      expect((await hub.api.put('/stores/drop', { ...input, domains: ['shop.test'] })).status).to.equal(200);
      let got = await read('on-dropped');
      expect(got.state).to.equal('pending');
      expect(codes(got)).to.deep.equal(['product_url:domain_not_approved']);
      await hub.api.put('/stores/drop', { ...input, domains: ['shop.test', 'shop3.test'] });
      expect((await read('on-dropped')).state, 'declared again, not yet approved').to.equal('pending');
      await t.admin.post(`/partners/${hub.partnerId}/live/stores/drop/domains/shop3.test/approve`, {});
      got = await read('on-dropped');
      expect(got.state).to.equal('accepted');
    });
  });

  describe('sending again', () => {
    it('re-checks a rejected cover sent again at the same address within seconds, with no clock move', async () => {
      servers.setSwitch('fixed', '499x800.jpg');
      await put('fix-me', img('/switch/fixed'));
      expect(codes(await settledState('fix-me', 'rejected'))).to.deep.equal(['image_urls[0]:image_too_small']);
      servers.setSwitch('fixed', '800x600.jpg');
      const again = await put('fix-me', img('/switch/fixed'), { price_cents: 100 });
      expect(again.body.state, 'the write answer: the cover stands rejected until its check').to.equal('rejected');
      await settledState('fix-me', 'accepted');
      expect(await coverChecks('fix-me')).to.equal(2);
    });

    it('does not re-check an accepted cover on each send at the same address, and checks a new address', async () => {
      servers.setSwitch('kept', '800x600.jpg');
      await put('keep', img('/switch/kept'));
      await settledState('keep', 'accepted');
      const sent = await put('keep', img('/switch/kept'), { price_cents: 555 });
      expect(sent.body.state).to.equal('accepted');
      await hub.api.patch('/products/keep', { price_cents: 556, updated_at: nextUpdatedAt() });
      await settle();
      expect(servers.requests('/switch/kept')).to.equal(1);
      expect(await coverChecks('keep')).to.equal(1);

      servers.setSwitch('kept-2', '600x600.gif');
      const moved = await put('keep', img('/switch/kept-2'));
      expect(moved.body.state, 'a new address is unchecked: pending').to.equal('pending');
      expect(codes(await settledState('keep', 'rejected'))).to.deep.equal(['image_urls[0]:image_type']);
    });

    it('removes a product on DELETE, and lists it as removed', async () => {
      await put('gone', img('/img/800x600.jpg?gone'));
      await settledState('gone', 'accepted');
      expect((await hub.api.delete('/products/gone')).status).to.equal(204);
      const got = await read('gone');
      expect(got.state).to.equal('removed');
      expect(got).to.not.have.property('svc_url');
      const listed = await hub.api.get('/products?state=removed');
      expect(listed.body.data.map((p: { sku: string }) => p.sku)).to.include('gone');
    });
  });

  // These move the clock: each asserts only on its own products, sent inside the test.
  describe('time', () => {
    it('re-checks a rejected cover every hour: a host that recovered passes on its own', async () => {
      servers.setSwitch('hourly', 'status:503');
      await put('hourly', img('/switch/hourly'));
      expect(codes(await settledState('hourly', 'rejected'))).to.deep.equal(['image_urls[0]:image_unreachable']);
      servers.setSwitch('hourly', '800x600.jpg');
      await advance(HOUR - 60_000);
      await settle();
      expect(servers.requests('/switch/hourly'), 'not before the hour').to.equal(1);
      expect((await read('hourly')).state).to.equal('rejected');
      await advance(60_000);
      const got = await read('hourly'); // the admin answer waited for the check and its projection
      expect(got.state).to.equal('accepted');
      expect(got.published_at).to.equal(t.clock.now().toISOString());
      expect(servers.requests('/switch/hourly')).to.equal(2);
      expect(await coverChecks('hourly')).to.equal(2);
    });

    it('goes stale after more than 48 hours without PUT or PATCH, and comes back on the next one', async () => {
      const written = (await put('fresh', img('/img/800x600.jpg?fresh'))).body.received_at as string;
      await settledState('fresh', 'accepted');
      await advance(48 * HOUR);
      expect((await read('fresh')).state, 'exactly 48 h: not yet').to.equal('accepted');
      expect(await lapses('fresh'), 'no lapse at exactly 48 h').to.deep.equal([]);
      await advance(1);
      const stale = await read('fresh');
      expect(stale.state).to.equal('stale');
      // The moment it went stale is a fact of the log, recorded with no request (the clock move waited for it).
      const lapsedAt = new Date(Date.parse(written) + 48 * HOUR).toISOString();
      expect((await lapses('fresh')).map((e) => e.data)).to.deep.equal([
        { sku: 'fresh', store_id: 'main', lapsed_at: lapsedAt },
      ]);
      await advance(HOUR);
      expect(await lapses('fresh'), 'one lapse per write, however often the clock moves').to.have.length(1);
      expect(new URL(stale.svc_url).pathname).to.equal(`/p/${hub.partnerId.toLowerCase()}/main/fresh`);
      const listed = await hub.api.get('/products?state=stale');
      expect(listed.body.data.map((p: { sku: string }) => p.sku)).to.include('fresh');
      const back = await hub.api.patch('/products/fresh', { price_cents: 1234, updated_at: nextUpdatedAt() });
      expect(back.body.state).to.equal('accepted');
      expect((await read('fresh')).state).to.equal('accepted');
      await advance(49 * HOUR);
      expect((await read('fresh')).state).to.equal('stale');
      expect((await lapses('fresh')).map((e) => e.data)).to.deep.equal([
        { sku: 'fresh', store_id: 'main', lapsed_at: lapsedAt },
        {
          sku: 'fresh',
          store_id: 'main',
          lapsed_at: new Date(Date.parse(back.body.received_at) + 48 * HOUR).toISOString(),
        },
      ]);
      await put('fresh', img('/img/800x600.jpg?fresh'));
      expect((await read('fresh')).state).to.equal('accepted');
      expect(await coverChecks('fresh'), 'coming back checks nothing').to.equal(1);
    });

    it('records a lapse that came due while the service was down, once, and none for a product not accepted', async () => {
      const written = (await put('down', img('/img/800x600.jpg?down'))).body.received_at as string;
      await settledState('down', 'accepted');
      servers.setSwitch('down-rejected', '499x800.jpg');
      await put('down-rejected', img('/switch/down-rejected'));
      await settledState('down-rejected', 'rejected');
      await t.restart(new Date(t.clock.now().getTime() + 49 * HOUR));
      hub = { ...hub, api: t.as(hub.key) };
      const lapsedAt = new Date(Date.parse(written) + 48 * HOUR).toISOString();
      await until(async () => (await lapses('down')).length > 0, 30_000, 'the lapse of "down" after the restart', 100);
      const [lapse] = await lapses('down');
      expect(lapse.data).to.deep.equal({ sku: 'down', store_id: 'main', lapsed_at: lapsedAt });
      expect((await read('down')).state).to.equal('stale');
      await t.restart();
      hub = { ...hub, api: t.as(hub.key) };
      await advance(HOUR); // a scan of the restarted service, which finds nothing new
      expect(await lapses('down'), 'never two lapses for one write').to.have.length(1);
      expect(await lapses('down-rejected'), 'a rejected product does not lapse').to.deep.equal([]);
    });

    it('re-checks an accepted cover every 7 days and takes the result', async () => {
      servers.setSwitch('weekly', '800x600.jpg');
      await put('weekly', img('/switch/weekly'));
      await settledState('weekly', 'accepted');
      servers.setSwitch('weekly', '499x800.jpg');
      const keepFresh = () => hub.api.patch('/products/weekly', { available: true, updated_at: nextUpdatedAt() });
      for (let i = 0; i < 3; i++) {
        await advance(47 * HOUR);
        await keepFresh();
      }
      await advance(26 * HOUR); // 167 h
      await keepFresh();
      await settle();
      expect(servers.requests('/switch/weekly'), 'not before 7 days').to.equal(1);
      expect((await read('weekly')).state).to.equal('accepted');
      await advance(HOUR);
      const got = await read('weekly');
      expect(got.state).to.equal('rejected');
      expect(codes(got)).to.deep.equal(['image_urls[0]:image_too_small']);
      expect(servers.requests('/switch/weekly')).to.equal(2);
    });
  });
});
