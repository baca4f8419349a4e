// The commercial cycle under load, through the in-process gateway of the embedded default (SQLite, FULL sync):
//  1. writes: POST /conversions (paid events on distinct orders) per second, beside single product PUTs in the same
//     run (each alone, then both at once);
//  2. reads: GET /reports/commission over a 31-day window holding many orders vs a window holding 1 % of them. The
//     report's read model (report_items, report_hours, report_days) is seeded directly in bulk, as the report projector
//     would write it, then the answer is checked against the figures computed while seeding.
// Run: node dist/tests/bench/commerce-bench.js [writes|report|all] [n]
import { pathToFileURL } from 'node:url';
import { startTestService, productBody, storeBody, type Partner, type TestService } from '../support/service.js';
import {
  LEVELS,
  STORED_FIELDS,
  combine,
  periodOf,
  storedFields,
  zeroFigures,
  type ReportFigures,
} from '../../shared-schema/read-models/report.js';
import type { Doc } from '../../shared-schema/ports/read-store.js';

const DAY = 86_400_000;
const HOUR = 3_600_000;
const WRITES_PER_KEY = 590; // under the rate brake of 600 writes per minute per key (the manual clock never moves)

// ------------------------------------------------------------------------------------------------ writes

export interface WriteBenchReport {
  putsAlonePerSecond: number;
  conversionsAlonePerSecond: number;
  mixedPutsPerSecond: number;
  mixedConversionsPerSecond: number;
  conversionLatencyMs: { p50: number; p99: number };
  putLatencyMs: { p50: number; p99: number };
}

/** A pool of keys of one partner so that no key passes the rate brake. */
async function keyPool(t: TestService, partner: Partner, writes: number): Promise<() => Partner> {
  const keys = [partner];
  for (let i = 1; i < Math.ceil(writes / WRITES_PER_KEY) + 1; i++) keys.push(await t.key(partner.partnerId, 'test'));
  let used = 0;
  return () => keys[Math.floor(used++ / WRITES_PER_KEY)];
}

async function run(
  n: number,
  concurrency: number,
  op: (i: number) => Promise<number>,
): Promise<{ perSecond: number; latencies: number[] }> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) {
        const i = next++;
        const t0 = performance.now();
        const status = await op(i);
        latencies.push(performance.now() - t0);
        if (status !== 200) throw new Error(`operation ${i} answered ${status}`);
      }
    }),
  );
  return { perSecond: n / ((performance.now() - started) / 1000), latencies };
}

const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? 0;
};

export async function benchConversionWrites(n = 3000, concurrency = 16): Promise<WriteBenchReport> {
  const t = await startTestService();
  try {
    t.clock.set(new Date('2026-06-01T12:00:00.000Z'));
    const partner = await t.partner({ type: 'hub', env: 'test', name: 'Bench' });
    const next = await keyPool(t, partner, 4 * n + 10);
    await partner.api.put('/stores/s1', storeBody({ default_commission: { type: 'fixed', amount_cents: 250 } }));
    for (const sku of ['a', 'b', 'c']) {
      await partner.api.put(
        `/products/${sku}`,
        productBody('s1', { commission: { type: 'percentage', rate: 7.5 }, updated_at: t.clock.now().toISOString() }),
      );
    }
    const click = (await partner.api.post('/sandbox/clicks', { store_id: 's1', sku: 'a' })).body.click_id as string;
    const paidAt = t.clock.now().toISOString();
    let orderSeq = 0;
    const conversion = async () => {
      const id = `o-${++orderSeq}`;
      const r = await next().api.post('/conversions', {
        event_id: `e-${id}`,
        order_id: id,
        store_id: 's1',
        click_id: click,
        status: 'paid',
        currency: 'BRL',
        paid_at: paidAt,
        occurred_at: paidAt,
        items: [
          { sku: 'a', quantity: 1, unit_price_cents: 1990, refunded_cents: 0 },
          { sku: 'b', quantity: 2, unit_price_cents: 4990, refunded_cents: 0 },
          { sku: 'unknown', quantity: 1, unit_price_cents: 990, refunded_cents: 0 },
        ],
      });
      return r.status;
    };
    let skuSeq = 0;
    const put = async () => {
      const r = await next().api.put(
        `/products/p-${++skuSeq}`,
        productBody('s1', { price_cents: 1000 + skuSeq, updated_at: t.clock.now().toISOString() }),
      );
      return r.status;
    };
    await run(200, concurrency, conversion); // warm-up
    await run(200, concurrency, put);
    const putsAlone = await run(n, concurrency, put);
    const conversionsAlone = await run(n, concurrency, conversion);
    const [mixedPuts, mixedConversions] = await Promise.all([
      run(n, concurrency / 2, put),
      run(n, concurrency / 2, conversion),
    ]);
    const report: WriteBenchReport = {
      putsAlonePerSecond: putsAlone.perSecond,
      conversionsAlonePerSecond: conversionsAlone.perSecond,
      mixedPutsPerSecond: mixedPuts.perSecond,
      mixedConversionsPerSecond: mixedConversions.perSecond,
      conversionLatencyMs: {
        p50: percentile(conversionsAlone.latencies, 50),
        p99: percentile(conversionsAlone.latencies, 99),
      },
      putLatencyMs: { p50: percentile(putsAlone.latencies, 50), p99: percentile(putsAlone.latencies, 99) },
    };
    const f = (x: number) => x.toFixed(0);
    console.log(`writes through the gateway (SQLite FULL, ${concurrency} in flight, ${n} each):`);
    console.log(
      `  PUT /products alone:             ${f(report.putsAlonePerSecond)}/s (p50 ${report.putLatencyMs.p50.toFixed(1)} ms, p99 ${report.putLatencyMs.p99.toFixed(1)} ms)`,
    );
    console.log(
      `  POST /conversions (paid) alone:  ${f(report.conversionsAlonePerSecond)}/s (p50 ${report.conversionLatencyMs.p50.toFixed(1)} ms, p99 ${report.conversionLatencyMs.p99.toFixed(1)} ms)`,
    );
    console.log(
      `  both at once:                    ${f(report.mixedPutsPerSecond)} PUT/s + ${f(report.mixedConversionsPerSecond)} conversions/s`,
    );
    return report;
  } finally {
    await t.close();
  }
}

// ------------------------------------------------------------------------------------------------ report

export interface ReportBenchReport {
  orders: number;
  clicks: number;
  seedSeconds: number;
  largeWindowOrders: number;
  smallWindowOrders: number;
  largeMs: number;
  smallMs: number;
  ratio: number;
}

/** mulberry32: a small seeded generator, so every run seeds the same data. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = a;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

export async function benchCommissionReport(
  orders = 1_000_000,
  clicks = 3_000_000,
  stores = 20,
  repeats = 20,
): Promise<ReportBenchReport> {
  const t = await startTestService();
  try {
    const D0 = Date.parse('2026-01-01T00:00:00.000Z');
    t.clock.set(new Date(D0 + 40 * DAY));
    const partner = await t.partner({ type: 'hub', env: 'live', name: 'Report bench' });
    const owner = { partner_id: partner.partnerId, env: 'live' as const };
    const rnd = random(42);
    const storeIds = Array.from({ length: stores }, (_, i) => `store-${String(i).padStart(2, '0')}`);
    const large = { since: D0 + 17 * 60_000 + 23_456, until: D0 + 31 * DAY - 7 * 60_000 - 500 };
    const small = { since: D0 + 15 * DAY + 3 * HOUR + 17 * 60_000 + 23_456, until: 0 };
    small.until = small.since + Math.round(0.01 * 31 * DAY);
    const expected = { large: zeroFigures(), small: zeroFigures() };
    const buckets = new Map<string, { level: 1 | 2; store: string; period: string; f: ReportFigures }>();
    const inside = (w: { since: number; until: number }, at: number) => at >= w.since && at < w.until;

    // Items are written in time order (events arrive so), in units of 20 000 documents.
    const started = performance.now();
    let batch: Doc[] = [];
    const flush = async () => {
      const docs = batch;
      batch = [];
      await t.service.reads.transact(async (tx) => {
        for (const d of docs) await tx.put(LEVELS[0].collection, d);
      });
    };
    const bucketsOf = (store: string, iso: string) =>
      ([1, 2] as const).map((level) => {
        const period = periodOf(level, iso);
        const key = `${level}:${store}:${period}`;
        let b = buckets.get(key);
        if (!b) buckets.set(key, (b = { level, store, period, f: zeroFigures() }));
        return b;
      });
    const sortedTimes = (n: number) => Float64Array.from({ length: n }, () => D0 + Math.floor(rnd() * 31 * DAY)).sort();

    const orderTimes = sortedTimes(orders);
    for (let i = 0; i < orders; i++) {
      const at = orderTimes[i];
      const iso = new Date(at).toISOString();
      const store = storeIds[Math.floor(rnd() * stores)];
      const gross = 1000 + Math.floor(rnd() * 99_000);
      const u = rnd();
      const status = u < 0.8 ? 'paid' : u < 0.95 ? 'refunded' : 'cancelled';
      const refunded = status === 'paid' ? 0 : status === 'cancelled' ? gross : Math.floor(gross / 2);
      const unknown = rnd() < 0.02;
      const net = gross - refunded;
      const f: ReportFigures = {
        ...zeroFigures(),
        orders: 1,
        paid_orders: status === 'paid' ? 1 : 0,
        refunded_orders: status === 'refunded' ? 1 : 0,
        cancelled_orders: status === 'cancelled' ? 1 : 0,
        unknown_commission_orders: unknown && net > 0 ? 1 : 0,
        gross: BigInt(gross),
        refunded: BigInt(refunded),
        net: BigInt(net),
        known: unknown ? 0n : BigInt(Math.round(net * 0.05)),
      };
      batch.push({
        _id: `live:${partner.partnerId}:o:${store}:order-${i}`,
        ...owner,
        store_id: store,
        kind: 'order',
        at: iso,
        ...storedFields(f),
        position: i + 1,
      });
      for (const b of bucketsOf(store, iso)) b.f = combine(b.f, f);
      for (const w of ['large', 'small'] as const)
        if (inside(w === 'large' ? large : small, at)) expected[w] = combine(expected[w], f);
      if (batch.length >= 20_000) await flush();
    }
    const clickTimes = sortedTimes(clicks);
    for (let i = 0; i < clicks; i++) {
      const at = clickTimes[i];
      const iso = new Date(at).toISOString();
      const store = storeIds[Math.floor(rnd() * stores)];
      batch.push({
        _id: `live:${partner.partnerId}:c:ic_bench${i}`,
        ...owner,
        store_id: store,
        kind: 'click',
        at: iso,
        clicks: 1,
        position: orders + i + 1,
      });
      for (const b of bucketsOf(store, iso)) b.f.clicks += 1;
      if (inside(large, at)) expected.large.clicks += 1;
      if (inside(small, at)) expected.small.clicks += 1;
      if (batch.length >= 20_000) await flush();
    }
    await flush();
    await t.service.reads.transact(async (tx) => {
      for (const b of buckets.values()) {
        const { collection, field } = LEVELS[b.level];
        await tx.put(collection, {
          _id: `live:${partner.partnerId}:${b.store}:${b.period}`,
          ...owner,
          store_id: b.store,
          [field]: b.period,
          ...storedFields(b.f),
        });
      }
    });
    const seedSeconds = (performance.now() - started) / 1000;

    const get = async (w: { since: number; until: number }) => {
      const r = await partner.api.get(
        `/reports/commission?since=${new Date(w.since).toISOString()}&until=${new Date(w.until).toISOString()}`,
      );
      if (r.status !== 200) throw new Error(`report answered ${r.status}: ${JSON.stringify(r.body)}`);
      return r.body as { totals: Record<string, unknown>; stores: unknown[] };
    };
    // correctness first: the figures seeded, added up exactly
    for (const w of ['large', 'small'] as const) {
      const body = await get(w === 'large' ? large : small);
      const want = expected[w];
      const got = body.totals;
      if (
        got.orders !== want.orders ||
        got.clicks !== want.clicks ||
        BigInt(got.net_cents as number) !== want.net ||
        BigInt(got.known_expected_commission_cents as number) !== want.known
      ) {
        throw new Error(`report of the ${w} window is wrong: ${JSON.stringify(got)}`);
      }
    }
    const time = async (w: { since: number; until: number }) => {
      for (let i = 0; i < 3; i++) await get(w); // warm-up
      const ms: number[] = [];
      for (let i = 0; i < repeats; i++) {
        const t0 = performance.now();
        await get(w);
        ms.push(performance.now() - t0);
      }
      return percentile(ms, 50);
    };
    const largeMs = await time(large);
    const smallMs = await time(small);
    const report: ReportBenchReport = {
      orders,
      clicks,
      seedSeconds,
      largeWindowOrders: expected.large.orders,
      smallWindowOrders: expected.small.orders,
      largeMs,
      smallMs,
      ratio: largeMs / smallMs,
    };
    console.log(
      `GET /reports/commission (SQLite read store, ${orders} orders + ${clicks} clicks over 31 days, ${stores} stores; seeded in ${seedSeconds.toFixed(0)} s):`,
    );
    console.log(`  31-day window (${report.largeWindowOrders} orders): median ${largeMs.toFixed(1)} ms`);
    console.log(`  1 % window    (${report.smallWindowOrders} orders): median ${smallMs.toFixed(1)} ms`);
    console.log(
      `  ratio large / small: ${report.ratio.toFixed(2)}× (target ≤ 5×); report fields summed: ${STORED_FIELDS.length}`,
    );
    return report;
  } finally {
    await t.close();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const which = process.argv[2] ?? 'all';
  const n = process.argv[3] ? Number(process.argv[3]) : undefined;
  if (which === 'writes' || which === 'all') await benchConversionWrites(n);
  if (which === 'report' || which === 'all') await benchCommissionReport(n, n === undefined ? undefined : 3 * n);
}
