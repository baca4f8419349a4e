/**
 * The movement statement and the monthly closings over HTTP (spec LEDGER.md), with the manual clock closing the
 * periods: movements of applied events only, signed deltas and running balances, windows and pages, the closings in
 * America/Sao_Paulo, the CSV's bytes and its SHA-256 chain, and a closed period that never changes (later events,
 * a restart, a projection rebuild, and a write held in flight across a window's end).
 */
import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { startTestService, type Partner, type TestService } from '../support/service.js';
import { expectInvalid, expectProblem } from '../support/e2e.js';
import { until } from '../support/deadline.js';
import { Writable } from 'node:stream';
import type { EventStore } from '../../shared-schema/ports/event-store.js';
import { portOf } from '../../infra/http/gateway.js';
import { runOperationsCommand } from '../../infra/ops/cli/operations-commands.js';
import { createClient } from '../../clients/typescript/src/client.js';
import { LEDGER, movementDocId, type MovementDoc } from '../../shared-schema/read-models/ledger.js';
import {
  DAY,
  HOUR,
  iso,
  laterBody,
  paidBody,
  putProduct,
  registerStore,
  sandboxClick,
  type Item,
} from './commerce-support.js';

const MOVEMENT_FIELDS = [
  'event_id',
  'store_id',
  'order_id',
  'type',
  'occurred_at',
  'recorded_at',
  'net_delta_cents',
  'known_expected_commission_delta_cents',
  'expected_commission_delta_cents',
  'net_balance_cents',
  'known_expected_commission_balance_cents',
];
const HEADER =
  'recorded_at,occurred_at,store_id,order_id,event_id,type,net_delta_cents,known_expected_commission_delta_cents,expected_commission_delta_cents,net_balance_cents,known_expected_commission_balance_cents';

/** sku-pct 2 × 1000 at 10 % (product rule) and sku-inh 1 × 3000 (store default: fixed 200): net 5000, commission 400. */
const ITEMS: Item[] = [
  { sku: 'sku-pct', quantity: 2, unit_price_cents: 1000, refunded_cents: 0 },
  { sku: 'sku-inh', quantity: 1, unit_price_cents: 3000, refunded_cents: 0 },
];
/** sku-none 1 × 700, no rule anywhere: the expectation is unknown. */
const UNKNOWN: Item[] = [{ sku: 'sku-none', quantity: 1, unit_price_cents: 700, refunded_cents: 0 }];

type Movement = Record<string, unknown>;
const brief = (m: Movement) => [
  m.order_id,
  m.type,
  m.net_delta_cents,
  m.known_expected_commission_delta_cents,
  m.expected_commission_delta_cents,
  m.net_balance_cents,
  m.known_expected_commission_balance_cents,
];

async function setUp(t: TestService): Promise<Partner> {
  const p = await t.partner({ type: 'hub', env: 'test' });
  await registerStore(p, 's1', { default_commission: { type: 'fixed', amount_cents: 200 } });
  await putProduct(t, p, 's1', 'sku-pct', { commission: { type: 'percentage', rate: 10 } });
  await putProduct(t, p, 's1', 'sku-inh');
  await registerStore(p, 's2');
  await putProduct(t, p, 's2', 'sku-none');
  return p;
}

/** A paid order at the clock's now, on a fresh sandbox click of its store. */
async function pay(t: TestService, p: Partner, storeId: string, orderId: string, items = ITEMS) {
  const click = await sandboxClick(p, storeId, items[0].sku);
  const body = paidBody({
    event_id: `${orderId}-paid`,
    order_id: orderId,
    store_id: storeId,
    click_id: click.click_id,
    paid_at: t.clock.now().toISOString(),
    items,
  });
  const r = await p.api.post('/conversions', body);
  expect(r.status, JSON.stringify(r.body)).to.equal(200);
  return body;
}

async function send(p: Partner, body: unknown): Promise<Record<string, unknown>> {
  const r = await p.api.post('/conversions', body);
  expect(r.status, JSON.stringify(r.body)).to.equal(200);
  return r.body;
}

async function statement(p: Partner, query: string): Promise<Record<string, any>> {
  const r = await p.api.get(`/statement?${query}`);
  expect(r.status, JSON.stringify(r.body)).to.equal(200);
  return r.body;
}

async function allPages(p: Partner, query: string): Promise<Record<string, any>[]> {
  const pages = [await statement(p, query)];
  while (pages[pages.length - 1].next_cursor)
    pages.push(
      await statement(p, `${query}&cursor=${encodeURIComponent(pages[pages.length - 1].next_cursor as string)}`),
    );
  return pages;
}

describe('movement statement and monthly closings', function () {
  let t: TestService;
  let p: Partner;
  let other: Partner;
  const SEP = Date.parse('2026-09-30T12:00:00.000Z');
  const OCT = Date.parse('2026-10-15T12:00:00.000Z');
  /** 23:30 on 31 October in Brasília: still October. */
  const OCT_END = Date.parse('2026-11-01T02:30:00.000Z');
  /** 00:00 on 1 November in Brasília: October is closed. */
  const NOV = Date.parse('2026-11-01T03:00:00.000Z');
  const W1 = 'since=2026-09-30T00:00:00Z&until=2026-10-31T00:00:00Z';
  const W2 = 'since=2026-10-20T00:00:00Z&until=2026-11-02T00:00:00Z';
  let a: ReturnType<typeof paidBody>;
  let c: ReturnType<typeof paidBody>;

  const download = async (who: Partner, period: string) => {
    const r = await fetch(`${t.api}/closings/${period}/movements.csv`, {
      headers: { Authorization: `Bearer ${who.key}` },
    });
    return { status: r.status, type: r.headers.get('content-type'), bytes: Buffer.from(await r.arrayBuffer()) };
  };
  const closing = async (period: string) => {
    const r = await p.api.get(`/closings/${period}`);
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    return r.body as Record<string, any>;
  };

  before(async () => {
    t = await startTestService();
    t.clock.set(new Date(SEP));
    p = await setUp(t);
    other = await t.partner({ type: 'hub', env: 'test', name: 'Outra' });
    // September: A paid; its repeat (duplicate) and a refused body are no movements.
    a = await pay(t, p, 's1', 'A');
    expect(await send(p, a)).to.include({ duplicate: true });
    expect((await p.api.post('/conversions', { ...a, event_id: 'bad', items: [] })).status).to.equal(422);
    // October: a partial refund of A, B paid (unknown expectation), and an event older than A's last (stale).
    t.clock.set(new Date(OCT));
    // Sent an hour after it happened: booked when recorded.
    await send(
      p,
      laterBody(a, { event_id: 'A-r', status: 'refunded', occurred_at: iso(OCT - HOUR), refunds: { 'sku-pct': 500 } }),
    );
    await pay(t, p, 's2', 'B', UNKNOWN);
    const stale = laterBody(a, {
      event_id: 'A-stale',
      status: 'refunded',
      occurred_at: iso(SEP + HOUR),
      refunds: { 'sku-pct': 900 },
    });
    expect(await send(p, stale)).to.include({ ignored_stale: true });
    // The last half hour of October in Brasília (already November in UTC): C paid.
    t.clock.set(new Date(OCT_END));
    c = await pay(t, p, 's1', 'C');
    // November: A cancelled.
    t.clock.set(new Date(NOV));
    await send(p, laterBody(a, { event_id: 'A-c', status: 'cancelled', occurred_at: iso(NOV) }));
  });
  after(async () => t?.close());

  describe('GET /statement', () => {
    it('books one movement per applied event, with its signed deltas and running balances, in recording order', async () => {
      const s = await statement(p, W1);
      expect(Object.keys(s).sort()).to.deep.equal(
        ['since', 'until', 'store_id', 'environment', 'currency', 'opening', 'closing', 'data', 'next_cursor'].sort(),
      );
      expect(s).to.include({
        since: '2026-09-30T00:00:00.000Z',
        until: '2026-10-31T00:00:00.000Z',
        store_id: null,
        environment: 'test',
        currency: 'BRL',
        next_cursor: null,
      });
      for (const m of s.data as Movement[]) expect(Object.keys(m).sort()).to.deep.equal([...MOVEMENT_FIELDS].sort());
      expect(s.data.map(brief)).to.deep.equal([
        ['A', 'paid', 5000, 400, 400, 5000, 400],
        ['A', 'refunded', -500, -50, -50, 4500, 350],
        ['B', 'paid', 700, 0, null, 5200, 350],
      ]);
      expect(s.opening).to.deep.equal({ net_cents: 0, known_expected_commission_cents: 0 });
      expect(s.closing).to.deep.equal({ net_cents: 5200, known_expected_commission_cents: 350 });
      const [m1, m2] = s.data as Movement[];
      expect(m1).to.include({ event_id: 'A-paid', store_id: 's1', occurred_at: iso(SEP), recorded_at: iso(SEP) });
      expect(m2).to.include({ event_id: 'A-r', occurred_at: iso(OCT - HOUR), recorded_at: iso(OCT) });
      const sum = (f: string) => (s.data as Movement[]).reduce((acc, m) => acc + (m[f] as number), 0);
      expect(s.closing.net_cents).to.equal(s.opening.net_cents + sum('net_delta_cents'));
      expect(s.closing.known_expected_commission_cents).to.equal(
        s.opening.known_expected_commission_cents + sum('known_expected_commission_delta_cents'),
      );
    });

    it('opens a window with the running totals of everything before it, whatever the window', async () => {
      const s = await statement(p, W2);
      expect(s.opening).to.deep.equal({ net_cents: 5200, known_expected_commission_cents: 350 });
      expect(s.data.map(brief)).to.deep.equal([
        ['C', 'paid', 5000, 400, 400, 10200, 750],
        ['A', 'cancelled', -4500, -350, -350, 5700, 400],
      ]);
      expect(s.data.map((m: Movement) => m.recorded_at)).to.deep.equal([iso(OCT_END), iso(NOV)]);
      expect(s.closing).to.deep.equal({ net_cents: 5700, known_expected_commission_cents: 400 });
    });

    it('sums, over every event of some orders, to those orders as GET /conversions/{order_id} answers them', async () => {
      const movements = [...(await statement(p, W1)).data, ...(await statement(p, W2)).data] as Movement[];
      expect(new Set(movements.map((m) => m.event_id)).size).to.equal(5);
      for (const [store, order] of [
        ['s1', 'A'],
        ['s2', 'B'],
        ['s1', 'C'],
      ]) {
        const view = (await p.api.get(`/conversions/${order}?store_id=${store}`)).body;
        const mine = movements.filter((m) => m.order_id === order);
        const sum = (f: string) => mine.reduce((acc, m) => acc + (m[f] as number), 0);
        expect(sum('net_delta_cents'), order).to.equal(view.net_cents);
        expect(sum('known_expected_commission_delta_cents'), order).to.equal(view.known_expected_commission_cents);
        expect(mine.at(-1)!.event_id).to.equal(view.event_id);
      }
    });

    it('keeps running totals per store with store_id', async () => {
      const s = await statement(p, `${W2}&store_id=s1`);
      expect(s.store_id).to.equal('s1');
      expect(s.opening).to.deep.equal({ net_cents: 4500, known_expected_commission_cents: 350 });
      expect(s.data.map(brief)).to.deep.equal([
        ['C', 'paid', 5000, 400, 400, 9500, 750],
        ['A', 'cancelled', -4500, -350, -350, 5000, 400],
      ]);
      expect(s.closing).to.deep.equal({ net_cents: 5000, known_expected_commission_cents: 400 });
      const s2 = await statement(p, `${W1}&store_id=s2`);
      expect(s2.data.map(brief)).to.deep.equal([['B', 'paid', 700, 0, null, 700, 0]]);
    });

    it('walks a window page by page: every movement once, in order, the same opening and closing on each page', async () => {
      const whole = await statement(p, W1);
      const pages = await allPages(p, `${W1}&limit=1`);
      expect(pages).to.have.length(3);
      expect(pages.flatMap((pg) => pg.data)).to.deep.equal(whole.data);
      for (const pg of pages) {
        expect(pg.opening).to.deep.equal(whole.opening);
        expect(pg.closing).to.deep.equal(whole.closing);
      }
      // Later pages may leave the window out; another window with the cursor is refused.
      const cursor = encodeURIComponent(pages[0].next_cursor);
      expect((await p.api.get(`/statement?cursor=${cursor}&limit=1`)).body.data).to.deep.equal(pages[1].data);
      expectInvalid(await p.api.get(`/statement?${W2}&cursor=${cursor}`), ['cursor:invalid']);
      // A cursor of the whole scope means nothing with a store filter.
      expectInvalid(await p.api.get(`/statement?${W1}&store_id=s1&cursor=${cursor}`), ['cursor:invalid']);
    });

    it('applies the window rules of GET /clicks and refuses bad input with every field', async () => {
      const d = await statement(p, '');
      expect(d).to.include({ since: iso(NOV - 30 * DAY), until: iso(NOV) });
      const n = await statement(p, 'since=2026-10-31T21:00:00-03:00&until=2026-11-01T00:00:00-03:00');
      expect(n).to.include({ since: '2026-11-01T00:00:00.000Z', until: '2026-11-01T03:00:00.000Z' });
      expect(n.data.map(brief)).to.deep.equal([['C', 'paid', 5000, 400, 400, 10200, 750]]);
      expectInvalid(await p.api.get('/statement?since=2026-09-01T00:00:00Z&until=2026-10-02T00:00:01Z'), [
        'until:window',
      ]);
      expectInvalid(await p.api.get('/statement?limit=0&page=2&store_id=a%20b'), [
        'limit:minimum',
        'page:unknown_field',
        'store_id:pattern',
      ]);
      expectInvalid(await p.api.get('/statement?limit=201'), ['limit:maximum']);
      expectInvalid(await p.api.get('/statement?cursor=nope'), ['cursor:invalid']);
      const catalogOnly = await t.key(p.partnerId, 'test', ['catalog']);
      expectProblem(await catalogOnly.api.get('/statement'), 403);
      expectProblem(await t.as('nope').get('/statement'), 401);
    });

    it('carries figures beyond 2^53 exactly, as bare JSON integers and CSV digits', async () => {
      const big = await t.partner({ type: 'hub', env: 'test', name: 'Grande' });
      await registerStore(big, 's1');
      await putProduct(t, big, 's1', 'sku-big', {
        commission: { type: 'fixed', amount_cents: Number.MAX_SAFE_INTEGER },
      });
      await pay(t, big, 's1', 'G', [{ sku: 'sku-big', quantity: 3, unit_price_cents: 100, refunded_cents: 0 }]);
      const exact = (3n * BigInt(Number.MAX_SAFE_INTEGER)).toString(); // 27021597764222973
      const r = await fetch(`${t.api}/statement?since=${iso(NOV)}&until=${iso(NOV + HOUR)}`, {
        headers: { Authorization: `Bearer ${big.key}` },
      });
      const text = await r.text();
      expect(text).to.contain(`"known_expected_commission_delta_cents":${exact}`);
      expect(text).to.contain(`"known_expected_commission_balance_cents":${exact}`);
      expect(text).to.contain(`"closing":{"net_cents":300,"known_expected_commission_cents":${exact}}`);
      t.clock.set(new Date(Date.parse('2026-12-01T03:00:00.000Z'))); // November closed, for this read only
      try {
        const csvText = (await download(big, '2026-11')).bytes.toString('utf8');
        expect(csvText).to.contain(`,G-paid,paid,300,${exact},${exact},300,${exact}\r\n`);
      } finally {
        t.clock.set(new Date(NOV));
      }
    });

    it('shows a partner and environment only its own movements', async () => {
      expect((await statement(other, W1)).data).to.deep.equal([]);
      const live = await t.key(p.partnerId, 'live');
      const s = await statement(live, W1);
      expect(s).to.include({ environment: 'live' });
      expect(s.data).to.deep.equal([]);
    });
  });

  describe('closings', () => {
    it('lists every closed period from the first movement on, newest first', async () => {
      const r = await p.api.get('/closings');
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      expect(Object.keys(r.body).sort()).to.deep.equal(['data', 'next_cursor']);
      expect(r.body.data.map((c: { period: string }) => c.period)).to.deep.equal(['2026-10', '2026-09']);
      expect(r.body.next_cursor).to.equal(null);
      const first = await p.api.get('/closings?limit=1');
      expect(first.body.data.map((c: { period: string }) => c.period)).to.deep.equal(['2026-10']);
      const second = await p.api.get(`/closings?limit=1&cursor=${encodeURIComponent(first.body.next_cursor)}`);
      expect(second.body.data).to.deep.equal([r.body.data[1]]);
      expect(second.body.next_cursor).to.equal(null);
      expect((await other.api.get('/closings')).body).to.deep.equal({ data: [], next_cursor: null });
      expectInvalid(await p.api.get('/closings?limit=0&since=x'), ['limit:minimum', 'since:unknown_field']);
    });

    it('answers a Closing per period in Brasília time, chained by SHA-256', async () => {
      const sep = await closing('2026-09');
      expect(sep).to.deep.equal({
        period: '2026-09',
        timezone: 'America/Sao_Paulo',
        since: '2026-09-01T03:00:00.000Z',
        until: '2026-10-01T03:00:00.000Z',
        environment: 'test',
        currency: 'BRL',
        opening: { net_cents: 0, known_expected_commission_cents: 0 },
        closing: { net_cents: 5000, known_expected_commission_cents: 400 },
        movements: 1,
        net_delta_cents: 5000,
        known_expected_commission_delta_cents: 400,
        sha256: sep.sha256,
        previous_sha256: null,
      });
      const oct = await closing('2026-10');
      expect(oct).to.include({ movements: 3, net_delta_cents: 5200, known_expected_commission_delta_cents: 350 });
      expect(oct.opening).to.deep.equal(sep.closing);
      expect(oct.closing).to.deep.equal({ net_cents: 10200, known_expected_commission_cents: 750 });
      expect(oct.previous_sha256).to.equal(sep.sha256);
      expect(oct.sha256)
        .to.match(/^[0-9a-f]{64}$/)
        .and.not.equal(sep.sha256);
      const aug = await closing('2026-08'); // closed, before the first movement: zero rows
      expect(aug).to.include({ movements: 0, net_delta_cents: 0, previous_sha256: null });
      expect(aug.opening).to.deep.equal({ net_cents: 0, known_expected_commission_cents: 0 });
      expect(await closing('0001-01')).to.include({ since: '0001-01-01T03:00:00.000Z', movements: 0 });
    });

    it('answers 409 period_open until the period has ended, and 422 on a period that is not YYYY-MM', async () => {
      for (const period of ['2026-11', '2027-01']) {
        const r = await p.api.get(`/closings/${period}`);
        expectProblem(r, 409);
        expect(r.body.errors.map((e: { field: string; code: string }) => `${e.field}:${e.code}`)).to.deep.equal([
          'period:period_open',
        ]);
        expectProblem(await p.api.get(`/closings/${period}/movements.csv`), 409);
      }
      for (const period of ['2026-13', '202610', '2026-1', 'x'])
        expectInvalid(await p.api.get(`/closings/${period}`), ['period:pattern']);
      expectInvalid(await p.api.get('/closings/2026-00/movements.csv'), ['period:pattern']);
      expectInvalid(await p.api.get('/closings/2026-10?x=1'), ['x:unknown_field']);
    });

    it('serves the CSV exactly: header, CRLF lines in order, RFC 4180, balances ending at closing, its SHA-256', async () => {
      const oct = await closing('2026-10');
      const got = await download(p, '2026-10');
      expect(got.status).to.equal(200);
      expect(got.type).to.equal('text/csv; charset=utf-8');
      expect(got.bytes[0]).to.not.equal(0xef); // no byte-order mark
      const text = got.bytes.toString('utf8');
      expect(text).to.equal(
        [
          HEADER,
          `${iso(OCT)},${iso(OCT - HOUR)},s1,A,A-r,refunded,-500,-50,-50,4500,350`,
          `${iso(OCT)},${iso(OCT)},s2,B,B-paid,paid,700,0,,5200,350`,
          `${iso(OCT_END)},${iso(OCT_END)},s1,C,C-paid,paid,5000,400,400,10200,750`,
          '',
        ].join('\r\n'),
      );
      expect(createHash('sha256').update(got.bytes).digest('hex')).to.equal(oct.sha256);
      const last = text.trimEnd().split('\r\n').at(-1)!.split(',');
      expect(last.slice(-2).map(Number)).to.deep.equal([
        oct.closing.net_cents,
        oct.closing.known_expected_commission_cents,
      ]);
      // Through the client that checks answers against the published document (OPENAPI_CHECK_ANSWERS=1).
      expect((await p.api.get('/closings/2026-10/movements.csv')).body).to.equal(text);
      const aug = await download(p, '2026-08');
      expect(aug.bytes.toString('utf8')).to.equal(`${HEADER}\r\n`);
      expect(createHash('sha256').update(aug.bytes).digest('hex')).to.equal((await closing('2026-08')).sha256);
    });

    it('is read by the typed client: statement pages, closings and the CSV', async () => {
      const api = createClient({ baseUrl: t.api, apiKey: p.key, retry: false });
      const seen: unknown[] = [];
      for await (const page of api.pages.statement({
        since: '2026-09-30T00:00:00Z',
        until: '2026-10-31T00:00:00Z',
        limit: 2,
      }))
        seen.push(...page.data);
      expect(seen).to.deep.equal((await statement(p, W1)).data);
      const periods: string[] = [];
      for await (const page of api.pages.closings({ limit: 1 })) periods.push(...page.data.map((c) => c.period));
      expect(periods).to.deep.equal(['2026-10', '2026-09']);
      expect((await api.getClosing('2026-10')).sha256).to.equal((await closing('2026-10')).sha256);
      expect(await api.closingCsv('2026-10')).to.equal((await download(p, '2026-10')).bytes.toString('utf8'));
    });

    it('never changes a closed period: later events, a restart and a projection rebuild give the same bytes', async () => {
      const before = {
        oct: await download(p, '2026-10'),
        closing: await closing('2026-10'),
        w1: await statement(p, W1),
      };
      // A refund of C recorded in November belongs to November, though C was paid in October.
      t.clock.set(new Date(NOV + DAY));
      await send(
        p,
        laterBody(c, {
          event_id: 'C-r',
          status: 'refunded',
          occurred_at: iso(NOV + DAY),
          refunds: { 'sku-inh': 1000 },
        }),
      );
      const same = async () => {
        expect((await download(p, '2026-10')).bytes.equals(before.oct.bytes)).to.equal(true);
        expect(await closing('2026-10')).to.deep.equal(before.closing);
        expect(await statement(p, W1)).to.deep.equal(before.w1);
      };
      await same();
      await t.restart();
      p = { ...p, api: t.as(p.key) };
      await same();
      const started = await t.admin.post('/projections/ledger/rebuild', {});
      expect(started.status, JSON.stringify(started.body)).to.equal(202);
      await until(
        async () => {
          const r = await t.admin.get('/projections');
          const s = (
            r.body.projections as { name: string; generation: number; rebuild: { state: string } | null }[]
          ).find((x) => x.name === 'ledger');
          return s?.rebuild?.state === 'done' && s.generation === 1;
        },
        30_000,
        'ledger rebuild done',
        50,
      );
      await same();
      // November, once closed, starts from October's closing and holds the cancel and the late refund.
      t.clock.set(new Date(Date.parse('2026-12-01T03:00:00.000Z')));
      const nov = await closing('2026-11');
      expect(nov.opening).to.deep.equal(before.closing.closing);
      expect(nov).to.include({ movements: 2, previous_sha256: before.closing.sha256 });
      // A month without movements is listed too, with zero rows, carrying the balances on.
      t.clock.set(new Date(Date.parse('2027-01-01T03:00:00.000Z')));
      const list = (await p.api.get('/closings')).body.data as Record<string, any>[];
      expect(list.map((c) => c.period)).to.deep.equal(['2026-12', '2026-11', '2026-10', '2026-09']);
      expect(list[0]).to.include({ movements: 0, net_delta_cents: 0, previous_sha256: nov.sha256 });
      expect(list[0].opening).to.deep.equal(nov.closing);
      expect(list[0].closing).to.deep.equal(nov.closing);
      expect(list[1]).to.deep.equal(nov);
      t.clock.set(new Date(NOV + DAY));
    });
  });

  describe('for the operator (ops closings, admin API)', () => {
    class Capture extends Writable {
      text = '';
      override _write(chunk: Buffer, _enc: BufferEncoding, done: () => void): void {
        this.text += chunk.toString('utf8');
        done();
      }
    }
    const ops = async (...argv: string[]) => {
      const out = new Capture();
      const err = new Capture();
      const code = await runOperationsCommand(argv, {
        adminUrl: `http://127.0.0.1:${portOf(t.service.admin)}`,
        token: t.service.adminToken,
        out,
        err,
        json: true,
      });
      return { code, out: out.text, err: err.text };
    };
    const target = () => ['--partner', p.partnerId, '--env', 'test', '--period', '2026-10'];

    it('exports a closed period without the partner key, byte for byte what the partner downloads', async () => {
      const r = await ops('closings', 'export', ...target());
      expect(r.code, r.err).to.equal(0);
      expect(r.out).to.equal((await download(p, '2026-10')).bytes.toString('utf8'));
      const open = await ops('closings', 'export', '--partner', p.partnerId, '--env', 'test', '--period', '2099-01');
      expect(open.code).to.equal(1);
      expect(open.err).to.contain('period_open');
      expect((await ops('closings', 'export', '--partner', p.partnerId)).code).to.equal(2);
    });

    it('recomputes a closed period from the log alone and finds it identical, or names the first different line', async () => {
      const good = await ops('closings', 'verify', ...target());
      expect(good.code, good.err).to.equal(0);
      const report = JSON.parse(good.out) as Record<string, unknown>;
      expect(report).to.include({ ok: true, period: '2026-10', first_difference_line: null });
      expect((report.served as { sha256: string }).sha256).to.equal((await closing('2026-10')).sha256);
      expect(report.recomputed).to.deep.equal(report.served);
      expectInvalid(await t.admin.post('/closings/verify', { partner_id: p.partnerId, env: 'x', period: '10-2026' }), [
        'env:enum',
        'period:pattern',
      ]);
      if (process.env.TOPOLOGY === 'multi') return; // the hand edit below writes through the embedded service's store
      // A read model that drifted from the log (a hand edit) is caught: the refund's line (line 2 after the header).
      const id = movementDocId({ partnerId: p.partnerId, env: 'test' }, 'A-r');
      const reads = t.service.operations.reads;
      const doc = (await reads.get<MovementDoc>(LEDGER.movements, id))!;
      await reads.transact((tx) => tx.put(LEDGER.movements, { ...doc, net_delta: '-499' }));
      try {
        const bad = await ops('closings', 'verify', ...target());
        expect(bad.code).to.equal(1);
        expect(JSON.parse(bad.out)).to.include({ ok: false, first_difference_line: 2 });
        const audit = await t.admin.post('/audit/verify', {});
        expect(audit.body.ok).to.equal(false);
        expect(
          audit.body.differences.map((d: { collection: string; id: string }) => [d.collection, d.id]),
        ).to.deep.include([LEDGER.movements, id]);
      } finally {
        await reads.transact((tx) => tx.put(LEDGER.movements, doc));
      }
      expect((await ops('closings', 'verify', ...target())).code).to.equal(0);
    });

    it('audit verify covers the movements read model', async () => {
      const r = await t.admin.post('/audit/verify', {});
      expect(r.status).to.equal(200);
      expect(r.body.ok, JSON.stringify(r.body.differences)).to.equal(true);
      expect(r.body.positions).to.have.property('ledger');
    });
  });
});

describe('a write held in flight across the end of a window', function () {
  let t: TestService;
  let p: Partner;
  let hold: Promise<void> | null = null;
  let release: () => void = () => undefined;
  let held: () => void = () => undefined;
  const END = Date.parse('2026-10-01T03:00:00.000Z');

  /** While `hold` is set, an append to an order stream waits for it (the command already read the clock). */
  const gated = (events: EventStore): EventStore =>
    new Proxy(events, {
      get(target, prop, receiver) {
        if (prop === 'appendToStream')
          return async (...args: Parameters<EventStore['appendToStream']>) => {
            if (hold && args[0].startsWith('order-')) {
              held();
              await hold;
            }
            return target.appendToStream(...args);
          };
        const value: unknown = Reflect.get(target, prop, receiver);
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });

  before(async function () {
    if (process.env.TOPOLOGY === 'multi' || process.env.EVENTSTORE_URL) this.skip(); // the gate wraps the embedded store
    t = await startTestService({}, undefined, { eventStore: gated });
    t.clock.set(new Date(END - 10 * 60_000));
    p = await setUp(t);
  });
  after(async () => t?.close());

  it('books the write when it is recorded: an answered window never gains it', async () => {
    await pay(t, p, 's1', 'early');
    t.clock.set(new Date(END - 60_000));
    const click = await sandboxClick(p, 's1', 'sku-pct');
    const body = paidBody({
      event_id: 'late-paid',
      order_id: 'late',
      store_id: 's1',
      click_id: click.click_id,
      paid_at: iso(END - 60_000),
      items: ITEMS,
    });
    const reached = new Promise<void>((resolve) => (held = resolve));
    hold = new Promise<void>((resolve) => (release = resolve));
    const inFlight = p.api.post('/conversions', body); // reads the clock at END − 1 min, then waits at the gate
    await reached;
    t.clock.set(new Date(END + 60_000));
    const window = `since=${iso(END - DAY)}&until=${iso(END)}`;
    const answered = await statement(p, window);
    expect(answered.data.map((m: Movement) => m.order_id)).to.deep.equal(['early']);
    hold = null;
    release();
    expect((await inFlight).status).to.equal(200);
    expect(await statement(p, window)).to.deep.equal(answered);
    const after = await statement(p, `since=${iso(END)}&until=${iso(END + HOUR)}`);
    expect(after.data.map((m: Movement) => [m.order_id, m.recorded_at])).to.deep.equal([['late', iso(END + 60_000)]]);
    expect(after.opening).to.deep.equal(answered.closing);
  });
});

describe('a commit whose position is not published yet when a statement or closing is asked', function () {
  let t: TestService;
  let p: Partner;
  let holdAnswer: Promise<void> | null = null;
  let committed: () => void = () => undefined;
  const T0 = Date.parse('2026-10-10T12:00:00.000Z');

  /** While `holdAnswer` is set, an append to an order stream commits, then keeps its answer (and so the tenant's
   * read-your-writes number) back. */
  const answerHeld = (events: EventStore): EventStore =>
    new Proxy(events, {
      get(target, prop, receiver) {
        if (prop === 'appendToStream')
          return async (...args: Parameters<EventStore['appendToStream']>) => {
            const result = await target.appendToStream(...args);
            if (holdAnswer && args[0].startsWith('order-')) {
              committed();
              await holdAnswer;
            }
            return result;
          };
        const value: unknown = Reflect.get(target, prop, receiver);
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });

  /**
   * Pays `orderId` at the clock's now with the projections held at their unit gate and the command's answer held
   * back, moves the clock to `askAt`, and sends `ask`: it must still be waiting once another read has been answered,
   * and is answered once the projections go on. Then lets the command answer.
   */
  async function askWhileUnpublished<T>(orderId: string, askAt: number, ask: () => Promise<T>): Promise<T> {
    const click = await sandboxClick(p, 's1', 'sku-pct');
    const body = paidBody({
      event_id: `${orderId}-paid`,
      order_id: orderId,
      store_id: 's1',
      click_id: click.click_id,
      paid_at: t.clock.now().toISOString(),
      items: ITEMS,
    });
    expect(await t.service.runner.waitFor(await t.service.events.headPosition(), 30_000)).to.equal(true);
    const release = await t.service.operations.gate.hold(); // the projections stop between two units
    let letAnswer: () => void = () => undefined;
    const reached = new Promise<void>((resolve) => (committed = resolve));
    holdAnswer = new Promise<void>((resolve) => (letAnswer = resolve));
    const inFlight = p.api.post('/conversions', body); // committed now; its answer, and its position, held back
    let asked: Promise<T>;
    try {
      await reached;
      t.clock.set(new Date(askAt));
      let answered = false;
      asked = ask().then((answer) => {
        answered = true;
        return answer;
      });
      // Another read answered meanwhile: the first one is still waiting for the projections.
      expect((await p.api.get('/me')).status).to.equal(200);
      expect(answered).to.equal(false);
    } finally {
      release();
    }
    const answer = await asked;
    holdAnswer = null;
    letAnswer();
    expect((await inFlight).status).to.equal(200);
    return answer;
  }

  before(async function () {
    if (process.env.TOPOLOGY === 'multi' || process.env.EVENTSTORE_URL) this.skip(); // the wrapper and the gate are the embedded service's
    t = await startTestService({}, undefined, { eventStore: answerHeld });
    t.clock.set(new Date(T0 - HOUR));
    p = await setUp(t);
    await pay(t, p, 's1', 'first');
    t.clock.set(new Date(T0));
  });
  after(async () => t?.close());

  it('a statement of a window that has ended waits for the head of the log, then holds the movement booked before it', async () => {
    const page = await askWhileUnpublished('unpublished', T0 + 60_000, () =>
      statement(p, `since=${iso(T0 - DAY)}&until=${iso(T0 + 60_000)}`),
    );
    expect(page.data.map((m: Movement) => [m.order_id, m.recorded_at])).to.deep.equal([
      ['first', iso(T0 - HOUR)],
      ['unpublished', iso(T0)],
    ]);
  });

  it('so does a closing, on the first request after its period ended', async () => {
    const NOV = Date.parse('2026-11-01T03:00:00.000Z');
    t.clock.set(new Date(NOV - 1));
    const closed = await askWhileUnpublished('last-of-october', NOV, async () => {
      const r = await p.api.get('/closings/2026-10');
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      return r.body as Record<string, any>;
    });
    expect(closed.movements).to.equal(3);
    const lines = (
      await (
        await fetch(`${t.api}/closings/2026-10/movements.csv`, {
          headers: { Authorization: `Bearer ${p.key}` },
        })
      ).text()
    )
      .trimEnd()
      .split('\r\n');
    expect(lines.at(-1)).to.contain(`${iso(NOV - 1)},`);
  });
});
