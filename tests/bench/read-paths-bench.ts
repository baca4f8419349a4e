/**
 * The read paths of the ledger, the portal and the channel feeds at volume (`make bench`, after run.js; alone:
 * `node dist/tests/bench/read-paths-bench.js`). One embedded service in this process (temp DATA_DIR, CLOCK=manual,
 * the rate brakes raised so that they count but never refuse), loopback only, every loop bounded.
 *
 * Seeding: one real partner, store, product and conversion go through the HTTP API; their events are then cloned
 * (new SKUs, new orders) and appended straight to the embedded event store, as the other bench seeders do, and the
 * projections build every read model from them (no read model is written here).
 *   - Ledger: BENCH_LEDGER_SMALL orders paid in September 2026 and BENCH_LEDGER_ROWS in October for the measured
 *     partner, plus BENCH_LEDGER_NOISE orders in October spread over BENCH_LEDGER_PARTNERS − 1 other partners,
 *     interleaved with the partner's; each month's orders spread over 25 days. The clock then stands in November,
 *     so both months are closed. The defaults are the issue's workload: 1,000,000 movements over 300 partners
 *     (10,000 + 100,000 of the measured partner, 890,000 of 299 others), every one a real event through the real
 *     projector.
 *   - Catalog: BENCH_FEED_SMALL live, accepted products of the measured partner (all searchable), the feed read,
 *     then up to BENCH_OFFERS, the feed read again; the portal pages are read at BENCH_OFFERS SKUs.
 * Figures:
 *   ledger) statement page vs GET /conversions page over October (same window, same page size, alternating), p99 and
 *     ratio (target <= 1.5); the October closing CSV streamed, rows/s (target >= 200 000 rows/s); the process's peak
 *     RSS growth while streaming September's CSV vs October's (target flat within 20 MB).
 *   portal) each page's p99 (target <= 100 ms).
 *   feeds) /feeds/offers.tsv offers/s (target >= 100 000/s), gzip offers/s over plain (target >= 0.5), peak RSS growth
 *     while streaming at BENCH_FEED_SMALL vs BENCH_OFFERS offers (target flat within 50 MB), /feeds/changes pages
 *     of 500 p99 (target <= 20 ms).
 * BENCH_ONLY=ledger: the ledger's figures alone; BENCH_ONLY=portal: the portal's (both seeded); BENCH_ONLY=feed: the
 * feeds' (both seeded; small BENCH_LEDGER_* sizes make it quick). BENCH_READ_SAMPLES (default 100): pages timed per ledger endpoint.
 * FEED_GZIP_LEVEL: the service's gzip level of the full feed for the run (default the service's); FEED_OFFERS_PER_SECOND:
 * the feeds' budget of offers a second (default the service's, which the offers/s figure then measures).
 * RSS is this process's (service and client; the client only counts bytes), sampled every 5 ms after a collection.
 * Writes .bench/bench-read-paths.json and .md (tests/support/bench-results.ts).
 */
import http from 'node:http';
import os from 'node:os';
import v8 from 'node:v8';
import vm from 'node:vm';
import { createGunzip } from 'node:zlib';
import { startTestService, storeBody, productBody, type Partner, type TestService } from '../support/service.js';
import { writeBenchResults } from '../support/bench-results.js';
import { streams, type Tenant } from '../../shared-schema/domain/streams.js';
import type { NewEvent, RecordedEvent } from '../../shared-schema/ports/event-store.js';

const env = (name: string, fallback: number) => (process.env[name] ? Number(process.env[name]) : fallback);
const LEDGER_ROWS = env('BENCH_LEDGER_ROWS', 100_000);
const LEDGER_SMALL = env('BENCH_LEDGER_SMALL', 10_000);
const LEDGER_NOISE = env('BENCH_LEDGER_NOISE', 890_000);
const LEDGER_PARTNERS = env('BENCH_LEDGER_PARTNERS', 300);
const OFFERS_N = env('BENCH_OFFERS', 100_000);
const FEED_SMALL = env('BENCH_FEED_SMALL', 10_000);
const SAMPLES = env('BENCH_READ_SAMPLES', 100);
/** BENCH_ONLY=ledger: the ledger's figures alone (no catalog seeded), e.g. with more samples. */
const LEDGER_ONLY = process.env.BENCH_ONLY === 'ledger';
/** BENCH_ONLY=portal: both seeds, then the portal's pages alone (no ledger or feed figures). */
const PORTAL_ONLY = process.env.BENCH_ONLY === 'portal';
/** BENCH_ONLY=feed: both seeds (the ledger's still sized by its variables), then the feeds' figures alone. */
const FEED_ONLY = process.env.BENCH_ONLY === 'feed';
const STORE = 'loja-bench';
const SEPT = Date.parse('2026-09-02T12:00:00.000Z');
const OCT = Date.parse('2026-10-02T12:00:00.000Z');
const DAYS_25 = 25 * 86_400_000;
const OCT_SINCE = '2026-10-01T03:00:00.000Z';
const OCT_UNTIL = '2026-11-01T03:00:00.000Z';
const NOV = Date.parse('2026-11-02T12:00:00.000Z');

v8.setFlagsFromString('--expose-gc');
/** A full collection before a memory figure (the flag set above, the function taken from a fresh context). */
const gc = vm.runInNewContext('gc') as () => void;
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const f1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : '-');
const f2 = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : '-');
const int = (n: number) => Math.round(n).toLocaleString('en-US');
const MB = 2 ** 20;
const started = Date.now();
const step = (what: string) =>
  process.stderr.write(`read-paths: ${what} (${Math.round((Date.now() - started) / 1000)} s)\n`);

const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });

interface Got {
  status: number;
  ms: number;
  bytes: number;
  /** Lines of the (decoded) body. */
  lines: number;
  headers: http.IncomingHttpHeaders;
  /** The body as text, when asked for. */
  text?: string;
  /** Peak RSS growth over the RSS at the start, sampled every 5 ms, when asked for. */
  rssGrowth?: number;
  /**
   * CPU time of the whole process (server and client share it) from the request to the body's end, ms: it moves
   * less than `ms` when other work shares the cores.
   */
  cpuMs: number;
}

/** A GET on loopback: time to the body's end, the bytes and lines counted on the fly (gunzipped when gzip). */
function get(url: string, headers: Record<string, string>, opts: { keep?: boolean; rss?: boolean } = {}): Promise<Got> {
  return new Promise((resolve, reject) => {
    const rss0 = opts.rss ? process.memoryUsage.rss() : 0;
    let peak = rss0;
    const sampler = opts.rss ? setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 5) : undefined;
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    const req = http.get(url, { agent, headers }, (res) => {
      let bytes = 0;
      let lines = 0;
      const kept: Buffer[] = [];
      const body = res.headers['content-encoding'] === 'gzip' ? res.pipe(createGunzip()) : res;
      res.on('data', (c: Buffer) => (bytes += c.length));
      body.on('data', (c: Buffer) => {
        for (let i = c.indexOf(10); i !== -1; i = c.indexOf(10, i + 1)) lines++;
        if (opts.keep) kept.push(c);
      });
      body.on('error', reject);
      body.on('end', () => {
        const ms = performance.now() - t0;
        const cpu = process.cpuUsage(cpu0);
        if (sampler) clearInterval(sampler);
        resolve({
          status: res.statusCode ?? 0,
          ms,
          cpuMs: (cpu.user + cpu.system) / 1000,
          bytes,
          lines,
          headers: res.headers,
          ...(opts.keep ? { text: Buffer.concat(kept).toString('utf8') } : {}),
          ...(opts.rss ? { rssGrowth: Math.max(peak, process.memoryUsage.rss()) - rss0 } : {}),
        });
      });
    });
    req.on('error', reject);
  });
}

function ok(g: Got, what: string): Got {
  if (g.status !== 200) throw new Error(`${what}: ${g.status} ${g.text ?? ''}`);
  return g;
}

/**
 * Appends events many streams at a time (bounded: `chunk` appends in flight), then waits for the projections. The
 * event store books each event at the clock's time: `clockAt(i)`, when given, sets the clock before event `i`'s chunk.
 */
async function appendAll(
  t: TestService,
  count: number,
  make: (i: number) => [string, NewEvent[]],
  clockAt?: (i: number) => number,
): Promise<void> {
  const chunk = 500;
  for (let i = 0; i < count; i += chunk) {
    if (clockAt) t.clock.set(new Date(clockAt(i)));
    const batch: Promise<unknown>[] = [];
    for (let j = i; j < Math.min(count, i + chunk); j++) {
      const [stream, events] = make(j);
      batch.push(t.service.events.appendToStream(stream, events, 'no_stream'));
    }
    await Promise.all(batch);
  }
  const head = await t.service.events.headPosition();
  if (!(await t.service.runner.waitFor(head, 30 * 60_000))) throw new Error('projections did not catch up');
}

const asNew = (e: RecordedEvent, data: unknown, at: string): NewEvent => ({
  type: e.type,
  data,
  metadata: { ...(e.metadata as Record<string, unknown>), recorded_at: at },
});

// ------------------------------------------------------------------------------------------------ seeding

async function seedCatalog(t: TestService, tenant: Tenant, from: number, to: number): Promise<void> {
  const template = await t.service.events.readStream(streams.product(tenant, 'sku-0'));
  const now = t.clock.now().toISOString();
  await appendAll(t, to - from, (k) => {
    const sku = `sku-${from + k}`;
    const list = template.map((e) => {
      const data = structuredClone(e.data) as Record<string, unknown> & { product?: Record<string, unknown> };
      data.sku = sku;
      if (data.product) {
        data.product.title = `Produto ${from + k} marca${(from + k) % 97} modelo ${(from + k) % 1013}`;
        data.product.updated_at = now;
        data.product.product_url = `https://${STORE}.shop.test/p/${from + k}`;
      }
      if ('received_at' in data) data.received_at = now;
      if ('checked_at' in data) data.checked_at = now;
      return asNew(e, data, now);
    });
    return [streams.product(tenant, sku), list];
  });
}

/** `count` paid orders spread evenly over `spanMs` from `atMs` (their recorded_at as much as their paid_at). */
async function seedOrders(
  t: TestService,
  template: RecordedEvent,
  tenantOf: (i: number) => Tenant,
  prefix: string,
  count: number,
  atMs: number,
  spanMs: number,
): Promise<void> {
  const timeOf = (i: number) => atMs + Math.floor((i * spanMs) / count);
  await appendAll(
    t,
    count,
    (i) => {
      const at = new Date(timeOf(i)).toISOString();
      const data = structuredClone(template.data) as {
        event: Record<string, unknown>;
        order: Record<string, unknown>;
        received_at: string;
      };
      const orderId = `${prefix}-${i}`;
      const eventId = `${orderId}-paid`;
      Object.assign(data.event, { event_id: eventId, order_id: orderId, paid_at: at, occurred_at: at });
      Object.assign(data.order, {
        event_id: eventId,
        order_id: orderId,
        paid_at: at,
        occurred_at: at,
        commission_snapshot_at: at,
        recorded_at: at,
        updated_at: at,
      });
      data.received_at = at;
      return [streams.order(tenantOf(i), STORE, orderId), [asNew(template, data, at)]];
    },
    timeOf,
  );
}

// ------------------------------------------------------------------------------------------------ measures

type Row = [measure: string, figure: string, detail: string];

async function ledger(t: TestService, p: Partner, rows: Row[]): Promise<void> {
  const root = t.api;
  const auth = { Authorization: `Bearer ${p.key}` };
  const window = `since=${encodeURIComponent(OCT_SINCE)}&until=${encodeURIComponent(OCT_UNTIL)}&limit=50`;
  step(`ledger: statement vs conversions, ${SAMPLES} pages each, alternating`);
  const times = { statement: [] as number[], conversions: [] as number[] };
  const cursors = { statement: null as string | null, conversions: null as string | null };
  for (let i = 0; i < SAMPLES + 10; i++) {
    for (const what of i % 2 === 0
      ? (['statement', 'conversions'] as const)
      : (['conversions', 'statement'] as const)) {
      const c = cursors[what];
      const g = ok(
        await get(`${root}/${what}?${window}${c ? `&cursor=${encodeURIComponent(c)}` : ''}`, auth, { keep: true }),
        what,
      );
      if (i >= 10) times[what].push(g.ms); // the first 10 of each warm up
      cursors[what] = (JSON.parse(g.text!) as { next_cursor: string | null }).next_cursor;
    }
  }
  const sp99 = pct(times.statement, 99);
  const cp99 = pct(times.conversions, 99);
  rows.push(
    ['ledger) statement page (50) p99', `${f2(sp99)} ms`, `p50 ${f2(pct(times.statement, 50))} ms; October window`],
    [
      'ledger) GET /conversions page (50) p99',
      `${f2(cp99)} ms`,
      `p50 ${f2(pct(times.conversions, 50))} ms; same window`,
    ],
    ['ledger) statement / conversions p99', f2(sp99 / cp99), 'target <= 1.5'],
  );

  step('ledger: closings CSV, September then October, twice');
  const csv = (period: string) => get(`${root}/closings/${period}/movements.csv`, auth, { rss: true });
  const runs: Record<string, Got[]> = { '2026-09': [], '2026-10': [] };
  for (let r = 0; r < 2; r++)
    for (const period of ['2026-09', '2026-10']) {
      gc();
      runs[period].push(ok(await csv(period), `csv ${period}`));
    }
  const last = (period: string) => runs[period][runs[period].length - 1];
  const oct = last('2026-10');
  const sep = last('2026-09');
  const octRows = oct.lines - 1;
  const sepRows = sep.lines - 1;
  const rate = octRows / (oct.ms / 1000);
  const firstRate = (runs['2026-10'][0].lines - 1) / (runs['2026-10'][0].ms / 1000);
  const growth = (g: Got) => g.rssGrowth! / MB;
  rows.push(
    [
      `ledger) closing CSV of ${int(octRows)} rows`,
      `${int(rate)} rows/s`,
      `${f1(oct.ms)} ms, ${f1(oct.bytes / MB)} MB; CPU ${f1(oct.cpuMs)} ms (${int(octRows / (oct.cpuMs / 1000))} rows per CPU-second); first download ${int(firstRate)} rows/s; target >= 200,000 rows/s`,
    ],
    [
      `ledger) RSS growth, CSV ${int(sepRows)} vs ${int(octRows)} rows`,
      `${f1(growth(sep))} vs ${f1(growth(oct))} MB`,
      `difference ${f1(growth(oct) - growth(sep))} MB (peak RSS during the download over RSS before it, after a collection; runs: ${[...runs['2026-09'], ...runs['2026-10']].map((g) => f1(growth(g))).join(', ')}); target flat ±20 MB`,
    ],
  );
}

async function feed(t: TestService, root: string, label: string): Promise<{ plain: Got; gzip: Got }> {
  const ch = await t.admin.post('/channels', { name: `Bench ${label}` });
  if (ch.status !== 201) throw new Error(`channel: ${ch.status}`);
  const auth = { Authorization: `Bearer ${(ch.body as { token: string }).token}` };
  const url = `${root}/feeds/offers.tsv`;
  ok(await get(url, auth), 'feed warm-up');
  let plain: Got | undefined;
  let gzip: Got | undefined;
  for (let r = 0; r < 2; r++) {
    gc();
    const a = ok(await get(url, auth, { rss: true }), 'feed');
    gc();
    const b = ok(await get(url, { ...auth, 'Accept-Encoding': 'gzip' }, { rss: true }), 'feed gzip');
    if (!plain || a.ms < plain.ms) plain = a;
    if (!gzip || b.ms < gzip.ms) gzip = b;
  }
  return { plain: plain!, gzip: gzip! };
}

async function changes(t: TestService, root: string): Promise<number[]> {
  const times: number[] = [];
  let cursor: string | null = null;
  let auth: Record<string, string> = {};
  // A channel is braked at 60 requests a minute: a fresh channel every 50 pages.
  for (let i = 0; i < 400; i++) {
    if (i % 50 === 0) {
      const ch = await t.admin.post('/channels', { name: `Bench changes ${i}` });
      auth = { Authorization: `Bearer ${(ch.body as { token: string }).token}` };
    }
    const g = ok(
      await get(`${root}/feeds/changes?limit=500${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, auth, {
        keep: true,
      }),
      'changes',
    );
    const page = JSON.parse(g.text!) as { changes: unknown[]; next_cursor: string };
    if (page.changes.length < 500) break;
    times.push(g.ms);
    cursor = page.next_cursor;
  }
  return times;
}

async function portal(t: TestService, p: Partner, root: string, rows: Row[]): Promise<void> {
  const signIn = await fetch(`${root}/portal/entrar`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', Origin: root },
    body: `api_key=${encodeURIComponent(p.key)}`,
  });
  if (signIn.status !== 303) throw new Error(`portal sign-in: ${signIn.status}`);
  const cookie = { Cookie: signIn.headers.getSetCookie()[0].split(';')[0] };
  const mid = Math.floor(OFFERS_N / 2);
  const pages = [
    '/portal',
    '/portal/catalogo',
    '/portal/catalogo?estado=accepted',
    `/portal/catalogo?sku=sku-${mid}`,
    `/portal/produtos/sku-${mid}`,
    '/portal/extrato',
    '/portal/fechamentos',
    '/portal/lojas',
    `/portal/lojas/${STORE}`,
  ];
  const times: Record<string, number[]> = Object.fromEntries(pages.map((x) => [x, []]));
  // The process's CPU time (every thread: the door, the read store, the client) per page request: it moves far less
  // with the neighbours' load than the wall-clock times.
  const cpuMs: Record<string, number> = Object.fromEntries(pages.map((x) => [x, 0]));
  // Rounds over every page (a neighbour's burst falls on all of them), bounded in count and in time: a page slower
  // than its target would otherwise hold the run for minutes at this size.
  const budgetEnd = performance.now() + 120_000;
  for (let i = 0; i < Math.ceil(SAMPLES / 2) + 1 && (i < 4 || performance.now() < budgetEnd); i++) {
    for (const page of pages) {
      const cpu = process.cpuUsage();
      const g = ok(await get(`${root}${page}`, cookie, { keep: true }), page);
      const spent = process.cpuUsage(cpu);
      if (i >= 1) {
        // the first round warms up
        times[page].push(g.ms);
        cpuMs[page] += (spent.user + spent.system) / 1000;
      }
    }
    step(`portal round ${i + 1}`);
  }
  for (const page of pages)
    rows.push([
      `portal) ${page} p99`,
      `${f2(pct(times[page], 99))} ms`,
      `p50 ${f2(pct(times[page], 50))} ms, CPU ${f2(cpuMs[page] / times[page].length)} ms a request, over ${times[page].length}; target <= 100 ms`,
    ]);
}

// ------------------------------------------------------------------------------------------------ main

async function main(): Promise<void> {
  const loadStart = os.loadavg();
  // The catalog's events are clones recorded months before the clock the reads run at: the changes feed keeps them
  // (its retention would drop them, and the walk from the start would be a 410).
  const t = await startTestService({
    RATE_LIMIT_WRITES: '1000000000',
    RATE_LIMIT_READS: '1000000000',
    FEED_CHANGES_RETENTION_DAYS: '3650',
    // FEED_GZIP_LEVEL set: the full feed's gzip at that level (an A/B of the level), else the service's default.
    ...(process.env.FEED_GZIP_LEVEL ? { FEED_GZIP_LEVEL: process.env.FEED_GZIP_LEVEL } : {}),
    // FEED_OFFERS_PER_SECOND set: the feeds' budget for the run (e.g. 100000000: what the process can stream).
    ...(process.env.FEED_OFFERS_PER_SECOND ? { FEED_OFFERS_PER_SECOND: process.env.FEED_OFFERS_PER_SECOND } : {}),
  });
  const root = t.api.replace(/\/v1$/, '');
  const rows: Row[] = [];
  try {
    t.clock.set(new Date(SEPT - 86_400_000));
    step('partners, a store, a product, a conversion through the API');
    const p = await t.partner({ type: 'hub', env: 'live', name: 'Hub Bench' });
    const tenant: Tenant = { partnerId: p.partnerId, env: 'live' };
    const put = await p.api.put(
      `/stores/${STORE}`,
      storeBody({ default_commission: { type: 'percentage', rate: 10 } }),
    );
    if (put.status !== 200) throw new Error(`store: ${put.status} ${JSON.stringify(put.body)}`);
    const product = await p.api.put('/products/sku-0', productBody(STORE, { updated_at: t.clock.now().toISOString() }));
    if (product.status !== 200) throw new Error(`product: ${product.status} ${JSON.stringify(product.body)}`);
    const sku0 = await t.service.events.readStream(streams.product(tenant, 'sku-0'));
    const image = (sku0[0].data as { product: { image_urls: string[] } }).product.image_urls[0];
    const now = t.clock.now().toISOString();
    await t.service.events.appendToStream(streams.product(tenant, 'sku-0'), [
      {
        type: 'CoverChecked',
        data: { sku: 'sku-0', url: image, ok: true, reasons: [], checked_at: now },
        metadata: { recorded_at: now, actor: 'bench' },
      },
    ]);
    if ((await t.approveStore(p, STORE)).status !== 200) throw new Error('approve');
    // A live click needs the redirector: a test-key sandbox click gives the same order shape for the template.
    const testKey = await t.key(p.partnerId, 'test');
    const testPut = await testKey.api.put(`/stores/${STORE}`, storeBody());
    if (testPut.status !== 200) throw new Error(`test store: ${testPut.status}`);
    await testKey.api.put('/products/sku-0', productBody(STORE, { updated_at: now }));
    const click = await testKey.api.post('/sandbox/clicks', { store_id: STORE, sku: 'sku-0' });
    if (click.status !== 200) throw new Error(`click: ${click.status} ${JSON.stringify(click.body)}`);
    const paid = await testKey.api.post('/conversions', {
      event_id: 'tpl-paid',
      order_id: 'tpl',
      store_id: STORE,
      click_id: (click.body as { click_id: string }).click_id,
      status: 'paid',
      currency: 'BRL',
      paid_at: now,
      occurred_at: now,
      items: [{ sku: 'sku-0', quantity: 2, unit_price_cents: 4990, refunded_cents: 0 }],
    });
    if (paid.status !== 200) throw new Error(`conversion: ${paid.status} ${JSON.stringify(paid.body)}`);
    const orderTemplate = (
      await t.service.events.readStream(streams.order({ partnerId: p.partnerId, env: 'test' }, STORE, 'tpl'))
    ).find((e) => e.type === 'OrderPaid')!;
    const others: string[] = [];
    for (let i = 1; i < LEDGER_PARTNERS; i++) others.push((await t.partner({ name: `Other ${i}` })).partnerId);

    step(
      `ledger seed: ${int(LEDGER_SMALL)} orders in September, ${int(LEDGER_ROWS)} + ${int(LEDGER_NOISE)} in October`,
    );
    const seedStarted = Date.now();
    await seedOrders(t, orderTemplate, () => tenant, 'sep', LEDGER_SMALL, SEPT, DAYS_25);
    // October: the partner's orders and the other partners' interleaved, exactly LEDGER_NOISE of the latter.
    const total = LEDGER_ROWS + LEDGER_NOISE;
    const noise = (i: number) => Math.floor(((i + 1) * LEDGER_NOISE) / total) > Math.floor((i * LEDGER_NOISE) / total);
    await seedOrders(
      t,
      orderTemplate,
      (i) => (noise(i) ? { partnerId: others[i % others.length], env: 'live' } : tenant),
      'oct',
      total,
      OCT,
      DAYS_25,
    );
    const ledgerSeedS = (Date.now() - seedStarted) / 1000;
    t.clock.set(new Date(NOV));
    if (!PORTAL_ONLY && !FEED_ONLY) await ledger(t, p, rows);

    let catalogSeedS = 0;
    if (PORTAL_ONLY) {
      step(`catalog seed: ${int(OFFERS_N)} products`);
      const catalogStarted = Date.now();
      await seedCatalog(t, tenant, 1, OFFERS_N);
      catalogSeedS = (Date.now() - catalogStarted) / 1000;
      step('portal pages');
      await portal(t, p, root, rows);
    } else if (!LEDGER_ONLY) {
      step(`catalog seed: ${int(FEED_SMALL)} products`);
      const catalogStarted = Date.now();
      await seedCatalog(t, tenant, 1, FEED_SMALL);
      const small = await feed(t, root, 'small');
      step(`catalog seed: up to ${int(OFFERS_N)} products`);
      await seedCatalog(t, tenant, FEED_SMALL, OFFERS_N);
      catalogSeedS = (Date.now() - catalogStarted) / 1000;
      const large = await feed(t, root, 'large');
      const offers = large.plain.lines - 1;
      const perS = (g: Got) => (g.lines - 1) / (g.ms / 1000);
      const mb = (g: Got) => g.rssGrowth! / MB;
      rows.push(
        [
          `feeds) offers.tsv, ${int(offers)} offers`,
          `${int(perS(large.plain))} offers/s`,
          `${f1(large.plain.ms)} ms, ${f1(large.plain.bytes / MB)} MB (best of 2), CPU ${f1(large.plain.cpuMs)} ms (${f2((1000 * large.plain.cpuMs) / offers)} µs an offer); at ${int(small.plain.lines - 1)} offers ${int(perS(small.plain))}/s; target >= 100,000/s`,
        ],
        [
          'feeds) gzip / plain',
          f2(perS(large.gzip) / perS(large.plain)),
          `gzip ${int(perS(large.gzip))} offers/s, ${f1(large.gzip.bytes / MB)} MB on the wire, CPU ${f1(large.gzip.cpuMs)} ms; target >= 0.5`,
        ],
        [
          `feeds) RSS growth, ${int(small.plain.lines - 1)} vs ${int(offers)} offers`,
          `${f1(mb(small.plain))} vs ${f1(mb(large.plain))} MB`,
          `difference ${f1(mb(large.plain) - mb(small.plain))} MB (gzip: ${f1(mb(small.gzip))} vs ${f1(mb(large.gzip))} MB); target flat within 50 MB`,
        ],
      );
      step('feeds: /feeds/changes pages of 500');
      const ch = await changes(t, root);
      rows.push([
        'feeds) /feeds/changes page of 500 p99',
        `${f2(pct(ch, 99))} ms`,
        `p50 ${f2(pct(ch, 50))} ms over ${ch.length} full pages walked from the start; target <= 20 ms`,
      ]);

      if (!FEED_ONLY) {
        step('portal pages');
        await portal(t, p, root, rows);
      }
    }

    const loadEnd = os.loadavg();
    const seconds = Math.round((Date.now() - started) / 1000);
    const width = Math.max(...rows.map((r) => r[0].length));
    process.stdout.write(`\n${rows.map(([a, b, c]) => `${a.padEnd(width)}  ${b.padStart(18)}  ${c}`).join('\n')}\n`);
    const markdown = [
      `Whole run: ${seconds} s (ledger seed ${f1(ledgerSeedS)} s, catalog seed ${f1(catalogSeedS)} s). Load average (1/5/15 min) at the start ${loadStart.map(f1).join(' / ')}, at the end ${loadEnd.map(f1).join(' / ')} (other work shares these cores).`,
      '',
      `Sizes: ledger ${int(LEDGER_ROWS)} movements in October and ${int(LEDGER_SMALL)} in September for the measured partner, ${int(LEDGER_NOISE)} more in October over ${LEDGER_PARTNERS - 1} other partners; catalog ${int(OFFERS_N)} live searchable SKUs of one store (feeds read at ${int(FEED_SMALL)} and at ${int(OFFERS_N)}).`,
      '',
      '| Measure | Figure | Detail |',
      '| --- | --- | --- |',
      ...rows.map(([a, b, c]) => `| ${a} | ${b} | ${c} |`),
      '',
    ].join('\n');
    const file = writeBenchResults('bench-read-paths', {
      command: `${process.env.BENCH_ONLY ? `BENCH_ONLY=${process.env.BENCH_ONLY} ` : ''}BENCH_READ_SAMPLES=${SAMPLES} BENCH_LEDGER_ROWS=${LEDGER_ROWS} BENCH_LEDGER_SMALL=${LEDGER_SMALL} BENCH_LEDGER_NOISE=${LEDGER_NOISE} BENCH_LEDGER_PARTNERS=${LEDGER_PARTNERS} BENCH_OFFERS=${OFFERS_N} BENCH_FEED_SMALL=${FEED_SMALL} ${process.env.FEED_OFFERS_PER_SECOND ? `FEED_OFFERS_PER_SECOND=${process.env.FEED_OFFERS_PER_SECOND} ` : ''}node dist/tests/bench/read-paths-bench.js`,
      figures: {
        rows: Object.fromEntries(rows.map(([m, fig, d]) => [m, { figure: fig, detail: d }])),
        seconds,
        loadavg_start: loadStart,
        loadavg_end: loadEnd,
      },
      markdown,
    });
    process.stdout.write(`figures written to ${file}\n`);
  } finally {
    agent.destroy();
    await t.close();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`read-paths bench failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
