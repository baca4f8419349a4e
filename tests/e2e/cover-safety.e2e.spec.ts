/**
 * The cover check's two promises that matter most, end to end: with COVER_FETCH_ALLOW_PRIVATE off it never connects
 * to a loopback address however the name is mapped; and a restart in the middle of pending checks leaves no product
 * unchecked and checks none twice.
 */
import http from 'node:http';
import { expect } from 'chai';
import { productBody, startTestService, storeBody, type Partner, type TestService } from '../support/service.js';
import { startImageServers, type ImageServers } from '../support/https-image-server.js';
import { coverTestEnv, type CoverEnv } from '../support/cover-env.js';
import { until } from '../support/deadline.js';
import { portOf } from '../../infra/http/gateway.js';

/** Whether `url` answers 200 now, on a connection of its own (never a kept-alive one of a server that is closing). */
function answers(url: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = http.get(url, { agent: false }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('error', () => resolve(false));
  });
}

describe('cover check safety (e2e)', function () {
  this.timeout(90_000);
  let servers: ImageServers;
  before(async () => {
    servers = await startImageServers();
  });
  after(async () => servers?.close());

  async function serviceWith(cover: CoverEnv): Promise<{ t: TestService; hub: Partner }> {
    const t = await startTestService(cover.env);
    t.clock.set(new Date('2026-01-02T00:00:00Z'));
    const hub = await t.partner({ type: 'hub' });
    expect((await hub.api.put('/stores/s', storeBody())).status).to.equal(200);
    expect((await t.approveStore(hub, 's')).status).to.equal(200);
    return { t, hub };
  }

  const checksOf = async (t: TestService, hub: Partner, sku: string) => {
    const r = await t.admin.get(`/streams/${encodeURIComponent(`product-live:${hub.partnerId}:${sku}`)}`);
    return (r.body.events as { type: string }[]).filter((e) => e.type === 'CoverChecked').length;
  };

  it('with private addresses refused, rejects covers on names mapped to 127.0.0.1, 127.0.0.2, ::1 and ::ffff:127.0.0.1 without connecting', async () => {
    const hostMap = {
      'v4.shop.test': '127.0.0.1',
      'alt.shop.test': '127.0.0.2',
      'v6.shop.test': '::1',
      'mapped.shop.test': '::ffff:127.0.0.1',
    };
    const cover = coverTestEnv(servers, { allowPrivate: false, hostMap });
    const { t, hub } = await serviceWith(cover);
    try {
      const listeners = [servers.main, servers.alt, servers.v6, servers.evil, servers.stall].filter((l) => l !== null);
      const before = listeners.map((l) => l.connections());
      const covers: Record<string, string> = {
        v4: servers.url('v4.shop.test', '/img/800x600.jpg'),
        alt: servers.url('alt.shop.test', '/img/800x600.jpg', servers.alt ?? servers.main),
        v6: servers.url('v6.shop.test', '/img/800x600.jpg', servers.v6 ?? servers.main),
        mapped: servers.url('mapped.shop.test', '/img/800x600.jpg'),
      };
      for (const [sku, url] of Object.entries(covers)) {
        const sent = await hub.api.put(`/products/${sku}`, productBody('s', { image_urls: [url] }));
        expect(sent.status, JSON.stringify(sent.body)).to.equal(200);
      }
      for (const sku of Object.keys(covers)) {
        await until(
          async () => (await hub.api.get(`/products/${sku}`)).body.state !== 'pending',
          30_000,
          `${sku} checked`,
          100,
        );
        const got = (await hub.api.get(`/products/${sku}`)).body;
        expect(got.state, sku).to.equal('rejected');
        expect(
          got.reasons.map((r: { code: string }) => r.code),
          sku,
        ).to.deep.equal(['image_unreachable']);
      }
      expect(
        listeners.map((l) => l.connections()),
        'no connection reached a local listener',
      ).to.deep.equal(before);
    } finally {
      await t.close();
      cover.cleanup();
    }
  });

  it('after a restart in the middle of pending checks, checks every pending product, none twice', async () => {
    const cover = coverTestEnv(servers, { extra: { COVER_CHECK_CONCURRENCY: '2' } });
    const { t, hub } = await serviceWith(cover);
    // Every cover waits at a gate of the image server until the test lets it through: which checks are done, in
    // flight or not begun at the restart is arranged, not left to how fast the machine happens to be.
    const gate = servers.gate('restart');
    const path = '/gate/restart/img/800x600.jpg';
    const skus = Array.from({ length: 16 }, (_, i) => `r-${i}`);
    const checked = async () =>
      (await Promise.all(skus.map((sku) => checksOf(t, hub, sku)))).filter((n) => n > 0).length;
    try {
      for (const sku of skus) {
        expect(
          (
            await hub.api.put(
              `/products/${sku}`,
              productBody('s', { image_urls: [servers.url('cdn.shop.test', `${path}?${sku}`)] }),
            )
          ).status,
        ).to.equal(200);
      }
      // COVER_CHECK_CONCURRENCY=2: two checks reach the gate; let them through, and the next two reach it.
      await until(() => gate.held() === 2, 20_000, 'two checks at the gate');
      gate.release();
      await until(
        async () => (await checked()) === 2 && gate.held() === 2,
        20_000,
        'two products checked and the next two checks at the gate',
        25,
      );
      expect(servers.requests(path), 'two covers fetched, two being fetched, twelve not yet').to.equal(4);

      // The restart. The two checks stay in flight until the process that runs them begins to shut down (its admin
      // API stops answering: it cannot answer again before those checks end, as its stop waits for them); then the
      // gate opens, and the checks in hand finish as a graceful stop lets them.
      const live = `http://127.0.0.1:${portOf(t.service.admin)}/admin/v1/health/live`;
      const restarted = t.restart();
      let atShutdown: { held: number; fetched: number } | undefined;
      try {
        await until(async () => !(await answers(live)), 30_000, 'the checking process beginning to shut down', 10);
        atShutdown = { held: gate.held(), fetched: servers.requests(path) };
      } finally {
        gate.open();
      }
      await restarted;
      expect(atShutdown, 'at the restart: two checks in flight, twelve covers never fetched').to.deep.equal({
        held: 2,
        fetched: 4,
      });

      await until(async () => (await checked()) === skus.length, 30_000, 'every product checked after the restart', 25);
      const accepted = async () =>
        (await t.as(hub.key).get('/products?state=accepted&limit=200')).body.data.length as number;
      await until(
        async () => (await accepted()) === skus.length,
        30_000,
        'every product accepted in the read model',
        50,
      );
      for (const sku of skus) expect(await checksOf(t, hub, sku), sku).to.equal(1);
      expect(servers.requests(path), 'no cover fetched twice').to.equal(skus.length);
    } finally {
      gate.open();
      await t.close();
      cover.cleanup();
    }
  });
});
