/**
 * `GET /v1/events` (PORTAL.md "What changed since I last looked") through HTTP, with the real cover check against
 * local HTTPS servers and the manual clock: the notifications of a store's and its products' life, a batch's end,
 * the 48 h lapse with no request, the cursor that is never null, the `type` filter, 422s, isolation between
 * partners and environments, and the same feed after a restart and after a rebuild of the projection.
 */
import { expect } from 'chai';
import { productBody, startTestService, storeBody, type Partner, type TestService } from '../support/service.js';
import { startImageServers, type ImageServers } from '../support/https-image-server.js';
import { coverTestEnv, type CoverEnv } from '../support/cover-env.js';
import { until } from '../support/deadline.js';
import { rebuildProjection } from '../support/e2e.js';

const HOUR = 60 * 60 * 1000;

type Notification = { id: string; type: string; occurred_at: string; data: Record<string, unknown> };

describe('GET /v1/events: the notification feed (e2e)', function () {
  this.timeout(60_000);
  let servers: ImageServers;
  let cover: CoverEnv;
  let t: TestService;
  let hub: Partner;
  let updatedAt = Date.parse('2026-01-01T00:00:00Z');

  before(async () => {
    servers = await startImageServers();
    cover = coverTestEnv(servers, { extra: { COVER_CHECK_CONCURRENCY: '1' } });
    t = await startTestService(cover.env);
    t.clock.set(new Date('2026-01-02T00:00:00Z'));
    hub = await t.partner({ type: 'hub' });
  });
  after(async () => {
    await t?.close();
    await servers?.close();
    cover?.cleanup();
  });

  const img = (path: string) => servers.url('cdn.shop.test', path);
  const nextUpdatedAt = () => new Date(Math.min((updatedAt += 1000), t.clock.now().getTime())).toISOString();
  const put = (p: Partner, sku: string, coverPath: string) =>
    p.api.put(`/products/${sku}`, productBody('main', { image_urls: [img(coverPath)], updated_at: nextUpdatedAt() }));
  const stateOf = async (p: Partner, sku: string) => (await p.api.get(`/products/${sku}`)).body.state as string;
  const settled = (p: Partner, sku: string, state: string) =>
    until(async () => (await stateOf(p, sku)) === state, 30_000, `${sku} ${state}`, 50);
  const advance = async (ms: number) => expect((await t.admin.post('/clock', { advance_ms: ms })).status).to.equal(200);

  /** Every notification of the feed, page by page (`limit`), and the last cursor. */
  async function walk(p: Partner, query = '', limit = 2): Promise<{ all: Notification[]; cursor: string }> {
    const all: Notification[] = [];
    let cursor: string | undefined;
    for (;;) {
      const q = [query, `limit=${limit}`, cursor ? `cursor=${encodeURIComponent(cursor)}` : ''].filter(Boolean);
      const page = await p.api.get(`/events?${q.join('&')}`);
      expect(page.status, JSON.stringify(page.body)).to.equal(200);
      expect(page.body.next_cursor).to.be.a('string');
      cursor = page.body.next_cursor as string;
      all.push(...(page.body.data as Notification[]));
      if (page.body.data.length < limit) return { all, cursor };
    }
  }
  const brief = (n: Notification) => `${n.type} ${JSON.stringify(n.data)}`;

  describe('the life of a store and its products', () => {
    let written = '';
    let patched = '';
    let stale = '';
    let rejectedReasons: unknown;
    let jobId = '';

    before(async () => {
      expect((await hub.api.put('/stores/main', storeBody())).status).to.equal(200);
      expect((await t.approveStore(hub, 'main')).status).to.equal(200);
      const sent = await put(hub, 'a', '/img/800x600.jpg?a');
      written = sent.body.received_at;
      await settled(hub, 'a', 'accepted');
      await put(hub, 'r', '/img/499x800.jpg?r');
      await settled(hub, 'r', 'rejected');
      rejectedReasons = (await hub.api.get('/products/r')).body.reasons;
      expect(rejectedReasons).to.have.length(1);
      await advance(48 * HOUR + 1); // no request: the lapse is recorded by the clock
      stale = t.clock.now().toISOString();
      patched = (await hub.api.patch('/products/a', { price_cents: 1234, updated_at: nextUpdatedAt() })).body
        .received_at;
      expect(await stateOf(hub, 'a')).to.equal('accepted');
      expect((await t.admin.post(`/partners/${hub.partnerId}/live/stores/main/suspend`, {})).status).to.equal(200);
      expect((await hub.api.delete('/products/r')).status).to.equal(204);
      const batch = await hub.api.post('/products/batch', { items: [{ op: 'delete', sku: 'never-sent' }] });
      expect(batch.status).to.equal(202);
      jobId = batch.body.job_id;
      await until(
        async () => (await hub.api.get(`/jobs/${batch.body.job_id}`)).body.state === 'done',
        30_000,
        'job done',
        50,
      );
    });

    it('lists every change in the order it happened, with the shapes of PORTAL.md', async () => {
      const { all } = await walk(hub);
      expect(all.map(brief)).to.deep.equal(
        [
          ['store.status_changed', { store_id: 'main', status: 'active' }],
          ['store.domain_approved', { store_id: 'main', domain: 'shop.test' }],
          ['product.state_changed', { sku: 'a', store_id: 'main', state: 'pending', reasons: [] }],
          ['product.state_changed', { sku: 'a', store_id: 'main', state: 'accepted', reasons: [] }],
          ['product.state_changed', { sku: 'r', store_id: 'main', state: 'pending', reasons: [] }],
          ['product.state_changed', { sku: 'r', store_id: 'main', state: 'rejected', reasons: rejectedReasons }],
          ['product.state_changed', { sku: 'a', store_id: 'main', state: 'stale', reasons: [] }],
          ['product.state_changed', { sku: 'a', store_id: 'main', state: 'accepted', reasons: [] }],
          ['store.status_changed', { store_id: 'main', status: 'suspended' }],
          [
            'product.state_changed',
            {
              sku: 'a',
              store_id: 'main',
              state: 'pending',
              reasons: [
                { code: 'store_not_active', field: 'store_id', message: 'The store is not approved, or is suspended.' },
              ],
            },
          ],
          ['product.state_changed', { sku: 'r', store_id: 'main', state: 'removed', reasons: [] }],
          [
            'job.finished',
            { job_id: jobId, state: 'done', received: 1, accepted: 0, rejected: 0, pending: 0, removed: 1 },
          ],
        ].map(([type, data]) => `${type as string} ${JSON.stringify(data)}`),
      );
    });

    it('says when: the service clock, and for `stale` the moment the 48 h passed', async () => {
      const { all } = await walk(hub, '', 200);
      const lapse = all.find((n) => n.data.state === 'stale')!;
      expect(lapse.occurred_at).to.equal(new Date(Date.parse(written) + 48 * HOUR).toISOString());
      expect(Date.parse(lapse.occurred_at)).to.be.below(Date.parse(stale));
      const back = all.filter((n) => n.data.sku === 'a' && n.data.state === 'accepted')[1];
      expect(back.occurred_at).to.equal(patched);
      const ids = all.map((n) => n.id);
      expect(new Set(ids).size, 'ids are unique').to.equal(ids.length);
    });

    it('filters by one type, with cursors of its own', async () => {
      const { all } = await walk(hub, 'type=store.status_changed', 1);
      expect(all.map((n) => n.data.status)).to.deep.equal(['active', 'suspended']);
      const jobs = await walk(hub, 'type=job.finished');
      expect(jobs.all).to.have.length(1);
      const other = await hub.api.get(
        `/events?type=job.finished&cursor=${encodeURIComponent((await walk(hub)).cursor)}`,
      );
      expect(other.status, 'a cursor of the unfiltered feed').to.equal(422);
    });

    it('gives a cursor even when nothing is new, and the next change after it', async () => {
      const { all, cursor } = await walk(hub, '', 200);
      const empty = await hub.api.get(`/events?cursor=${encodeURIComponent(cursor)}`);
      expect(empty.body.data).to.deep.equal([]);
      expect(empty.body.next_cursor).to.be.a('string');
      expect((await t.admin.post(`/partners/${hub.partnerId}/live/stores/main/reinstate`, {})).status).to.equal(200);
      const next = await hub.api.get(`/events?cursor=${encodeURIComponent(empty.body.next_cursor)}`);
      expect(next.body.data.map(brief)).to.deep.equal([
        `store.status_changed ${JSON.stringify({ store_id: 'main', status: 'active' })}`,
        `product.state_changed ${JSON.stringify({ sku: 'a', store_id: 'main', state: 'accepted', reasons: [] })}`,
      ]);
      expect(all.length + 2).to.equal((await walk(hub, '', 200)).all.length);
    });

    it('refuses a cursor it did not issue, an unknown type and a limit outside 1..200 (422, every field)', async () => {
      const bad = await hub.api.get('/events?cursor=abc.def&type=product.nope&limit=0');
      expect(bad.status).to.equal(422);
      expect(bad.body.errors.map((e: { field: string }) => e.field).sort()).to.include.members(['limit', 'type']);
      expect((await hub.api.get('/events?cursor=abc.def')).status).to.equal(422);
      expect((await hub.api.get('/events?limit=201')).status).to.equal(422);
      const stranger = await t.partner({ type: 'hub' });
      const theirs = (await walk(stranger)).cursor;
      expect((await hub.api.get(`/events?cursor=${encodeURIComponent(theirs)}`)).status).to.equal(422);
    });

    it('needs the catalog scope, as the webhook routes do (403)', async () => {
      const clicksOnly = await t.key(hub.partnerId, 'live', ['clicks']);
      expect((await clicksOnly.api.get('/events')).status).to.equal(403);
      expect((await clicksOnly.api.get('/webhook')).status).to.equal(403);
      expect((await clicksOnly.api.put('/webhook', { url: 'https://hooks.partner.test/x' })).status).to.equal(403);
      expect((await clicksOnly.api.delete('/webhook')).status).to.equal(403);
    });

    it("never shows one partner's or environment's notifications to another", async () => {
      const stranger = await t.partner({ type: 'hub' });
      expect((await walk(stranger)).all).to.deep.equal([]);
      const testKey = await t.key(hub.partnerId, 'test');
      expect((await walk(testKey)).all).to.deep.equal([]);
      expect((await testKey.api.put('/stores/main', storeBody())).status).to.equal(200);
      expect((await t.approveStore(testKey, 'main', 'test')).status).to.equal(200);
      const inTest = (await walk(testKey)).all;
      expect(inTest.map((n) => n.type)).to.deep.equal(['store.status_changed', 'store.domain_approved']);
      const live = (await walk(hub, '', 200)).all.map((n) => n.id);
      expect(inTest.some((n) => live.includes(n.id))).to.equal(false);
      expect((await walk(stranger)).all).to.deep.equal([]);
    });

    it('walks the same feed, same ids, after a restart and after a rebuild of the projection', async () => {
      const before = (await walk(hub, '', 200)).all;
      await t.restart();
      hub = { ...hub, api: t.as(hub.key) };
      expect((await walk(hub, '', 200)).all).to.deep.equal(before);
      await rebuildProjection(t, 'notifications');
      expect((await walk(hub, '', 200)).all).to.deep.equal(before);
    });
  });
});
