import { expect } from 'chai';
import { startTestService, type Partner, type TestService } from '../support/service.js';
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

const MINUTE = 60_000;
const ZERO = {
  clicks: 0,
  orders: 0,
  paid_orders: 0,
  refunded_orders: 0,
  cancelled_orders: 0,
  gross_cents: 0,
  refunded_cents: 0,
  net_cents: 0,
  unknown_commission_orders: 0,
  known_expected_commission_cents: 0,
  expected_commission_cents: 0,
};

describe('commercial cycle over HTTP: GET /reports/commission', function () {
  let t: TestService;
  let r: Partner;
  const B = Date.parse('2026-08-10T00:00:00.000Z');
  const clicks: Record<string, string> = {};
  const bodies: Record<string, ReturnType<typeof paidBody>> = {};

  const report = async (query: string, who: Partner = r) => {
    const res = await who.api.get(`/reports/commission?${query}`);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body;
  };
  const window = (since: number, until: number) => `since=${iso(since)}&until=${iso(until)}`;
  const clickAt = async (store: string, sku: string, at: number) => {
    t.clock.set(new Date(at));
    return (await sandboxClick(r, store, sku)).click_id;
  };
  const order = async (name: string, store: string, click: string, paidAt: number, items: Item[]) => {
    bodies[name] = paidBody({
      event_id: `${name}-paid`,
      order_id: name,
      store_id: store,
      click_id: click,
      paid_at: iso(paidAt),
      items,
    });
    const res = await r.api.post('/conversions', bodies[name]);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
  };
  const later = async (
    name: string,
    status: 'refunded' | 'cancelled',
    at: number,
    refunds?: Record<string, number>,
  ) => {
    const res = await r.api.post(
      '/conversions',
      laterBody(bodies[name], {
        event_id: `${name}-${status}-${at}`,
        status,
        occurred_at: iso(at),
        ...(refunds ? { refunds } : {}),
      }),
    );
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
  };

  before(async () => {
    t = await startTestService();
    t.clock.set(new Date(B - DAY));
    r = await t.partner({ type: 'hub', env: 'test', name: 'Relatorio' });
    await registerStore(r, 'r-a', { default_commission: { type: 'fixed', amount_cents: 300 } });
    await putProduct(t, r, 'r-a', 'x', { commission: { type: 'percentage', rate: 10 } });
    await putProduct(t, r, 'r-a', 'y');
    await registerStore(r, 'r-b');
    await putProduct(t, r, 'r-b', 'z');
    await registerStore(r, 'r-c');
    await putProduct(t, r, 'r-c', 'w');
    clicks.a0 = await clickAt('r-a', 'x', B - 1);
    clicks.a1 = await clickAt('r-a', 'x', B + HOUR + 30 * MINUTE);
    clicks.a2 = await clickAt('r-a', 'y', B + 2 * HOUR);
    clicks.b = await clickAt('r-b', 'z', B + 3 * HOUR);
    clicks.c = await clickAt('r-c', 'w', B + 4 * HOUR + 15 * MINUTE);
    clicks.a3 = await clickAt('r-a', 'x', B + 6 * HOUR - 1);
    t.clock.set(new Date(B + DAY));
    await order('A0', 'r-a', clicks.a0, B - 1, [{ sku: 'x', quantity: 1, unit_price_cents: 999, refunded_cents: 0 }]);
    await order('A1', 'r-a', clicks.a1, B + HOUR + 30 * MINUTE, [
      { sku: 'x', quantity: 2, unit_price_cents: 1000, refunded_cents: 0 },
    ]);
    await order('A2', 'r-a', clicks.a1, B + 2 * HOUR + 10 * MINUTE, [
      { sku: 'y', quantity: 1, unit_price_cents: 5000, refunded_cents: 0 },
    ]);
    await order('A3', 'r-a', clicks.a3, B + 6 * HOUR - 1, [
      { sku: 'x', quantity: 1, unit_price_cents: 1000, refunded_cents: 0 },
    ]);
    await order('B1', 'r-b', clicks.b, B + 3 * HOUR, [
      { sku: 'z', quantity: 1, unit_price_cents: 700, refunded_cents: 0 },
    ]);
    await order('B2', 'r-b', clicks.b, B + 3 * HOUR + 30 * MINUTE, [
      { sku: 'z', quantity: 1, unit_price_cents: 100, refunded_cents: 0 },
    ]);
  });
  after(async () => t.close());

  it('counts clicks and orders of an unaligned window to the millisecond, per store and in total', async () => {
    // [01:30, 05:59:59.999): partial hours at both ends, whole hours 02:00-05:00 in between
    const body = await report(window(B + HOUR + 30 * MINUTE, B + 6 * HOUR - 1));
    expect(body).to.include({
      since: iso(B + HOUR + 30 * MINUTE),
      until: iso(B + 6 * HOUR - 1),
      currency: 'BRL',
      environment: 'test',
      basis: 'paid_at_current_state',
      commission_is: 'expected_not_settled',
    });
    expect(body.stores).to.deep.equal([
      {
        store_id: 'r-a',
        ...ZERO,
        clicks: 2,
        orders: 2,
        paid_orders: 2,
        gross_cents: 7000,
        net_cents: 7000,
        known_expected_commission_cents: 500,
        expected_commission_cents: 500,
      },
      {
        store_id: 'r-b',
        ...ZERO,
        clicks: 1,
        orders: 2,
        paid_orders: 2,
        gross_cents: 800,
        net_cents: 800,
        unknown_commission_orders: 2,
        expected_commission_cents: null,
      },
      { store_id: 'r-c', ...ZERO, clicks: 1 },
    ]);
    expect(body.totals).to.deep.equal({
      ...ZERO,
      clicks: 4,
      orders: 4,
      paid_orders: 4,
      gross_cents: 7800,
      net_cents: 7800,
      unknown_commission_orders: 2,
      known_expected_commission_cents: 500,
      expected_commission_cents: null,
    });
    // one millisecond later at the start leaves out the click and the order of 01:30:00.000
    const tighter = await report(window(B + HOUR + 30 * MINUTE + 1, B + 6 * HOUR - 1));
    expect(tighter.stores[0]).to.include({ store_id: 'r-a', clicks: 1, orders: 1, gross_cents: 5000 });
    // one millisecond more at the end takes in the click and the order of 05:59:59.999
    const wider = await report(window(B + HOUR + 30 * MINUTE, B + 6 * HOUR));
    expect(wider.stores[0]).to.include({
      store_id: 'r-a',
      clicks: 3,
      orders: 3,
      gross_cents: 8000,
      known_expected_commission_cents: 600,
    });
  });

  it('follows later refunds and cancellations: orders by paid_at with their current state', async () => {
    const w = window(B, B + 6 * HOUR);
    const beforeRefunds = await report(w);
    expect(beforeRefunds.totals).to.include({ orders: 5, gross_cents: 8800, refunded_cents: 0, net_cents: 8800 });
    t.clock.set(new Date(B + 3 * DAY));
    await later('A2', 'refunded', B + 2 * DAY, { y: 2500 }); // fixed 300 reduced in proportion: 150
    await later('A3', 'cancelled', B + 2 * DAY);
    await later('B2', 'cancelled', B + 2 * DAY); // no rule, but no balance left: known 0, not unknown
    const body = await report(w);
    expect(body.stores).to.deep.equal([
      {
        store_id: 'r-a',
        ...ZERO,
        clicks: 3,
        orders: 3,
        paid_orders: 1,
        refunded_orders: 1,
        cancelled_orders: 1,
        gross_cents: 8000,
        refunded_cents: 3500,
        net_cents: 4500,
        known_expected_commission_cents: 350,
        expected_commission_cents: 350,
      },
      {
        store_id: 'r-b',
        ...ZERO,
        clicks: 1,
        orders: 2,
        paid_orders: 1,
        cancelled_orders: 1,
        gross_cents: 800,
        refunded_cents: 100,
        net_cents: 700,
        unknown_commission_orders: 1,
        expected_commission_cents: null,
      },
      { store_id: 'r-c', ...ZERO, clicks: 1 },
    ]);
    expect(body.totals).to.deep.equal({
      ...ZERO,
      clicks: 5,
      orders: 5,
      paid_orders: 2,
      refunded_orders: 1,
      cancelled_orders: 2,
      gross_cents: 8800,
      refunded_cents: 3600,
      net_cents: 5200,
      unknown_commission_orders: 1,
      known_expected_commission_cents: 350,
      expected_commission_cents: null,
    });
    // once the unknown order is refunded in full, the expectation is known again
    await later('B1', 'cancelled', B + 2 * DAY);
    const known = await report(w);
    expect(known.totals).to.include({
      unknown_commission_orders: 0,
      known_expected_commission_cents: 350,
      expected_commission_cents: 350,
      net_cents: 4500,
    });
  });

  it('filters by store, and reads a window inside one hour from the exact items', async () => {
    const onlyB = await report(`${window(B, B + 6 * HOUR)}&store_id=r-b`);
    expect(onlyB.stores.map((s: { store_id: string }) => s.store_id)).to.deep.equal(['r-b']);
    const { store_id: _s, ...rowFigures } = onlyB.stores[0];
    expect(onlyB.totals).to.deep.equal(rowFigures);
    const inside = await report(window(B + HOUR + 10 * MINUTE, B + HOUR + 40 * MINUTE));
    expect(inside.stores).to.deep.equal([
      {
        store_id: 'r-a',
        ...ZERO,
        clicks: 1,
        orders: 1,
        paid_orders: 1,
        gross_cents: 2000,
        net_cents: 2000,
        known_expected_commission_cents: 200,
        expected_commission_cents: 200,
      },
    ]);
    const startOfDay = await report(window(B - HOUR, B + HOUR));
    expect(startOfDay.totals).to.include({ clicks: 1, orders: 1, gross_cents: 999 });
  });

  it('answers zero totals and no stores without activity; other partners and environments see nothing', async () => {
    const empty = await report(window(B + 10 * DAY, B + 11 * DAY));
    expect(empty.totals).to.deep.equal(ZERO);
    expect(empty.stores).to.deep.equal([]);
    const live = await t.key(r.partnerId, 'live');
    const liveReport = await report(window(B, B + 6 * HOUR), live);
    expect(liveReport).to.include({ environment: 'live' });
    expect(liveReport.totals).to.deep.equal(ZERO);
    const other = await t.partner({ type: 'hub', env: 'test', name: 'Outro' });
    expect((await report(window(B, B + 6 * HOUR), other)).stores).to.deep.equal([]);
  });

  it('defaults to the 30 days up to now and refuses bad windows with 422', async () => {
    t.clock.set(new Date(B + 20 * DAY));
    const body = await report('');
    expect(body).to.include({ since: iso(B - 10 * DAY), until: iso(B + 20 * DAY) });
    expect(body.totals.orders).to.equal(6);
    const long = await r.api.get(`/reports/commission?${window(B, B + 31 * DAY + 1)}`);
    expect(long.status).to.equal(422);
    expect(codes(long.body)).to.deep.equal(['until:window']);
    const paging = await r.api.get('/reports/commission?limit=5&cursor=x');
    expect(codes(paging.body)).to.deep.equal(['cursor:unknown_field', 'limit:unknown_field']);
    t.clock.set(new Date(B + DAY));
  });

  it('adds commissions beyond 2^64 exactly and writes them as bare integers', async () => {
    await registerStore(r, 'r-d');
    await putProduct(t, r, 'r-d', 'big', { commission: { type: 'fixed', amount_cents: 9007199254740991 } });
    const c = await clickAt('r-d', 'big', B + 12 * HOUR);
    t.clock.set(new Date(B + DAY));
    const items = [{ sku: 'big', quantity: 10000, unit_price_cents: 1, refunded_cents: 0 }];
    await order('D1', 'r-d', c, B + 12 * HOUR, items);
    await order('D2', 'r-d', c, B + 12 * HOUR + 1, items);
    const res = await fetch(`${t.api}/reports/commission?${window(B + 12 * HOUR, B + 13 * HOUR)}&store_id=r-d`, {
      headers: { Authorization: `Bearer ${r.key}` },
    });
    const text = await res.text();
    // 2 × 10 000 × (2^53 − 1) = 180143985094819820000
    expect(text).to.contain(
      '"known_expected_commission_cents":180143985094819820000,"expected_commission_cents":180143985094819820000',
    );
    const aligned = await fetch(`${t.api}/reports/commission?${window(B + 6 * HOUR, B + 18 * HOUR)}&store_id=r-d`, {
      headers: { Authorization: `Bearer ${r.key}` },
    });
    expect(await aligned.text()).to.contain('"expected_commission_cents":180143985094819820000');
  });

  it('answers the same report after a restart (the projections and their checkpoints are on disk)', async () => {
    const w = window(B, B + DAY);
    const before = await report(w);
    await t.restart();
    r = { ...r, api: t.as(r.key) };
    expect(await report(w)).to.deep.equal(before);
  });

  it("GET /v1/insights/daily: the report by UTC day, zeros included; its totals are the report's for the same window and store", async () => {
    const fields = ['clicks', 'orders', 'net_cents', 'known_expected_commission_cents'] as const;
    const pick = (o: Record<string, unknown>) => Object.fromEntries(fields.map((f) => [f, o[f]]));
    const windows: [number, number, string?][] = [
      [B + HOUR + 30 * MINUTE, B + 6 * HOUR - 1],
      [B - DAY + 5, B + 2 * DAY + 7],
      [B - 3 * DAY, B + 20 * DAY, 'r-a'],
      [B - 1, B + HOUR, 'r-b'],
      [B - 31 * DAY + 1, B + 1],
    ];
    for (const [since, until, store] of windows) {
      const query = window(since, until) + (store ? `&store_id=${store}` : '');
      const res = await r.api.get(`/insights/daily?${query}`);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      const daily = res.body as {
        since: string;
        until: string;
        store_id: string | null;
        days: Record<string, unknown>[];
        totals: Record<string, unknown>;
      };
      expect(Object.keys(daily)).to.deep.equal(['since', 'until', 'store_id', 'days', 'totals']);
      expect([daily.since, daily.until, daily.store_id]).to.deep.equal([iso(since), iso(until), store ?? null]);
      // One entry per UTC date the window touches, oldest first.
      const dates: string[] = [];
      for (let d = Math.floor(since / DAY) * DAY; d < until; d += DAY) dates.push(iso(d).slice(0, 10));
      expect(daily.days.map((d) => d.date)).to.deep.equal(dates);
      for (const d of daily.days) expect(Object.keys(d)).to.deep.equal(['date', ...fields]);
      const sum = Object.fromEntries(fields.map((f) => [f, daily.days.reduce((a, d) => a + (d[f] as number), 0)]));
      expect(daily.totals, query).to.deep.equal(sum);
      expect(daily.totals, query).to.deep.equal(pick((await report(query)).totals as Record<string, unknown>));
    }
    // Each day on its own equals the report of that day.
    const res = await r.api.get(`/insights/daily?${window(B - DAY, B + DAY)}`);
    expect(res.body.days.map((d: Record<string, unknown>) => pick(d))).to.deep.equal([
      pick((await report(window(B - DAY, B))).totals),
      pick((await report(window(B, B + DAY))).totals),
    ]);
    expect(res.body.days[1].orders).to.be.greaterThan(0);
    // The report's window rules: default the last 30 days up to now, 422 beyond 31 days.
    const dflt = await r.api.get('/insights/daily');
    expect([dflt.body.since, dflt.body.until]).to.deep.equal([
      iso(t.clock.now().getTime() - 30 * DAY),
      iso(t.clock.now().getTime()),
    ]);
    for (const [query, code] of [
      [window(B, B + 32 * DAY), 'until:window'],
      [window(B, B), 'until:window'],
      ['bogus=1', 'bogus:unknown_field'],
    ]) {
      const bad = await r.api.get(`/insights/daily?${query}`);
      expect(bad.status, query).to.equal(422);
      expect(codes(bad.body), query).to.deep.equal([code]);
    }
  });
});
