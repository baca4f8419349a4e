/** The reactors feed the operator's metrics: cover-check outcomes and the depths of the cover and batch queues. */
import { expect } from 'chai';
import { productBody, startTestService, storeBody, type TestService } from '../support/service.js';
import { startImageServers, type ImageServers } from '../support/https-image-server.js';
import { coverTestEnv, type CoverEnv } from '../support/cover-env.js';
import { until } from '../support/deadline.js';

describe('metrics fed by the reactors', function () {
  this.timeout(30_000);
  let servers: ImageServers;
  let cover: CoverEnv;
  let t: TestService;

  before(async () => {
    servers = await startImageServers();
    cover = coverTestEnv(servers);
    t = await startTestService(cover.env);
    t.clock.set(new Date('2026-01-02T00:00:00Z'));
  });
  after(async () => {
    await t?.close();
    await servers?.close();
    cover?.cleanup();
  });

  const scrape = async (): Promise<string> => {
    const admin = t.service.admin.address() as { port: number };
    return (await fetch(`http://127.0.0.1:${admin.port}/metrics`)).text();
  };

  it('counts cover checks by outcome and reports the cover and batch queue depths', async () => {
    const hub = await t.partner({ type: 'hub' });
    expect((await hub.api.put('/stores/main', storeBody())).status).to.equal(200);
    const ok = productBody('main', { image_urls: [servers.url('cdn.shop.test', '/img/800x600.jpg')] });
    const small = productBody('main', { image_urls: [servers.url('cdn.shop.test', '/img/499x800.jpg')] });
    expect((await hub.api.put('/products/good', ok)).status).to.equal(200);
    expect((await hub.api.put('/products/small', small)).status).to.equal(200);
    let text = '';
    await until(
      async () => {
        text = await scrape();
        return (
          /pc_cover_checks_total\{outcome="ok"\} 1\b/.test(text) &&
          /pc_cover_checks_total\{outcome="image_too_small"\} 1\b/.test(text)
        );
      },
      15_000,
      'both outcomes counted',
    );
    expect(text).to.match(/pc_work_queue_depth\{queue="cover_check"\} \d+/);
    expect(text).to.match(/pc_work_queue_depth\{queue="batch_jobs"\} \d+/);
  });
});
