/**
 * Bursts of legitimate writes on one stream: no 5xx, and the final state is the newest event (orders) or the
 * greatest `updated_at` (products). In the topology this file runs against two command-api replicas behind nginx,
 * so the bursts race across processes too (the per-stream lock only orders writers of one process).
 */
import { expect } from 'chai';
import { startTestService, type Partner, type TestService } from '../support/service.js';
import {
  HOUR,
  iso,
  laterBody,
  paidBody,
  putProduct,
  registerStore,
  sandboxClick,
  type Item,
} from './commerce-support.js';

const BURST = 50;

describe('bursts of concurrent writes on one stream', function () {
  let t: TestService;
  let p: Partner;
  const T0 = Date.parse('2026-06-01T12:00:00.000Z');

  before(async () => {
    t = await startTestService();
    t.clock.set(new Date(T0));
    p = await t.partner({ type: 'hub', env: 'test' });
    await registerStore(p, 'burst-store');
    await putProduct(t, p, 'burst-store', 'burst-sku');
  });
  after(async () => t.close());

  it(`${BURST} distinct refund events of one order sent at once: no 5xx, the newest event stands`, async () => {
    const click = await sandboxClick(p, 'burst-store', 'burst-sku');
    const items: Item[] = [{ sku: 'burst-sku', quantity: 1, unit_price_cents: 100_000, refunded_cents: 0 }];
    const paid = paidBody({
      event_id: 'burst-paid',
      order_id: 'burst-order',
      store_id: 'burst-store',
      click_id: click.click_id,
      paid_at: iso(T0),
      items,
    });
    t.clock.set(new Date(T0 + HOUR));
    const first = await p.api.post('/conversions', paid);
    expect(first.status, JSON.stringify(first.body)).to.equal(200);

    // Refund k happens k seconds after payment and refunds k × 100 cents in all: each newer event refunds more.
    const refunds = Array.from({ length: BURST }, (_, i) =>
      laterBody(paid, {
        event_id: `burst-refund-${i + 1}`,
        status: 'refunded',
        occurred_at: iso(T0 + (i + 1) * 1000),
        refunds: { 'burst-sku': (i + 1) * 100 },
      }),
    );
    const answers = await Promise.all(refunds.map((body) => p.api.post('/conversions', body)));
    const failures = answers.filter((a) => a.status !== 200).map((a) => `${a.status} ${JSON.stringify(a.body)}`);
    expect(failures, failures.join('\n')).to.deep.equal([]);
    // Each answer is either applied or older than one applied before it, never both.
    for (const a of answers) expect(a.body.ignored_stale === true || a.body.duplicate === false).to.equal(true);

    const order = await p.api.get('/conversions/burst-order?store_id=burst-store');
    expect(order.status).to.equal(200);
    expect(order.body.event_id).to.equal(`burst-refund-${BURST}`);
    expect(order.body.occurred_at).to.equal(iso(T0 + BURST * 1000));
    expect(order.body.refunded_cents).to.equal(BURST * 100);
    expect(order.body.net_cents).to.equal(100_000 - BURST * 100);
  });

  it(`${BURST} PUTs of one SKU with distinct updated_at sent at once: no 5xx, the greatest updated_at stands`, async () => {
    const base = t.clock.now().getTime();
    const sends = Array.from({ length: BURST }, (_, i) => ({ price: 1000 + i, at: iso(base - (BURST - i) * 1000) }));
    // Shuffled, so that arrival order and updated_at order differ.
    for (let i = sends.length - 1; i > 0; i--) {
      const j = (i * 7919) % (i + 1);
      [sends[i], sends[j]] = [sends[j], sends[i]];
    }
    const answers = await Promise.all(
      sends.map((s) =>
        p.api.put('/products/hot-sku', {
          store_id: 'burst-store',
          title: 'Produto disputado',
          product_url: 'https://shop.test/p/hot-sku',
          image_urls: ['https://shop.test/hot-sku.jpg'],
          price_cents: s.price,
          available: true,
          updated_at: s.at,
        }),
      ),
    );
    const failures = answers.filter((a) => a.status !== 200).map((a) => `${a.status} ${JSON.stringify(a.body)}`);
    expect(failures, failures.join('\n')).to.deep.equal([]);

    // ProductStatus carries no price; a 100 % commission rule set at the newest updated_at (a tie is applied)
    // makes the expected commission equal the price in force.
    const newest = sends.reduce((a, b) => (a.at > b.at ? a : b));
    const patch = await p.api.patch('/products/hot-sku', {
      commission: { type: 'percentage', rate: 100 },
      updated_at: newest.at,
    });
    expect(patch.status, JSON.stringify(patch.body)).to.equal(200);
    expect(patch.body.ignored_stale ?? false).to.equal(false);
    expect(patch.body.expected_commission_cents).to.equal(newest.price);
  });
});
