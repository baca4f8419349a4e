import { expect } from 'chai';
import { startTestService, type Partner, type TestService } from '../support/service.js';
import { streams } from '../../shared-schema/domain/streams.js';
import { conversionHash, normalizeConversion } from '../../command-api/deciders/order.js';
import type { ConversionInput } from '../../shared-schema/events/order.js';
import {
  DAY,
  HOUR,
  codes,
  iso,
  laterBody,
  paidBody,
  putProduct,
  registerStore,
  sandboxClick,
  type Item,
} from './commerce-support.js';

describe('commercial cycle over HTTP: POST /conversions and order reads', function () {
  let t: TestService;
  let p: Partner; // test environment
  let live: Partner; // same partner, live key
  let other: Partner; // another partner, test key
  const T0 = Date.parse('2026-05-01T12:00:00.000Z');
  /** The service's time at the start of every test (a test that moves the clock moves it for itself only). */
  const NOW = T0 + DAY;
  let click1: string; // store s1, at T0
  let click2: string; // store s2, at T0
  let otherClick: string; // the other partner's store s1, at T0
  let seq = 0;
  const next = (prefix: string) => `${prefix}-${++seq}`;

  /** sku-pct 2 × 1000 at 10 % (product rule); sku-inh 1 × 3000 (store default fixed 200); sku-ghost 1 × 500 (unknown: store default). */
  const ITEMS: Item[] = [
    { sku: 'sku-pct', quantity: 2, unit_price_cents: 1000, refunded_cents: 0 },
    { sku: 'sku-inh', quantity: 1, unit_price_cents: 3000, refunded_cents: 0 },
    { sku: 'sku-ghost', quantity: 1, unit_price_cents: 500, refunded_cents: 0 },
  ];
  const paid = (o: Partial<Parameters<typeof paidBody>[0]> = {}) =>
    paidBody({
      event_id: next('ev'),
      order_id: next('order'),
      store_id: 's1',
      click_id: click1,
      paid_at: iso(T0 + HOUR),
      items: ITEMS,
      ...o,
    });

  before(async () => {
    t = await startTestService();
    t.clock.set(new Date(T0));
    const created = await t.partner({ type: 'hub', env: 'test' });
    p = created;
    live = await t.key(p.partnerId, 'live');
    other = await t.partner({ type: 'hub', env: 'test', name: 'Outra' });
    await registerStore(p, 's1', { default_commission: { type: 'fixed', amount_cents: 200 } });
    await putProduct(t, p, 's1', 'sku-pct', { commission: { type: 'percentage', rate: 10 } });
    await putProduct(t, p, 's1', 'sku-inh');
    await putProduct(t, p, 's1', 'sku-big', { commission: { type: 'fixed', amount_cents: 9007199254740991 } });
    await registerStore(p, 's2');
    await putProduct(t, p, 's2', 'sku-none');
    await registerStore(other, 's1');
    await putProduct(t, other, 's1', 'sku-o');
    click1 = (await sandboxClick(p, 's1', 'sku-pct')).click_id;
    click2 = (await sandboxClick(p, 's2', 'sku-none')).click_id;
    otherClick = (await sandboxClick(other, 's1', 'sku-o')).click_id;
  });
  beforeEach(() => t.clock.set(new Date(NOW)));
  after(async () => t.close());

  describe('a first paid event', () => {
    it('creates the order with the commission snapshot of each line, and the order reads back', async () => {
      const body = paid();
      const r = await p.api.post('/conversions', body);
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      const now = iso(NOW);
      expect(r.body).to.deep.include({
        event_id: body.event_id,
        order_id: body.order_id,
        store_id: 's1',
        click_id: click1,
        status: 'paid',
        currency: 'BRL',
        paid_at: body.paid_at,
        occurred_at: body.paid_at,
        gross_cents: 5500,
        refunded_cents: 0,
        net_cents: 5500,
        expected_commission_cents: 600,
        known_expected_commission_cents: 600,
        commission_snapshot_at: now,
        recorded_at: now,
        updated_at: now,
        duplicate: false,
        ignored_stale: false,
      });
      expect(r.body.items).to.deep.equal([
        {
          sku: 'sku-ghost',
          quantity: 1,
          unit_price_cents: 500,
          refunded_cents: 0,
          commission: { type: 'fixed', amount_cents: 200 },
          commission_source: 'store',
          expected_commission_cents: 200,
        },
        {
          sku: 'sku-inh',
          quantity: 1,
          unit_price_cents: 3000,
          refunded_cents: 0,
          commission: { type: 'fixed', amount_cents: 200 },
          commission_source: 'store',
          expected_commission_cents: 200,
        },
        {
          sku: 'sku-pct',
          quantity: 2,
          unit_price_cents: 1000,
          refunded_cents: 0,
          commission: { type: 'percentage', rate: 10 },
          commission_source: 'product',
          expected_commission_cents: 200,
        },
      ]);
      const read = await p.api.get(`/conversions/${body.order_id}?store_id=s1`);
      expect(read.status).to.equal(200);
      const { duplicate: _d, ignored_stale: _s, ...view } = r.body;
      expect(read.body).to.deep.equal(view);
    });

    it('keeps the snapshot when the catalog changes later; a new order takes the new rule', async () => {
      const sku = next('sku-rule'); // a product of this test alone: its rule changes here
      await putProduct(t, p, 's1', sku, { commission: { type: 'percentage', rate: 10 } });
      const items = [{ sku, quantity: 2, unit_price_cents: 1000, refunded_cents: 0 }];
      const first = paid({ items });
      expect((await p.api.post('/conversions', first)).body.expected_commission_cents).to.equal(200);
      t.clock.advance(1000);
      const patched = await p.api.patch(`/products/${sku}`, {
        commission: { type: 'percentage', rate: 50 },
        updated_at: t.clock.now().toISOString(),
      });
      expect(patched.status).to.equal(200);
      const read = await p.api.get(`/conversions/${first.order_id}?store_id=s1`);
      expect(read.body.items[0].commission).to.deep.equal({ type: 'percentage', rate: 10 });
      expect(read.body.expected_commission_cents).to.equal(200);
      const later = await p.api.post('/conversions', paid({ items }));
      expect(later.body.expected_commission_cents).to.equal(1000);
    });

    it('gives null expected commission for a line with no rule at either level', async () => {
      const r = await p.api.post(
        '/conversions',
        paid({
          store_id: 's2',
          click_id: click2,
          items: [{ sku: 'sku-none', quantity: 1, unit_price_cents: 999, refunded_cents: 0 }],
        }),
      );
      expect(r.status).to.equal(200);
      expect(r.body).to.include({ expected_commission_cents: null, known_expected_commission_cents: 0 });
      expect(r.body.items[0]).to.include({
        commission: null,
        commission_source: null,
        expected_commission_cents: null,
      });
    });

    it('writes figures beyond 2^53 as bare JSON integers, exactly', async () => {
      const body = paid({ items: [{ sku: 'sku-big', quantity: 10, unit_price_cents: 1, refunded_cents: 0 }] });
      const raw = async (method: string, path: string, json?: unknown) => {
        const res = await fetch(t.api + path, {
          method,
          headers: { Authorization: `Bearer ${p.key}`, 'Content-Type': 'application/json' },
          ...(json ? { body: JSON.stringify(json) } : {}),
        });
        expect(res.headers.get('content-type')).to.contain('application/json');
        return res.text();
      };
      const posted = await raw('POST', '/conversions', body);
      expect(posted).to.contain(
        '"expected_commission_cents":90071992547409910,"known_expected_commission_cents":90071992547409910',
      );
      const read = await raw('GET', `/conversions/${body.order_id}?store_id=s1`);
      expect(read).to.contain('"known_expected_commission_cents":90071992547409910');
      expect(read).to.not.contain('"90071992547409910"');
    });
  });

  describe('validation and attribution', () => {
    it('lists every invalid field at once, schema and cross-field rules together, and writes nothing', async () => {
      const body = {
        ...paid(),
        currency: 'USD',
        occurred_at: iso(T0),
        click_id: 'ic_short',
        email: 'a@b.c',
        items: [
          { sku: 'a', quantity: 1, unit_price_cents: 100, refunded_cents: 5 },
          { sku: 'a', quantity: 0, unit_price_cents: 100, refunded_cents: 0 },
          { sku: 'b', quantity: 1, unit_price_cents: 100, refunded_cents: 0, name: 'x' },
        ],
      };
      const r = await p.api.post('/conversions', body);
      expect(r.status).to.equal(422);
      expect(codes(r.body)).to.deep.equal([
        'click_id:pattern',
        'currency:enum',
        'email:unknown_field',
        'items[0].refunded_cents:must_be_zero',
        'items[1].quantity:minimum',
        'items[1].sku:duplicate',
        'items[2].name:unknown_field',
        'occurred_at:must_equal_paid_at',
      ]);
      const valid = paid();
      const cross = await p.api.post('/conversions', {
        ...valid,
        occurred_at: iso(T0),
        items: [
          { sku: 'a', quantity: 1, unit_price_cents: 100, refunded_cents: 5 },
          { sku: 'a', quantity: 1, unit_price_cents: 100, refunded_cents: 0 },
        ],
      });
      expect(codes(cross.body)).to.deep.equal([
        'items[0].refunded_cents:must_be_zero',
        'items[1].sku:duplicate',
        'occurred_at:must_equal_paid_at',
      ]);
      expect((await p.api.get(`/conversions/${valid.order_id}?store_id=s1`)).status).to.equal(404);
    });

    it('accepts event dates up to five minutes ahead of the clock, not one millisecond more', async () => {
      const now = t.clock.now().getTime();
      const ok = await p.api.post('/conversions', paid({ paid_at: iso(now + 5 * 60_000) }));
      expect(ok.status, JSON.stringify(ok.body)).to.equal(200);
      const late = await p.api.post('/conversions', paid({ paid_at: iso(now + 5 * 60_000 + 1) }));
      expect(late.status).to.equal(422);
      expect(codes(late.body)).to.deep.equal(['occurred_at:future', 'paid_at:future']);
    });

    it('attributes a click up to 30 days before paid_at, to the second, and refuses one second more', async () => {
      const clickAt = Date.parse('2026-05-02T00:00:00.000Z');
      t.clock.set(new Date(clickAt));
      const c = (await sandboxClick(p, 's1', 'sku-inh')).click_id;
      t.clock.set(new Date(clickAt + 30 * DAY + HOUR));
      const edge = paid({ click_id: c, paid_at: iso(clickAt + 30 * DAY) });
      expect((await p.api.post('/conversions', edge)).status).to.equal(200);
      const beyond = paid({ click_id: c, paid_at: iso(clickAt + 30 * DAY + 1000) });
      const r = await p.api.post('/conversions', beyond);
      expect(r.status).to.equal(422);
      expect(codes(r.body)).to.deep.equal(['click_id:invalid_attribution']);
      expect(r.body.errors[0].reason).to.equal('click_too_old');
      expect(r.body.errors[0].message).to.match(/30 days before paid_at/);
      expect((await p.api.get(`/conversions/${beyond.order_id}?store_id=s1`)).status).to.equal(404);
      // a click after the payment does not count either
      const before = await p.api.post('/conversions', paid({ click_id: c, paid_at: iso(clickAt - 1000) }));
      expect(codes(before.body)).to.deep.equal(['click_id:invalid_attribution']);
      expect(before.body.errors[0].reason).to.equal('click_after_payment');
      // reported late: the receipt date does not limit attribution
      t.clock.set(new Date(clickAt + 60 * DAY));
      expect(
        (await p.api.post('/conversions', paid({ click_id: c, paid_at: iso(clickAt + 29 * DAY) }))).status,
      ).to.equal(200);
    });

    it("refuses a click of another store, another partner, another environment or unknown, naming the cause (another tenant's click is unknown)", async () => {
      for (const [who, body, reason] of [
        [p, paid({ click_id: click2 }), 'other_store'], // click of s2 for an order of s1
        [p, paid({ click_id: otherClick }), 'unknown_click'], // another partner's click
        [p, paid({ click_id: 'ic_AAAAAAAAAAAAAAAAAAAAAA' }), 'unknown_click'],
        [live, paid({ click_id: click1 }), 'unknown_click'], // a test click with the live key
      ] as const) {
        const r = await who.api.post('/conversions', body);
        expect(r.status, body.click_id).to.equal(422);
        expect(codes(r.body)).to.deep.equal(['click_id:invalid_attribution']);
        expect(r.body.errors[0].reason, body.click_id).to.equal(reason);
      }
      t.clock.advance(1);
      expect((await live.api.get('/conversions')).body.data).to.deep.equal([]);
    });
  });

  describe('repeats and deduplication', () => {
    it('answers a repeated event_id with the first receipt and duplicate true, forever, whatever the item order or offset', async () => {
      const body = paid();
      const first = await p.api.post('/conversions', body);
      const reordered = {
        ...body,
        items: [...body.items].reverse(),
        paid_at: '2026-05-01T10:00:00-03:00',
        occurred_at: '2026-05-01T10:00:00.000-03:00',
      };
      const again = await p.api.post('/conversions', reordered);
      expect(again.status).to.equal(200);
      expect(again.body).to.deep.equal({ ...first.body, duplicate: true });
      t.clock.advance(25 * HOUR);
      const late = await p.api.post('/conversions', body);
      expect(late.body).to.deep.equal({ ...first.body, duplicate: true });
    });

    it('replays an Idempotency-Key within 24 h as it was, and after 24 h deduplicates by event_id', async () => {
      const body = paid({ paid_at: t.clock.now().toISOString() });
      const headers = { 'Idempotency-Key': next('idem') };
      const first = await p.api.post('/conversions', body, headers);
      expect(first.body.duplicate).to.equal(false);
      const replay = await p.api.post('/conversions', body, headers);
      expect(replay.body).to.deep.equal(first.body);
      const mismatch = await p.api.post('/conversions', { ...body, event_id: next('ev') }, headers);
      expect(mismatch.status).to.equal(422);
      t.clock.advance(24 * HOUR + 1000);
      const after = await p.api.post('/conversions', body, headers);
      expect(after.status).to.equal(200);
      expect(after.body).to.deep.equal({ ...first.body, duplicate: true });
    });

    it('refuses an event_id used with another body, across the stores of a hub (409 event_conflict)', async () => {
      const body = paid({ paid_at: t.clock.now().toISOString() });
      await p.api.post('/conversions', body);
      const changed = await p.api.post('/conversions', {
        ...body,
        items: [{ ...body.items[0], quantity: 3 }, ...body.items.slice(1)],
      });
      expect(changed.status).to.equal(409);
      expect(codes(changed.body)).to.deep.equal(['event_id:event_conflict']);
      const elsewhere = await p.api.post(
        '/conversions',
        paid({ event_id: body.event_id, store_id: 's2', click_id: click2, paid_at: body.paid_at }),
      );
      expect(codes(elsewhere.body)).to.deep.equal(['event_id:event_conflict']);
      // the same event_id is free for another partner and for the other environment
      expect(
        (
          await other.api.post(
            '/conversions',
            paid({ event_id: body.event_id, click_id: otherClick, paid_at: body.paid_at }),
          )
        ).status,
      ).to.equal(200);
    });

    it('answers two concurrent sends of one new order once: one order, the other a repeat', async () => {
      const body = paid({ paid_at: t.clock.now().toISOString() });
      const twin = { ...body, event_id: next('ev') };
      const [a, b, c] = await Promise.all([
        p.api.post('/conversions', body),
        p.api.post('/conversions', twin),
        p.api.post('/conversions', body),
      ]);
      expect([a.status, b.status, c.status]).to.deep.equal([200, 200, 200]);
      expect([a.body.duplicate, c.body.duplicate].sort()).to.deep.equal([false, true]);
      const read = await p.api.get(`/conversions/${body.order_id}?store_id=s1`);
      expect(read.body.gross_cents).to.equal(5500);
      expect([body.event_id, twin.event_id]).to.include(read.body.event_id);
    });

    it('after a crash between the two appends, applies the same body when it comes again and refuses another', async () => {
      const body = paid({ paid_at: t.clock.now().toISOString() });
      const tenant = { partnerId: p.partnerId, env: 'test' as const };
      const hash = conversionHash(normalizeConversion(body as ConversionInput));
      const now = t.clock.now().toISOString();
      // what a crash right after the reservation leaves behind
      await t.service.events.appendToStream(
        streams.conversionEvent(tenant, body.event_id),
        [
          {
            type: 'ConversionEventReserved',
            data: {
              event_id: body.event_id,
              body_hash: hash,
              store_id: 's1',
              order_id: body.order_id,
              order_stream: streams.order(tenant, 's1', body.order_id),
              reserved_at: now,
            },
            metadata: { recorded_at: now },
          },
        ],
        'no_stream',
      );
      const other = await p.api.post('/conversions', { ...paid({ paid_at: body.paid_at }), event_id: body.event_id });
      expect(codes(other.body)).to.deep.equal(['event_id:event_conflict']);
      const again = await p.api.post('/conversions', body);
      expect(again.status).to.equal(200);
      expect(again.body).to.include({ duplicate: false, order_id: body.order_id, status: 'paid' });
      expect((await p.api.post('/conversions', body)).body.duplicate).to.equal(true);
    });
  });

  describe('the life of an order', () => {
    it('refunds cumulatively per line, refuses lowering, cancels, then refuses paid and refunded', async () => {
      const now = t.clock.now().getTime();
      const body = paid({ paid_at: iso(now - 3 * HOUR) });
      await p.api.post('/conversions', body);
      const r1 = await p.api.post(
        '/conversions',
        laterBody(body, {
          event_id: next('ev'),
          status: 'refunded',
          occurred_at: iso(now - 2 * HOUR),
          refunds: { 'sku-pct': 1000 },
        }),
      );
      expect(r1.status, JSON.stringify(r1.body)).to.equal(200);
      expect(r1.body).to.include({
        status: 'refunded',
        gross_cents: 5500,
        refunded_cents: 1000,
        net_cents: 4500,
        expected_commission_cents: 500,
      });
      const lowered = await p.api.post(
        '/conversions',
        laterBody(body, {
          event_id: next('ev'),
          status: 'refunded',
          occurred_at: iso(now - HOUR),
          refunds: { 'sku-pct': 500 },
        }),
      );
      expect(lowered.status).to.equal(409);
      expect(codes(lowered.body)).to.deep.equal(['items[0].refunded_cents:invalid_transition']);
      const stale = await p.api.post(
        '/conversions',
        laterBody(body, {
          event_id: next('ev'),
          status: 'refunded',
          occurred_at: iso(now - 2.5 * HOUR),
          refunds: { 'sku-pct': 2000 },
        }),
      );
      expect(stale.status).to.equal(200);
      expect(stale.body).to.include({ ignored_stale: true, refunded_cents: 1000, event_id: r1.body.event_id });
      const sameInstant = await p.api.post(
        '/conversions',
        laterBody(body, {
          event_id: next('ev'),
          status: 'refunded',
          occurred_at: iso(now - 2 * HOUR),
          refunds: { 'sku-pct': 2000 },
        }),
      );
      expect(sameInstant.status).to.equal(409);
      expect(codes(sameInstant.body)).to.deep.equal(['occurred_at:order_conflict']);
      const cancelled = await p.api.post(
        '/conversions',
        laterBody(body, { event_id: next('ev'), status: 'cancelled', occurred_at: iso(now - HOUR) }),
      );
      expect(cancelled.body).to.include({
        status: 'cancelled',
        refunded_cents: 5500,
        net_cents: 0,
        expected_commission_cents: 0,
        known_expected_commission_cents: 0,
      });
      const refundAfter = await p.api.post(
        '/conversions',
        laterBody(body, {
          event_id: next('ev'),
          status: 'refunded',
          occurred_at: iso(now),
          refunds: { 'sku-pct': 2000 },
        }),
      );
      expect(codes(refundAfter.body)).to.deep.equal(['status:invalid_transition']);
      const paidAgain = await p.api.post('/conversions', { ...body, event_id: next('ev') });
      expect(paidAgain.status).to.equal(409);
      expect(codes(paidAgain.body)).to.deep.equal(['status:invalid_transition']);
      const read = await p.api.get(`/conversions/${body.order_id}?store_id=s1`);
      expect(read.body).to.include({ status: 'cancelled', event_id: cancelled.body.event_id, net_cents: 0 });
    });

    it('needs the payment first (409 payment_required), then accepts the refund sent again', async () => {
      const body = paid({ paid_at: iso(t.clock.now().getTime() - HOUR) });
      const refund = laterBody(body, {
        event_id: next('ev'),
        status: 'refunded',
        occurred_at: t.clock.now().toISOString(),
        refunds: { 'sku-inh': 3000 },
      });
      const early = await p.api.post('/conversions', refund);
      expect(early.status).to.equal(409);
      expect(codes(early.body)).to.deep.equal(['status:payment_required']);
      expect((await p.api.post('/conversions', body)).status).to.equal(200);
      const again = await p.api.post('/conversions', refund);
      expect(again.status).to.equal(200);
      expect(again.body).to.include({
        status: 'refunded',
        refunded_cents: 3000,
        expected_commission_cents: 400,
        duplicate: false,
      });
    });

    it('refuses changed immutable fields (409 order_conflict on each), and a second paid changes nothing', async () => {
      const body = paid({ paid_at: iso(t.clock.now().getTime() - HOUR) });
      const first = await p.api.post('/conversions', body);
      const changed = await p.api.post('/conversions', {
        ...body,
        event_id: next('ev'),
        click_id: (await sandboxClick(p, 's1', 'sku-pct')).click_id,
        paid_at: iso(t.clock.now().getTime() - 2 * HOUR),
        occurred_at: iso(t.clock.now().getTime() - 2 * HOUR),
        items: body.items.map((i, n) => (n === 1 ? { ...i, unit_price_cents: 1 } : i)),
      });
      expect(changed.status).to.equal(409);
      expect(codes(changed.body)).to.deep.equal([
        'click_id:order_conflict',
        'items[1].unit_price_cents:order_conflict',
        'paid_at:order_conflict',
      ]);
      const second = await p.api.post('/conversions', { ...body, event_id: next('ev') });
      expect(second.status).to.equal(200);
      const { duplicate: _a, ...firstView } = first.body;
      const { duplicate: dup, ...secondView } = second.body;
      expect(dup).to.equal(false);
      expect(secondView).to.deep.equal(firstView);
    });
  });

  describe('GET /conversions and GET /conversions/{order_id}', () => {
    let q: Partner;
    const orders: { order_id: string; store_id: string; paid_at: string }[] = [];
    const base = Date.parse('2026-07-01T00:00:00.000Z');

    before(async () => {
      q = await t.partner({ type: 'hub', env: 'test', name: 'Lista pedidos' });
      t.clock.set(new Date(base - DAY));
      const clicks: Record<string, string> = {};
      for (const s of ['sb', 'sa']) {
        await registerStore(q, s);
        await putProduct(t, q, s, `${s}-sku`);
        clicks[s] = (await sandboxClick(q, s, `${s}-sku`)).click_id;
      }
      t.clock.set(new Date(base + 10 * DAY));
      const post = async (store: string, order: string, at: number) => {
        const body = paidBody({
          event_id: `e-${store}-${order}`,
          order_id: order,
          store_id: store,
          click_id: clicks[store],
          paid_at: iso(at),
          items: [{ sku: `${store}-sku`, quantity: 1, unit_price_cents: 100, refunded_cents: 0 }],
        });
        const r = await q.api.post('/conversions', body);
        expect(r.status, JSON.stringify(r.body)).to.equal(200);
        orders.push({ order_id: order, store_id: store, paid_at: body.paid_at });
      };
      await post('sb', 'o-2', base);
      await post('sa', 'o-9', base);
      await post('sa', 'o-1', base);
      await post('sa', 'o-3', base + DAY);
      await post('sb', 'o-1', base + 2 * DAY);
      await post('sa', 'o-0', base - 1); // just before the window below
    });
    beforeEach(() => t.clock.set(new Date(base + 10 * DAY)));

    it('lists by paid_at, store_id, order_id inside [since, until), filters by store, pages with the window kept', async () => {
      const window = `since=${iso(base)}&until=${encodeURIComponent('2026-07-02T21:00:00.000-03:00')}`;
      const all = await q.api.get(`/conversions?${window}`);
      expect(all.status).to.equal(200);
      const ids = (r: { body: { data: { store_id: string; order_id: string }[] } }) =>
        r.body.data.map((o) => `${o.store_id}/${o.order_id}`);
      expect(ids(all)).to.deep.equal(['sa/o-1', 'sa/o-9', 'sb/o-2', 'sa/o-3']);
      expect(all.body).to.include({ since: iso(base), until: iso(base + 2 * DAY), next_cursor: null });
      const sa = await q.api.get(`/conversions?${window}&store_id=sa`);
      expect(ids(sa)).to.deep.equal(['sa/o-1', 'sa/o-9', 'sa/o-3']);
      const pages: string[] = [];
      let r = await q.api.get(`/conversions?${window}&limit=1`);
      pages.push(...ids(r));
      while (r.body.next_cursor) {
        r = await q.api.get(`/conversions?limit=1&cursor=${r.body.next_cursor}`);
        expect(r.body.since).to.equal(iso(base));
        pages.push(...ids(r));
      }
      expect(pages).to.deep.equal(ids(all));
      const wide = await q.api.get(`/conversions?since=${iso(base)}&until=${iso(base + 31 * DAY + 1)}`);
      expect(codes(wide.body)).to.deep.equal(['until:window']);
    });

    it('defaults to the 30 days up to now and shows the current state of each order', async () => {
      const r = await q.api.get('/conversions');
      expect(r.body.until).to.equal(iso(base + 10 * DAY));
      expect(r.body.data).to.have.length(6);
      expect(r.body.data[0]).to.include({ order_id: 'o-0', status: 'paid', currency: 'BRL' });
      expect(r.body.data[0]).to.not.have.property('duplicate');
    });

    it('reads one order by store; store_id is required; other stores, partners and environments see 404', async () => {
      expect((await q.api.get('/conversions/o-1?store_id=sa')).body).to.include({
        store_id: 'sa',
        order_id: 'o-1',
        paid_at: iso(base),
      });
      expect((await q.api.get('/conversions/o-1?store_id=sb')).body).to.include({
        store_id: 'sb',
        paid_at: iso(base + 2 * DAY),
      });
      const missing = await q.api.get('/conversions/o-1');
      expect(missing.status).to.equal(422);
      expect(codes(missing.body)).to.deep.equal(['store_id:required']);
      expect((await q.api.get('/conversions/o-9?store_id=sb')).status).to.equal(404);
      expect((await p.api.get('/conversions/o-9?store_id=sa')).status).to.equal(404);
      const qLive = await t.key(q.partnerId, 'live');
      expect((await qLive.api.get('/conversions/o-9?store_id=sa')).status).to.equal(404);
      expect((await qLive.api.get('/conversions')).body.data).to.deep.equal([]);
      expect((await other.api.get(`/conversions?since=${iso(base)}&until=${iso(base + DAY)}`)).body.data).to.deep.equal(
        [],
      );
    });
  });

  describe('scopes', () => {
    it('refuses a key without the conversions scope', async () => {
      const limited = await t.key(p.partnerId, 'test', ['clicks']);
      expect((await limited.api.post('/conversions', paid())).status).to.equal(403);
      expect((await limited.api.get('/conversions')).status).to.equal(403);
    });
  });
});
