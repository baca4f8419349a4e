/**
 * Sentences of LEDGER.md that ledger.e2e.spec.ts leaves unasserted (the traceability table is
 * docs/spec-coverage/ledger.md): movements of one instant in recording order whatever their ids, an applied event
 * that changes nothing is still a movement, the window's bounds and the GET /clicks window rules on the statement,
 * the default and largest page, a period closed from the instant its end is reached, the closings' key scope and
 * environment, the closings list's pages and chain over many periods, and the rate brake on every ledger route.
 */
import { expect } from 'chai';
import { startTestService, type Partner, type TestService } from '../support/service.js';
import { expectInvalid, expectProblem } from '../support/e2e.js';
import { DAY, HOUR, iso, laterBody, paidBody, putProduct, registerStore, sandboxClick } from './commerce-support.js';

const MIN = 60_000;
/** sku-pct 2 × 1000 at 10 %: net 2000, commission 200. */
const ITEMS = [{ sku: 'sku-pct', quantity: 2, unit_price_cents: 1000, refunded_cents: 0 }];
const HEADER =
  'recorded_at,occurred_at,store_id,order_id,event_id,type,net_delta_cents,known_expected_commission_delta_cents,expected_commission_delta_cents,net_balance_cents,known_expected_commission_balance_cents';

type Movement = Record<string, unknown>;
const brief = (m: Movement) => [
  m.event_id,
  m.type,
  m.net_delta_cents,
  m.known_expected_commission_delta_cents,
  m.expected_commission_delta_cents,
  m.net_balance_cents,
  m.known_expected_commission_balance_cents,
];

async function setUp(t: TestService, name: string): Promise<Partner> {
  const p = await t.partner({ type: 'hub', env: 'test', name });
  await registerStore(p, 's1');
  await putProduct(t, p, 's1', 'sku-pct', { commission: { type: 'percentage', rate: 10 } });
  return p;
}

/** A paid order at the clock's now, on the given click (a fresh one when none). */
async function pay(t: TestService, p: Partner, orderId: string, clickId?: string) {
  const click = clickId ?? (await sandboxClick(p, 's1', 'sku-pct')).click_id;
  const body = paidBody({
    event_id: `${orderId}-paid`,
    order_id: orderId,
    store_id: 's1',
    click_id: click,
    paid_at: t.clock.now().toISOString(),
    items: ITEMS,
  });
  const r = await p.api.post('/conversions', body);
  expect(r.status, JSON.stringify(r.body)).to.equal(200);
  return body;
}

async function send(p: Partner, body: unknown): Promise<void> {
  const r = await p.api.post('/conversions', body);
  expect(r.status, JSON.stringify(r.body)).to.equal(200);
  expect(r.body).to.not.include({ duplicate: true });
  expect(r.body).to.not.include({ ignored_stale: true });
}

async function statement(p: Partner, query: string): Promise<Record<string, any>> {
  const r = await p.api.get(`/statement?${query}`);
  expect(r.status, JSON.stringify(r.body)).to.equal(200);
  return r.body;
}

const download = async (t: TestService, key: string, period: string) => {
  const r = await fetch(`${t.api}/closings/${period}/movements.csv`, { headers: { Authorization: `Bearer ${key}` } });
  return { status: r.status, text: await r.text() };
};

describe('ledger rules the main ledger suite leaves unasserted', function () {
  let t: TestService;
  /** Its only movement in January 2020: 75 closed periods by April 2026. */
  let old: Partner;
  /** Four movements in March 2026, two of them at the same instant. */
  let p: Partner;
  /** 51 paid orders at one instant. */
  let many: Partner;
  const OLD = Date.parse('2020-01-15T12:00:00.000Z');
  const T0 = Date.parse('2026-03-10T12:00:00.000Z');
  /** The end of March 2026 in Brasília: 00:00 on 1 April, UTC−03:00. */
  const APR = Date.parse('2026-04-01T03:00:00.000Z');
  const NOW = T0 + HOUR;

  before(async () => {
    t = await startTestService();
    t.clock.set(new Date(OLD));
    old = await setUp(t, 'Antiga');
    await pay(t, old, 'O1');
    t.clock.set(new Date(T0));
    p = await setUp(t, 'Mesma hora');
    // Two orders paid at one instant, the one recorded first with the id that sorts last.
    const zz = await pay(t, p, 'zz');
    const aa = await pay(t, p, 'aa');
    t.clock.set(new Date(T0 + MIN));
    // Applied (a later instant, refunds not lower), yet it changes no figure.
    await send(p, laterBody(zz, { event_id: 'zz-r0', status: 'refunded', occurred_at: iso(T0 + MIN) }));
    t.clock.set(new Date(T0 + 2 * MIN));
    // Its date sent in Brasília's offset, without milliseconds.
    await send(p, {
      ...laterBody(aa, { event_id: 'aa-r', status: 'refunded', occurred_at: iso(T0), refunds: { 'sku-pct': 500 } }),
      occurred_at: '2026-03-10T09:02:00-03:00',
    });
    t.clock.set(new Date(NOW));
    many = await setUp(t, 'Muitos');
    const click = (await sandboxClick(many, 's1', 'sku-pct')).click_id;
    for (let i = 0; i < 51; i++) await pay(t, many, `m${String(i).padStart(2, '0')}`, click);
  });
  after(async () => t?.close());

  afterEach(() => t.clock.set(new Date(NOW)));

  describe('GET /statement', () => {
    const W = `since=${iso(T0)}&until=${iso(T0 + HOUR)}`;

    it('orders the movements of one instant by recording order, whatever their ids, on every page and in the CSV', async () => {
      const s = await statement(p, W);
      expect(s.data.map((m: Movement) => [m.event_id, m.recorded_at])).to.deep.equal([
        ['zz-paid', iso(T0)],
        ['aa-paid', iso(T0)],
        ['zz-r0', iso(T0 + MIN)],
        ['aa-r', iso(T0 + 2 * MIN)],
      ]);
      const walked: Movement[] = [];
      let q = `${W}&limit=1`;
      for (;;) {
        const page = await statement(p, q);
        walked.push(...(page.data as Movement[]));
        if (page.next_cursor === null) break;
        q = `limit=1&cursor=${encodeURIComponent(page.next_cursor as string)}`;
      }
      expect(walked).to.deep.equal(s.data);
      t.clock.set(new Date(APR));
      const csv = await download(t, p.key, '2026-03');
      expect(csv.status).to.equal(200);
      expect(
        csv.text
          .trimEnd()
          .split('\r\n')
          .slice(1)
          .map((line) => line.split(',')[4]),
      ).to.deep.equal(['zz-paid', 'aa-paid', 'zz-r0', 'aa-r']);
    });

    it('books an applied event that changes no figure as a movement with zero deltas', async () => {
      const s = await statement(p, W);
      expect(s.data.map(brief)).to.deep.equal([
        ['zz-paid', 'paid', 2000, 200, 200, 2000, 200],
        ['aa-paid', 'paid', 2000, 200, 200, 4000, 400],
        ['zz-r0', 'refunded', 0, 0, 0, 4000, 400],
        ['aa-r', 'refunded', -500, -50, -50, 3500, 350],
      ]);
      expect((await p.api.get('/conversions/zz?store_id=s1')).body).to.include({ event_id: 'zz-r0' });
    });

    it('writes dates in UTC with milliseconds whatever offset the partner sent', async () => {
      const [aaR] = (await statement(p, W)).data.filter((m: Movement) => m.event_id === 'aa-r') as Movement[];
      expect(Date.parse(aaR.occurred_at as string)).to.equal(T0 + 2 * MIN);
      t.clock.set(new Date(APR));
      const csv = await download(t, p.key, '2026-03');
      expect(csv.text).to.contain(
        `\r\n${iso(T0 + 2 * MIN)},${iso(T0 + 2 * MIN)},s1,aa,aa-r,refunded,-500,-50,-50,3500,350\r\n`,
      );
    });

    it('takes since inclusive and until exclusive, on recorded_at', async () => {
      const at = (since: number, until: number) => statement(p, `since=${iso(since)}&until=${iso(until)}`);
      const first = await at(T0, T0 + MIN);
      expect(first.data.map((m: Movement) => m.event_id)).to.deep.equal(['zz-paid', 'aa-paid']);
      expect(first.opening).to.deep.equal({ net_cents: 0, known_expected_commission_cents: 0 });
      const exact = await at(T0 + MIN, T0 + 2 * MIN);
      expect(exact.data.map((m: Movement) => m.event_id)).to.deep.equal(['zz-r0']);
      expect(exact.opening).to.deep.equal({ net_cents: 4000, known_expected_commission_cents: 400 });
      expect(exact.closing).to.deep.equal({ net_cents: 4000, known_expected_commission_cents: 400 });
      const past = await at(T0 + MIN + 1, T0 + 2 * MIN + 1);
      expect(past.data.map((m: Movement) => m.event_id)).to.deep.equal(['aa-r']);
      expect(past.closing).to.deep.equal({ net_cents: 3500, known_expected_commission_cents: 350 });
      expect((await at(T0 - HOUR, T0)).data).to.deep.equal([]);
    });

    it('applies the window rules of GET /clicks: one bound given, exactly 31 days, an empty or reversed window', async () => {
      expect(await statement(p, `since=${iso(T0)}`)).to.include({ since: iso(T0), until: iso(NOW) });
      expect(await statement(p, `until=${iso(T0)}`)).to.include({ since: iso(T0 - 30 * DAY), until: iso(T0) });
      expect(await statement(p, `since=${iso(T0 - 31 * DAY)}&until=${iso(T0)}`)).to.include({
        since: iso(T0 - 31 * DAY),
      });
      expectInvalid(await p.api.get(`/statement?since=${iso(T0 - 31 * DAY - 1)}&until=${iso(T0)}`), ['until:window']);
      expectInvalid(await p.api.get(`/statement?since=${iso(T0)}&until=${iso(T0)}`), ['until:window']);
      expectInvalid(await p.api.get(`/statement?since=${iso(T0 + MIN)}&until=${iso(T0)}`), ['until:window']);
      expectInvalid(await p.api.get(`/statement?since=${iso(NOW - 32 * DAY)}`), ['since:window']);
      expectInvalid(await p.api.get('/statement?since=yesterday&until=2026-02-30'), [
        'since:date_time',
        'until:date_time',
      ]);
    });

    it('answers 50 movements a page by default and up to 200 when asked', async () => {
      const w = `since=${iso(NOW)}&until=${iso(NOW + HOUR)}`;
      const first = await statement(many, w);
      expect(first.data).to.have.length(50);
      expect(first.next_cursor).to.be.a('string');
      const rest = await statement(many, `cursor=${encodeURIComponent(first.next_cursor as string)}`);
      expect(rest.data.map((m: Movement) => m.order_id)).to.deep.equal(['m50']);
      expect(rest.next_cursor).to.equal(null);
      const whole = await statement(many, `${w}&limit=200`);
      expect(whole.data).to.have.length(51);
      expect(whole.next_cursor).to.equal(null);
      expect(whole.data).to.deep.equal([...first.data, ...rest.data]);
      expect(whole.closing).to.deep.equal({ net_cents: 51 * 2000, known_expected_commission_cents: 51 * 200 });
    });
  });

  describe('closings', () => {
    it('closes a period at the very instant its end is reached, not before', async () => {
      t.clock.set(new Date(APR - 1));
      expectProblem(await p.api.get('/closings/2026-03'), 409);
      expect((await download(t, p.key, '2026-03')).status).to.equal(409);
      expect((await p.api.get('/closings')).body).to.deep.equal({ data: [], next_cursor: null });
      t.clock.set(new Date(APR));
      const march = await p.api.get('/closings/2026-03');
      expect(march.status, JSON.stringify(march.body)).to.equal(200);
      expect(march.body).to.include({ movements: 4, previous_sha256: null });
      expect((await p.api.get('/closings')).body.data.map((c: { period: string }) => c.period)).to.deep.equal([
        '2026-03',
      ]);
    });

    it('answers the closings only to a reports key, and only of its own partner and environment', async () => {
      t.clock.set(new Date(APR));
      const routes = ['/closings', '/closings/2026-03', '/closings/2026-03/movements.csv'];
      const catalogOnly = await t.key(p.partnerId, 'test', ['catalog']);
      for (const route of routes) {
        expectProblem(await catalogOnly.api.get(route), 403);
        expectProblem(await t.as('nope').get(route), 401);
      }
      const live = await t.key(p.partnerId, 'live');
      expect((await live.api.get('/closings')).body).to.deep.equal({ data: [], next_cursor: null });
      expect((await live.api.get('/closings/2026-03')).body).to.include({
        environment: 'live',
        movements: 0,
        previous_sha256: null,
      });
      expect((await download(t, live.key, '2026-03')).text).to.equal(`${HEADER}\r\n`);
      expect((await old.api.get('/closings/2026-03')).body).to.include({ movements: 0 });
      expect((await download(t, old.key, '2026-03')).text).to.equal(`${HEADER}\r\n`);
    });

    it('pages every closed period since the first movement, 50 by default and up to 200, chained', async () => {
      t.clock.set(new Date(APR));
      const first = await old.api.get('/closings');
      expect(first.status, JSON.stringify(first.body)).to.equal(200);
      expect(first.body.data).to.have.length(50);
      expect(first.body.data[0].period).to.equal('2026-03');
      const rest = await old.api.get(`/closings?cursor=${encodeURIComponent(first.body.next_cursor as string)}`);
      expect(rest.body.next_cursor).to.equal(null);
      const all = (await old.api.get('/closings?limit=200')).body;
      expect(all.next_cursor).to.equal(null);
      expect(all.data).to.deep.equal([...first.body.data, ...rest.body.data]);
      const periods = (all.data as { period: string }[]).map((c) => c.period);
      expect(periods).to.have.length(75); // January 2020 to March 2026
      expect(periods.at(-1)).to.equal('2020-01');
      for (let i = 0; i + 1 < all.data.length; i++) {
        const [newer, older] = [all.data[i], all.data[i + 1]];
        expect(newer.previous_sha256, newer.period).to.equal(older.sha256);
        expect(newer.opening, newer.period).to.deep.equal(older.closing);
      }
      expect(all.data.at(-1)).to.include({ movements: 1, previous_sha256: null });
      expectInvalid(await old.api.get('/closings?limit=201'), ['limit:maximum']);
      expectInvalid(await old.api.get('/closings?cursor=nope'), ['cursor:invalid']);
      // A cursor is the list's and partner's it was made for.
      const cursor = encodeURIComponent(first.body.next_cursor as string);
      expectInvalid(await p.api.get(`/closings?cursor=${cursor}`), ['cursor:invalid']);
    });
  });
});

describe('the rate brake on the ledger routes', function () {
  let t: TestService;
  before(async () => {
    t = await startTestService({ RATE_LIMIT_READS: '1' });
    t.clock.set(new Date('2026-03-10T12:00:00.000Z'));
  });
  after(async () => t?.close());

  it('answers 429 with Retry-After on each ledger read once the key has used its reads', async () => {
    const p = await t.partner({ type: 'hub', env: 'test' });
    for (const route of ['/statement', '/closings', '/closings/2026-01', '/closings/2026-01/movements.csv']) {
      const key = await t.key(p.partnerId, 'test');
      expect((await key.api.get(route)).status, route).to.equal(200);
      const refused = await key.api.get(route);
      expectProblem(refused, 429);
      expect(Number(refused.headers.get('retry-after')), route).to.be.at.least(1);
    }
  });
});
