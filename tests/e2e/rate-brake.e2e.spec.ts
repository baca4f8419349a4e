import { expect } from 'chai';
import { productBody, startTestService, storeBody, type Partner, type TestService } from '../support/service.js';
import { expectProblem, inChunks } from '../support/e2e.js';

const CHUNK = 50;

describe('rate brake (HTTP): 600 writes and 1200 reads per minute per key, on the injected clock', function () {
  let t: TestService;

  before(async () => {
    t = await startTestService();
  });
  after(async () => t.close());

  /** Starts each test at the beginning of a clock minute, so the whole test stands in one window. */
  let minute = 0;
  beforeEach(() => {
    minute += 10;
    t.clock.set(new Date(Date.UTC(2026, 0, 2, 0, minute, 0)));
  });

  const writes = (p: Partner, n: number, offset = 0) =>
    inChunks(n, CHUNK, (i) => p.api.delete(`/products/never-${offset + i}`));
  const reads = (p: Partner, n: number) => inChunks(n, CHUNK, () => p.api.get('/me'));

  it('answers the 601st write of a minute with 429, an integer Retry-After and a problem; reads go on', async () => {
    const p = await t.partner();
    const ok = await writes(p, 600);
    expect(
      ok.every((a) => a.status === 204),
      `statuses ${[...new Set(ok.map((a) => a.status))].join()}`,
    ).to.equal(true);
    t.clock.advance(15_500);
    const refused = await p.api.delete('/products/one-more');
    expectProblem(refused, 429);
    const retry = refused.headers.get('retry-after');
    expect(retry).to.match(/^\d+$/);
    expect(Number(retry)).to.equal(45); // 44.5 s left in the window, rounded up
    // Reads have their own budget; another key of the same partner has its own too.
    expect((await p.api.get('/me')).status).to.equal(200);
    const second = await t.key(p.partnerId, 'live');
    expect((await second.api.delete('/products/x')).status).to.equal(204);
    // The refusal writes nothing and is itself counted: still refused until the window ends.
    const stillRefused = await p.api.put('/stores/s', storeBody());
    expect(stillRefused.status).to.equal(429);
    expect((await p.api.get('/stores/s')).status).to.equal(404);
  });

  it('counts reads separately, up to 1200 a minute; writes are still allowed after the reads run out', async () => {
    const p = await t.partner();
    const ok = await reads(p, 1200);
    expect(ok.every((a) => a.status === 200)).to.equal(true);
    const refused = await p.api.get('/stores');
    expectProblem(refused, 429);
    expect(Number(refused.headers.get('retry-after'))).to.be.at.least(1);
    expect((await p.api.put('/stores/s', storeBody())).status).to.equal(200);
  });

  it('follows the manual clock: the next minute allows writes again; Retry-After is at least 1 at the very end', async () => {
    const p = await t.partner();
    await writes(p, 600);
    t.clock.advance(59_999);
    const last = await p.api.delete('/products/late');
    expect(last.status).to.equal(429);
    expect(last.headers.get('retry-after')).to.equal('1');
    t.clock.advance(1);
    expect((await p.api.delete('/products/next-minute')).status).to.equal(204);
  });

  it('counts a batch as one write, whatever its size', async () => {
    const p = await t.partner();
    await writes(p, 599);
    const items = Array.from({ length: 20 }, (_, i) => ({ op: 'delete', sku: `b-${i}` }));
    const batch = await p.api.post('/products/batch', { items });
    expect(batch.status, JSON.stringify(batch.body)).to.not.equal(429); // the 600th write
    expect((await p.api.delete('/products/after-batch')).status).to.equal(429); // the 601st
  });

  it('counts one write per request, whatever the body holds', async () => {
    const p = await t.partner();
    expect((await p.api.put('/stores/s', storeBody())).status).to.equal(200);
    const big = productBody('s', {
      attributes: Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, 'v'.repeat(200)])),
    });
    expect((await p.api.put('/products/big', big)).status).to.equal(200);
    await writes(p, 598);
    expect((await p.api.delete('/products/x')).status).to.equal(429);
  });

  it('refuses before the route is known: 401 for a bad key (never 429), 429 before 404 / 405', async () => {
    const p = await t.partner();
    await writes(p, 600);
    expect((await t.as('ik_live_nope').delete('/products/x')).status).to.equal(401);
    expect((await t.as('').put('/coupons/x', {})).status).to.equal(401);
    expect((await p.api.put('/coupons/x', {})).status).to.equal(429);
    expect((await p.api.post('/me', {})).status).to.equal(429);
    expect((await p.api.post('/nowhere', {})).status).to.equal(429);
  });
});
