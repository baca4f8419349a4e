/**
 * The embedded service's live projections on a thread of their own (PROJECTION_THREAD=on, the default) and on the
 * event loop (off): the same observable behaviour. A write is read back at once (read-your-writes waits for the
 * thread's committed position); an event the products projector cannot apply is parked with the time of the
 * service's manual clock and logged through the service's logger; a retry through the operator API (which holds
 * the projections between two units) fails again and is stamped; writes are projected after it.
 */
import pino from 'pino';
import { expect } from 'chai';
import { portOf } from '../../infra/http/gateway.js';
import { productBody, startTestService, storeBody, type TestService } from '../support/service.js';

for (const mode of ['on', 'off'] as const) {
  describe(`live projections with PROJECTION_THREAD=${mode}`, function () {
    this.timeout(30_000);
    let t: TestService;
    const lines: { level: number; msg: string; parked_id?: string; err?: { message: string } }[] = [];

    before(async function () {
      if (process.env.TOPOLOGY === 'multi') this.skip();
      const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
      t = await startTestService({ PROJECTION_THREAD: mode }, undefined, { log });
      t.clock.set(new Date('2026-01-02T00:00:00Z'));
    });
    after(async () => t?.close());

    it('projects, parks with the service clock and logger, retries between two units, and goes on', async () => {
      const hub = await t.partner({ type: 'hub' });
      expect((await hub.api.put('/stores/s', storeBody())).status).to.equal(200);
      expect((await hub.api.put('/products/sku-1', productBody('s'))).status).to.equal(200);
      expect((await hub.api.get('/products/sku-1')).status).to.equal(200);

      // An event no version of the service writes: the products projector throws on it.
      const bad = await t.service.events.appendToStream(
        `product-live:${hub.partnerId}:sku-bad`,
        [{ type: 'ProductUpserted', data: {}, metadata: { recorded_at: t.clock.now().toISOString() } }],
        'any',
      );
      expect(await t.service.runner.waitFor(bad.position, 20_000)).to.equal(true);
      const id = `products:${bad.position}`;
      const listed = await t.admin.get('/projections/parked?projection=products');
      expect(listed.body.parked.map((p: { id: string; parked_at: string }) => [p.id, p.parked_at])).to.deep.equal([
        [id, '2026-01-02T00:00:00.000Z'],
      ]);
      const logged = lines.find((l) => l.parked_id === id);
      expect(logged?.msg).to.match(/^projection parked an event/);
      expect(logged?.err?.message).to.be.a('string').and.not.equal('');

      t.clock.advance(1000);
      const retry = await t.admin.post('/projections/parked/retry', { ids: [id] });
      expect(retry.status).to.equal(200);
      expect(
        retry.body.still_failing.map((p: { id: string; retries: number; last_retry_at: string }) => [
          p.id,
          p.retries,
          p.last_retry_at,
        ]),
      ).to.deep.equal([[id, 1, '2026-01-02T00:00:01.000Z']]);

      expect((await hub.api.put('/products/sku-2', productBody('s'))).status).to.equal(200);
      expect((await hub.api.get('/products/sku-2')).status).to.equal(200);
      const r = await fetch(`http://127.0.0.1:${portOf(t.service.admin)}/admin/v1/health/ready`);
      const checks = ((await r.json()) as { checks: { projections: Record<string, string> } }).checks;
      expect(checks.projections.products).to.equal('degraded: 1 parked event(s)');
    });
  });
}

describe('the projection thread woken by the appends of its process', function () {
  this.timeout(60_000);
  let t: TestService;

  before(async function () {
    if (process.env.TOPOLOGY === 'multi') this.skip();
    // Its own look for commits slowed to ten minutes: only the wake-ups of the appends can move it in this test.
    t = await startTestService({ PROJECTION_THREAD: 'on' }, undefined, { projectionThreadPollMs: 600_000 });
  });
  after(async () => t?.close());

  it('reads back every write of a burst (commits coalesced into fewer wake-ups lose none)', async () => {
    const hub = await t.partner({ type: 'hub' });
    expect((await hub.api.put('/stores/s', storeBody())).status).to.equal(200);
    for (let round = 0; round < 3; round++) {
      const skus = Array.from({ length: 40 }, (_, i) => `sku-${round}-${i}`);
      const puts = await Promise.all(skus.map((sku) => hub.api.put(`/products/${sku}`, productBody('s'))));
      expect(puts.map((r) => r.status)).to.deep.equal(skus.map(() => 200));
      const gets = await Promise.all(skus.map((sku) => hub.api.get(`/products/${sku}`)));
      expect(gets.map((r) => r.status)).to.deep.equal(skus.map(() => 200));
    }
  });
});
