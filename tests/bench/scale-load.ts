/**
 * The load generator of `make bench-scale` (tests/bench/scale.ts), run as its own process (fork, IPC) so that it
 * never shares an event loop with what it measures. It receives `init` (the partners and their catalogs) and then
 * one job per message, and answers each with a summary. Loopback only: every request goes through `send`.
 *
 * Each partner's live key writes at most WRITE_RATE a second with a burst of WRITE_RATE (≤ 549 writes in any minute,
 * under the contract's 600) and reads at most READ_RATE a second; when the drawn request's key has no budget left,
 * another request is drawn. Against the bare node:http server (`brake: false`) the same code sends the same mix
 * without that budget (the bare server has no brake, and the budget would bound it rather than the server).
 */
import type http from 'node:http';
import { keepAliveAgent, send } from '../support/keep-alive.js';

export interface PartnerPlan {
  partnerId: string;
  live: string;
  test: string;
  stores: string[];
  testStore: string;
  click: string;
  /** SKUs `p{index}-{n}`, n < count, loaded in phase A; the store of n is stores[n % stores.length]. */
  count: number;
}

export interface Mix {
  patch: number;
  put: number;
  read: number;
  conversion: number;
  batch: number;
}

export type ScaleJob =
  | { kind: 'init'; partners: PartnerPlan[]; imageBase: string }
  | {
      kind: 'batches';
      base: string;
      brake: boolean;
      /** Batches of one partner's catalog range [from, from + items). */
      batches: { partner: number; from: number; items: number }[];
      concurrency: number;
      /** Poll GET /jobs/{id} until done (the service); the bare server only answers the POST. */
      waitDone: boolean;
      timeoutMs: number;
    }
  | {
      kind: 'mix';
      base: string;
      brake: boolean;
      mix: Mix;
      concurrency: number;
      durationMs: number;
      /** Open loop: requests started on a fixed schedule. */
      ratePerSec?: number;
      /** Items of a batch in the mix (upserts of the partner's own SKUs). */
      batchItems: number;
      /** 1 in `lagEvery` PATCHes is followed by a GET of the same product with the same key (read-your-writes). */
      lagEvery: number;
      /**
       * 1 in `eventsLagEvery` PUTs of a new SKU is followed, at once and together, by a GET of the product and by
       * GET /v1/events after the partner's last cursor until the SKU's first `product.state_changed` is in it.
       */
      eventsLagEvery?: number;
    };

export interface Stat {
  count: number;
  p50: number;
  p99: number;
  max: number;
}

export interface ScaleResult {
  answered: number;
  elapsedMs: number;
  byType: Record<string, Stat>;
  statuses: Record<string, number>;
  errors: number;
  /** PATCH answered → GET of that product answered (the GET waits until the projections passed the write). */
  lag?: Stat;
  /** New SKU's PUT answered → GET /v1/events answered holding its first notification. */
  eventsLag?: Stat;
  /** The same PUTs: PUT answered → GET of the product answered (sent with the first GET /v1/events). */
  putLag?: Stat;
  /** Notification samples given up: a 429, or the notification not seen within 10 s. */
  eventsLagMissed?: number;
  /** Batches: items/s from the first POST to the last job done (or the last POST answer without waitDone). */
  itemsPerSec?: number;
  /** Deepest page reached in product lists. */
  maxDepth?: number;
  loadCpuUsPerAnswer: number;
  /** Draws skipped because the drawn key had no budget left (brake on). */
  budgetRedraws: number;
}

const WRITE_RATE = 9;
const READ_RATE = 18;
const IMAGES = ['800x600.jpg', '800x600.png', '800x600.webp'];
const SMALL = ['500x500.jpg', '499x800.png', '500x500.webp'];

let partners: PartnerPlan[] = [];
let imageBase = '';
/** Prefix sums of the base catalog counts, for the global index → partner. */
let prefix: number[] = [];
let total = 0;
const added: number[] = [];
const cursors: (string | null)[][] = [];
const paidOrders: { partner: number; order: string; paidAt: string }[][] = [];
let orderSeq = 0;
let stamp = Date.now() - 60_000;
const nextStamp = () => new Date((stamp = Math.max(stamp + 1, Date.now() - 60_000))).toISOString();
const buckets = new Map<string, { tokens: number; at: number }>();

function take(key: string, rate: number): boolean {
  const now = performance.now();
  let b = buckets.get(key);
  if (!b) buckets.set(key, (b = { tokens: rate, at: now }));
  b.tokens = Math.min(rate, b.tokens + ((now - b.at) / 1000) * rate);
  b.at = now;
  if (b.tokens < 1) return false;
  b.tokens -= 1;
  return true;
}

function init(job: Extract<ScaleJob, { kind: 'init' }>): void {
  partners = job.partners;
  imageBase = job.imageBase;
  prefix = [];
  total = 0;
  for (const p of partners) {
    prefix.push(total);
    total += p.count;
  }
  added.length = 0;
  cursors.length = 0;
  paidOrders.length = 0;
  buckets.clear();
  for (let i = 0; i < partners.length; i++) {
    added.push(0);
    cursors.push([null]);
    paidOrders.push([]);
  }
}

/** Which partner holds the global catalog index `g`. */
function partnerOf(g: number): number {
  let lo = 0;
  let hi = prefix.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (prefix[mid] <= g) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** A rank drawn from a Zipf law (s = 1) over `n` items, scattered over the catalog by a fixed hash. */
function zipfIndex(n: number): number {
  const rank = Math.min(n - 1, Math.floor(Math.exp(Math.random() * Math.log(n + 1))) - 1);
  return (Math.imul(rank + 1, 2654435761) >>> 0) % n;
}

export function skuOf(partner: number, n: number): string {
  return `p${partner}-${n}`;
}

export function productBody(
  plan: PartnerPlan,
  partner: number,
  n: number,
  base: string,
  updatedAt: string,
): Record<string, unknown> {
  const sku = skuOf(partner, n);
  const h = (Math.imul(partner * 1_000_003 + n, 2246822519) >>> 0) % 100;
  const path = h < 5 ? '/status/404' : h < 15 ? `/img/${SMALL[h % 3]}` : `/img/${IMAGES[h % 3]}`;
  return {
    store_id: plan.stores[n % plan.stores.length],
    title: `Produto ${sku} de algodão, tamanho M`,
    description: 'Camiseta de algodão penteado, gola careca, manga curta.',
    brand: 'Marca',
    product_url: `https://shop.test/p/${sku}`,
    image_urls: [`${base}${path}`],
    price_cents: 1000 + ((n * 37) % 90_000),
    available: true,
    stock_quantity: n % 50,
    updated_at: updatedAt,
  };
}

const percentiles = (xs: number[]): Stat => {
  const s = [...xs].sort((a, b) => a - b);
  const at = (p: number) => (s.length ? s[Math.min(s.length - 1, Math.floor(p * s.length))] : NaN);
  return { count: s.length, p50: at(0.5), p99: at(0.99), max: s.length ? s[s.length - 1] : NaN };
};

async function batches(job: Extract<ScaleJob, { kind: 'batches' }>): Promise<ScaleResult> {
  const agent = keepAliveAgent(job.concurrency * 2);
  const statuses: Record<string, number> = {};
  const lat: number[] = [];
  let errors = 0;
  let redraws = 0;
  let next = 0;
  let items = 0;
  const cpu0 = process.cpuUsage();
  const started = performance.now();
  const deadline = started + job.timeoutMs;
  let last = started;
  const worker = async () => {
    while (next < job.batches.length && performance.now() < deadline) {
      const b = job.batches[next++];
      const plan = partners[b.partner];
      const auth = { Authorization: `Bearer ${plan.live}` };
      while (job.brake && !take(plan.live, WRITE_RATE)) {
        redraws++;
        await new Promise((r) => setTimeout(r, 20));
      }
      const at = nextStamp();
      const body = JSON.stringify({
        items: Array.from({ length: b.items }, (_, i) => ({
          op: 'upsert',
          sku: skuOf(b.partner, b.from + i),
          product: productBody(plan, b.partner, b.from + i, imageBase, at),
        })),
      });
      const t0 = performance.now();
      try {
        const r = await send(agent, new URL(`${job.base}/products/batch`), 'POST', body, auth);
        statuses[r.status] = (statuses[r.status] ?? 0) + 1;
        if (r.status !== 202 && r.status !== 200) continue;
        if (job.waitDone) {
          const id = (JSON.parse(r.text) as { job_id: string }).job_id;
          for (;;) {
            await new Promise((res) => setTimeout(res, 100));
            if (job.brake && !take(`${plan.live}:read`, READ_RATE)) continue;
            const j = await send(agent, new URL(`${job.base}/jobs/${id}`), 'GET', undefined, auth);
            if (j.status !== 200) {
              statuses[`jobs ${j.status}`] = (statuses[`jobs ${j.status}`] ?? 0) + 1;
              continue;
            }
            const state = (JSON.parse(j.text) as { state: string }).state;
            if (state === 'done') break;
            if (state === 'failed') throw new Error(`batch job ${id} failed`);
            if (performance.now() > deadline) throw new Error(`batch job ${id} not done in time`);
          }
        }
        lat.push(performance.now() - t0);
        items += b.items;
        last = performance.now();
      } catch {
        errors++;
      }
    }
  };
  await Promise.all(Array.from({ length: job.concurrency }, worker));
  agent.destroy();
  const cpu = process.cpuUsage(cpu0);
  return {
    answered: lat.length,
    elapsedMs: last - started,
    byType: { batch: percentiles(lat) },
    statuses,
    errors,
    itemsPerSec: (items / (last - started)) * 1000,
    loadCpuUsPerAnswer: (cpu.user + cpu.system) / Math.max(1, lat.length),
    budgetRedraws: redraws,
  };
}

type Op = {
  type: string;
  method: string;
  path: string;
  key: string;
  body?: string;
  after?: (text: string) => void;
  lagOf?: { key: string; path: string };
  eventsOf?: { partner: number; key: string; sku: string };
};

function draw(job: Extract<ScaleJob, { kind: 'mix' }>, n: number): Op | null {
  const m = job.mix;
  const sum = m.patch + m.put + m.read + m.conversion + m.batch;
  let u = Math.random() * sum;
  const pick = (w: number) => (u -= w) < 0;
  if (pick(m.patch)) {
    const g = zipfIndex(total);
    const p = partnerOf(g);
    const plan = partners[p];
    if (job.brake && !take(plan.live, WRITE_RATE)) return null;
    const sku = skuOf(p, g - prefix[p]);
    const body =
      n % 2 === 0
        ? { price_cents: 1000 + (n % 90_000), updated_at: nextStamp() }
        : { stock_quantity: n % 60, available: n % 60 !== 0, updated_at: nextStamp() };
    const op: Op = {
      type: 'patch',
      method: 'PATCH',
      path: `/products/${sku}`,
      key: plan.live,
      body: JSON.stringify(body),
    };
    if (job.lagEvery > 0 && n % job.lagEvery === 0 && (!job.brake || take(`${plan.live}:read`, READ_RATE)))
      op.lagOf = { key: plan.live, path: `/products/${sku}` };
    return op;
  }
  if (pick(m.put)) {
    const p = Math.floor(Math.random() * partners.length);
    const plan = partners[p];
    if (job.brake && !take(plan.live, WRITE_RATE)) return null;
    const k = plan.count + added[p]++;
    const op: Op = {
      type: 'put',
      method: 'PUT',
      path: `/products/${skuOf(p, k)}`,
      key: plan.live,
      body: JSON.stringify(productBody(plan, p, k, imageBase, nextStamp())),
    };
    const every = job.eventsLagEvery ?? 0;
    if (every > 0 && n % every === 0 && (!job.brake || take(`${plan.live}:read`, READ_RATE)))
      op.eventsOf = { partner: p, key: plan.live, sku: skuOf(p, k) };
    return op;
  }
  if (pick(m.read)) {
    const g = zipfIndex(total);
    const p = partnerOf(g);
    const plan = partners[p];
    const r = Math.random();
    const key = r < 0.85 ? plan.live : plan.test;
    if (job.brake && !take(`${key}:read`, READ_RATE)) return null;
    if (r < 0.45) return { type: 'get-product', method: 'GET', path: `/products/${skuOf(p, g - prefix[p])}`, key };
    if (r < 0.85) {
      const pool = cursors[p];
      const depth = Math.floor(Math.random() * pool.length);
      const cursor = pool[depth];
      return {
        type: 'list-products',
        method: 'GET',
        path: `/products?limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        key,
        after: (text) => {
          if (depth !== pool.length - 1 || pool.length >= 10_000) return;
          try {
            const nextCursor = (JSON.parse(text) as { next_cursor?: string | null }).next_cursor;
            if (nextCursor) pool.push(nextCursor);
          } catch {
            /* the bare server's answer */
          }
        },
      };
    }
    return { type: 'list-clicks', method: 'GET', path: '/clicks?limit=50', key };
  }
  if (pick(m.conversion)) {
    const p = Math.floor(Math.random() * partners.length);
    const plan = partners[p];
    if (job.brake && !take(plan.test, WRITE_RATE)) return null;
    const orders = paidOrders[p];
    const now = new Date().toISOString();
    const refund = orders.length > 0 && Math.random() < 0.3;
    const o = refund ? orders.shift()! : { partner: p, order: `o-${process.pid}-${++orderSeq}`, paidAt: now };
    if (!refund && orders.length < 1000) orders.push(o);
    return {
      type: refund ? 'conversion-refund' : 'conversion-paid',
      method: 'POST',
      path: '/conversions',
      key: plan.test,
      body: JSON.stringify({
        event_id: `e-${o.order}-${refund ? 'r' : 'p'}`,
        order_id: o.order,
        store_id: plan.testStore,
        click_id: plan.click,
        status: refund ? 'refunded' : 'paid',
        currency: 'BRL',
        paid_at: o.paidAt,
        occurred_at: refund ? (now > o.paidAt ? now : new Date(Date.parse(o.paidAt) + 1).toISOString()) : o.paidAt,
        items: [{ sku: 'tp-1', quantity: 2, unit_price_cents: 1990, refunded_cents: refund ? 3980 : 0 }],
      }),
    };
  }
  const g = zipfIndex(total);
  const p = partnerOf(g);
  const plan = partners[p];
  if (job.brake && !take(plan.live, WRITE_RATE)) return null;
  const count = plan.count + added[p];
  const from = count > job.batchItems ? Math.floor(Math.random() * (count - job.batchItems)) : 0;
  const at = nextStamp();
  const items = Array.from({ length: Math.min(job.batchItems, Math.max(1, count)) }, (_, i) => ({
    op: 'upsert',
    sku: skuOf(p, from + i),
    product: productBody(plan, p, from + i, imageBase, at),
  }));
  return { type: 'batch', method: 'POST', path: '/products/batch', key: plan.live, body: JSON.stringify({ items }) };
}

/** The last `next_cursor` of each partner's GET /v1/events?type=product.state_changed (live key), by partner index. */
const eventTails = new Map<number, string>();
const EVENTS = '/events?type=product.state_changed&limit=200';

type EventsPage = { data: { data: { sku?: string } }[]; next_cursor: string };

/**
 * Walks a partner's notifications to their end, untimed, so that a sample then reads only what came after its write:
 * the cursor is signed by the service, so only the service can hand it out. False on anything but 200.
 */
async function walkToTail(agent: http.Agent, base: string, partner: number, key: string): Promise<boolean> {
  let cursor = eventTails.get(partner);
  for (;;) {
    const r = await send(
      agent,
      new URL(`${base}${EVENTS}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`),
      'GET',
      undefined,
      { Authorization: `Bearer ${key}` },
    );
    if (r.status !== 200) return false;
    const page = JSON.parse(r.text) as EventsPage;
    cursor = page.next_cursor;
    eventTails.set(partner, cursor);
    if (page.data.length < 200) return true;
  }
}

/**
 * From the partner's last cursor, GET /v1/events until the SKU's notification is in a page: the time from `t1` to
 * that answer, or null (a 429, or not seen within 10 s). The first GET waits, as every read does, until the
 * projections passed the partner's last write.
 */
async function notificationSeen(
  agent: http.Agent,
  base: string,
  of: { partner: number; key: string; sku: string },
  t1: number,
): Promise<number | null> {
  let cursor = eventTails.get(of.partner)!;
  while (performance.now() - t1 < 10_000) {
    const r = await send(agent, new URL(`${base}${EVENTS}&cursor=${encodeURIComponent(cursor)}`), 'GET', undefined, {
      Authorization: `Bearer ${of.key}`,
    });
    if (r.status !== 200) return null;
    const page = JSON.parse(r.text) as EventsPage;
    const seen = page.data.some((n) => n.data.sku === of.sku);
    cursor = page.next_cursor;
    if (seen) {
      const ms = performance.now() - t1;
      eventTails.set(of.partner, cursor);
      return ms;
    }
    if (page.data.length === 0) await new Promise((resolve) => setTimeout(resolve, 1));
  }
  return null;
}

async function mix(job: Extract<ScaleJob, { kind: 'mix' }>): Promise<ScaleResult> {
  const agent = keepAliveAgent(job.concurrency + 8);
  const lat: Record<string, number[]> = {};
  const lags: number[] = [];
  const eventsLags: number[] = [];
  const putLags: number[] = [];
  let eventsMissed = 0;
  const statuses: Record<string, number> = {};
  let errors = 0;
  let redraws = 0;
  let issued = 0;
  let answered = 0;
  const cpu0 = process.cpuUsage();
  const started = performance.now();
  const deadline = started + job.durationMs;
  const interval = job.ratePerSec ? 1000 / job.ratePerSec : 0;
  const one = async (): Promise<void> => {
    const n = issued++;
    if (interval > 0) {
      const wait = started + n * interval - performance.now();
      if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    }
    let op: Op | null = null;
    for (let tries = 0; !op; tries++) {
      op = draw(job, n);
      if (!op) {
        redraws++;
        if (tries % 50 === 49) await new Promise((r) => setTimeout(r, 5));
        if (performance.now() > deadline) return;
      }
    }
    if (op.eventsOf && !(await walkToTail(agent, job.base, op.eventsOf.partner, op.eventsOf.key))) {
      eventsMissed++;
      delete op.eventsOf;
    }
    const t0 = performance.now();
    try {
      const reply = await send(agent, new URL(`${job.base}${op.path}`), op.method, op.body, {
        Authorization: `Bearer ${op.key}`,
      });
      const ms = performance.now() - t0;
      const tag = `${op.type} ${reply.status}`;
      statuses[tag] = (statuses[tag] ?? 0) + 1;
      if (reply.status >= 200 && reply.status < 300) {
        answered++;
        (lat[op.type] ??= []).push(ms);
        op.after?.(reply.text);
        if (op.lagOf) {
          const t1 = performance.now();
          const g = await send(agent, new URL(`${job.base}${op.lagOf.path}`), 'GET', undefined, {
            Authorization: `Bearer ${op.lagOf.key}`,
          });
          if (g.status === 200) lags.push(performance.now() - t1);
        }
        if (op.eventsOf) {
          const of = op.eventsOf;
          const t1 = performance.now();
          const [product, events] = await Promise.all([
            send(agent, new URL(`${job.base}${op.path}`), 'GET', undefined, { Authorization: `Bearer ${of.key}` }).then(
              (g) => (g.status === 200 ? performance.now() - t1 : null),
            ),
            notificationSeen(agent, job.base, of, t1),
          ]);
          if (product !== null) putLags.push(product);
          if (events !== null) eventsLags.push(events);
          else eventsMissed++;
        }
      }
    } catch {
      errors++;
    }
  };
  const loop = async () => {
    while (performance.now() < deadline) await one();
  };
  // Open loop: enough in flight that the schedule, not the answers, sets the pace.
  await Promise.all(Array.from({ length: job.concurrency }, loop));
  const elapsedMs = performance.now() - started;
  agent.destroy();
  const cpu = process.cpuUsage(cpu0);
  const byType: Record<string, Stat> = {};
  for (const [t, xs] of Object.entries(lat)) byType[t] = percentiles(xs);
  byType.all = percentiles(Object.values(lat).flat());
  return {
    answered,
    elapsedMs,
    byType,
    statuses,
    errors,
    ...(lags.length ? { lag: percentiles(lags) } : {}),
    ...(eventsLags.length ? { eventsLag: percentiles(eventsLags) } : {}),
    ...(putLags.length ? { putLag: percentiles(putLags) } : {}),
    ...(job.eventsLagEvery ? { eventsLagMissed: eventsMissed } : {}),
    maxDepth: Math.max(0, ...cursors.map((c) => c.length - 1)),
    loadCpuUsPerAnswer: (cpu.user + cpu.system) / Math.max(1, answered),
    budgetRedraws: redraws,
  };
}

export const SCALE_WORKER_FLAG = '--bench-scale-load';
if (process.send && process.argv.includes(SCALE_WORKER_FLAG)) {
  process.on('message', (job: ScaleJob) => {
    const work: Promise<ScaleResult | null> =
      job.kind === 'init' ? Promise.resolve((init(job), null)) : job.kind === 'batches' ? batches(job) : mix(job);
    void work.then(
      (result) => process.send!({ ok: true, result }),
      (err: unknown) => process.send!({ ok: false, error: err instanceof Error ? err.stack : String(err) }),
    );
  });
  process.on('disconnect', () => process.exit(0));
}
