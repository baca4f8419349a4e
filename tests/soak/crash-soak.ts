/**
 * `make soak` (node dist/tests/soak/crash-soak.js): crash trials at volume against the embedded default. Not part of
 * `make test`.
 *
 * The service runs as a child process (`node dist/infra/main.js`, tests/support/child-service.ts) on a DATA_DIR, with
 * the real cover check against the loopback HTTPS image server of this process (tests/support/https-image-server.ts).
 * Each trial drives a mixed load at it from several concurrent loops —
 *   - writers: PUT / PATCH of a few live SKUs, price 1000 + n and updated_at increasing with n (a PUT every third);
 *   - batches: a loop POSTing a batch of 200 to 1000 upserts over a pool of 1000 SKUs, then polling the job until it
 *     is done (so the kill finds batches queued or mid-chunk);
 *   - conversions (test key): a sandbox click, then `paid`, `refunded` and sometimes `cancelled` for a new order;
 *   - covers: new live products whose cover answers after 200 to 1500 ms (`/delay/…`), so checks are in flight,
 *     some of them rejected (too small, 404);
 * — records every acknowledged write (a 2xx answer and what it promised), SIGKILLs the service at a seeded random
 * moment, starts it again on the same DATA_DIR and checks:
 *   1. every acknowledged write is there: each acked PUT/PATCH is in its product stream and GET shows it or a later
 *      one; each acked job reaches `done` with received = accepted + rejected + pending + removed = its items; each
 *      acked click and conversion event is in the log; resending an acked conversion answers `duplicate`;
 *   2. nothing is applied twice: a write's n appears once in its stream; each item of a job has one chunk outcome and
 *      at most one product event; one BatchStarted / BatchDone per job; a conversion event_id appears once in its
 *      order stream and its reservation once; at most one cover result per send; no job or write that was never sent;
 *   3. the cover checks and jobs owed at the kill are resumed (every current cover gets a result, every job finishes);
 *   4. the read models equal a replay of the log (tests/support/replay.ts) once the projections caught up.
 * Unacknowledged conversion events are sent again (the client's retry), then checked like acknowledged ones.
 * The restarted process carries the next trial's load. A fresh DATA_DIR (with a fresh set-up) every
 * SOAK_TRIALS_PER_DIR trials bounds the replay's cost; within one the log grows across the trials.
 *
 * Variables: SOAK_TRIALS (default 100), SOAK_SEED (default 1), SOAK_POOL (batch SKUs, default 1000; batches of
 * min(200, pool) to pool items), SOAK_TRIALS_PER_DIR (default 25), SOAK_KILL_MS
 * (`min-max` after the load starts, default 300-2500). The figures go to .bench/soak.json and .bench/soak.md
 * (tests/support/bench-results.ts). Exit 1 on any failure (the first failures are printed
 * with seed and trial). Traffic goes to 127.0.0.1 only.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { client, productBody, storeBody, type Client } from '../support/service.js';
import { spawnService, type ChildService } from '../support/child-service.js';
import { keepAliveAgent, send } from '../support/keep-alive.js';
import { compareWithReplay, projectionProgress } from '../support/replay.js';
import { startImageServers, type ImageServers } from '../support/https-image-server.js';
import { coverTestEnv, type CoverEnv } from '../support/cover-env.js';
import { writeBenchResults } from '../support/bench-results.js';
import { SqliteEventStore } from '../../infra/adapters/sqlite/event-store.js';
import type { RecordedEvent } from '../../shared-schema/ports/event-store.js';
import { streams, type Tenant } from '../../shared-schema/domain/streams.js';
import type { ItemOutcome, JobTotals } from '../../shared-schema/events/job.js';
import type { OrderEventData, ConversionReceipt } from '../../shared-schema/events/order.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '../../..');

function intEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer, got "${raw}"`);
  return n;
}
const TRIALS = intEnv('SOAK_TRIALS', 100);
const SEED = intEnv('SOAK_SEED', 1);
const PER_DIR = Math.max(1, intEnv('SOAK_TRIALS_PER_DIR', 25));
const [KILL_MIN, KILL_MAX] = (process.env.SOAK_KILL_MS || '300-2500').split('-').map(Number) as [number, number];
const ADMIN_TOKEN = 'soak-admin-token-0123456789abcdef';
const WRITER_SKUS = 8;
const POOL = Math.min(1000, Math.max(1, intEnv('SOAK_POOL', 1000)));
const LIVE_STORE = 'soak-live';
const TEST_STORE = 'soak-test';
const TEST_SKUS = ['t-0', 't-1', 't-2', 't-3'];
/** updated_at of product writes: a second per step after a base 12 h back, so 100 trials stay far from "24 h ahead". */
const BASE_MS = Date.now() - 12 * 3600_000;
const at = (step: number) => new Date(BASE_MS + step * 1000).toISOString();

/** mulberry32: a small seeded generator, so that a seed replays the same choices (not the same timings). */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Account {
  partnerId: string;
  key: string;
}

interface Writer {
  sku: string;
  next: number;
  sent: Set<number>;
  acked: number[];
}

interface JobRecord {
  jobId: string;
  items: number;
  trial: number;
}

interface ConvEvent {
  body: Record<string, unknown>;
  eventId: string;
  status: 'paid' | 'refunded' | 'cancelled';
  refunded: number;
  sent: boolean;
  acked: boolean;
  trial: number;
}

interface Order {
  orderId: string;
  clickId: string;
  events: ConvEvent[];
}

interface CoverProduct {
  sku: string;
  expect: 'accepted' | 'rejected';
  acked: boolean;
  /** When its image server answers at the earliest (acknowledgement + delay), epoch ms. */
  answersAt: number;
}

/** Everything one DATA_DIR has been sent and has acknowledged. */
interface Segment {
  index: number;
  dir: string;
  live: Account;
  test: Account;
  writers: Writer[];
  batchSeq: number;
  /** Job ids acknowledged (202), and how many batches were sent per pool with what size (to recognise any job). */
  jobs: Map<string, JobRecord>;
  sentBatchSizes: Set<string>;
  clicksAcked: Set<string>;
  orders: Order[];
  covers: CoverProduct[];
  seq: number;
}

interface Figures {
  trials: number;
  ackedWrites: number;
  ackedByKind: Record<string, number>;
  unackedResolved: number;
  losses: string[];
  doubles: string[];
  replayMismatches: string[];
  other: string[];
  replayDocuments: number;
  logEvents: number;
  killsMidBatch: number;
  killsWithCoverInFlight: number;
  coversInFlight: number;
}

const figures: Figures = {
  trials: 0,
  ackedWrites: 0,
  ackedByKind: {},
  unackedResolved: 0,
  losses: [],
  doubles: [],
  replayMismatches: [],
  other: [],
  replayDocuments: 0,
  logEvents: 0,
  killsMidBatch: 0,
  killsWithCoverInFlight: 0,
  coversInFlight: 0,
};
const problems = () =>
  figures.losses.length + figures.doubles.length + figures.replayMismatches.length + figures.other.length;
const acked = (kind: string) => {
  figures.ackedWrites += 1;
  figures.ackedByKind[kind] = (figures.ackedByKind[kind] ?? 0) + 1;
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const log = (line: string) => process.stdout.write(`${line}\n`);

async function waitFor(
  what: string,
  ms: number,
  condition: () => Promise<boolean> | boolean,
  intervalMs = 50,
): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await sleep(intervalMs);
  }
}

class Soak {
  private readonly random = rng(SEED);
  private servers!: ImageServers;
  private cover!: CoverEnv;
  private service!: ChildService;
  private segment!: Segment;
  private trial = 0;
  private readonly started = Date.now();

  async run(): Promise<number> {
    this.servers = await startImageServers();
    this.cover = coverTestEnv(this.servers, { extra: { COVER_RECHECK_SCAN_MS: '1000' } });
    const loadBefore = os.loadavg()[0];
    log(
      `crash soak: ${TRIALS} trials, seed ${SEED}, a fresh DATA_DIR every ${PER_DIR} trials, kill ${KILL_MIN}-${KILL_MAX} ms into the load`,
    );
    try {
      for (this.trial = 1; this.trial <= TRIALS; this.trial++) {
        if ((this.trial - 1) % PER_DIR === 0) await this.newSegment();
        const t0 = Date.now();
        try {
          await this.runTrial();
        } catch (err) {
          figures.other.push(`trial ${this.trial}: ${err instanceof Error ? err.message : String(err)}`);
          log(
            `trial ${this.trial}: ERROR ${err instanceof Error ? err.stack : String(err)}\n${this.service?.tail().split('\n').slice(-10).join('\n')}`,
          );
          break;
        }
        figures.trials += 1;
        log(
          `trial ${String(this.trial).padStart(3)} ok in ${((Date.now() - t0) / 1000).toFixed(1)} s; acked so far ${figures.ackedWrites}; problems ${problems()}`,
        );
        if (problems() > 0) break;
      }
    } finally {
      await this.stopService();
      this.removeSegmentDir();
      await this.servers.close();
      this.cover.cleanup();
    }
    const seconds = Math.round((Date.now() - this.started) / 1000);
    const ok = problems() === 0 && figures.trials === TRIALS;
    this.report(seconds, loadBefore, ok);
    return ok ? 0 : 1;
  }

  private env(dir: string): Record<string, string> {
    return {
      ...this.cover.env,
      DATA_DIR: dir,
      ADMIN_TOKEN,
      CLOCK: 'system',
      RATE_LIMIT_WRITES: '10000000',
      RATE_LIMIT_READS: '10000000',
      // info: the start-up line that names the ports is an info line (tests/support/child-service.ts reads it).
      LOG_LEVEL: 'info',
    };
  }

  private async startService(): Promise<void> {
    this.service = await spawnService(this.env(this.segment.dir), 60_000);
  }

  private async stopService(): Promise<void> {
    const s = this.service;
    if (!s || s.process.exitCode !== null || s.process.signalCode !== null) return;
    s.process.kill('SIGKILL');
    await s.exited;
  }

  private removeSegmentDir(): void {
    if (this.segment) fs.rmSync(this.segment.dir, { recursive: true, force: true });
  }

  private api(account: Account): Client {
    return client(this.service.api, account.key);
  }

  private admin(): Client {
    return client(this.service.admin, ADMIN_TOKEN);
  }

  private async newSegment(): Promise<void> {
    await this.stopService();
    this.removeSegmentDir();
    const index = this.segment ? this.segment.index + 1 : 1;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-soak-'));
    this.segment = {
      index,
      dir,
      live: { partnerId: '', key: '' },
      test: { partnerId: '', key: '' },
      writers: [],
      batchSeq: 0,
      jobs: new Map(),
      sentBatchSizes: new Set(),
      clicksAcked: new Set(),
      orders: [],
      covers: [],
      seq: 0,
    };
    await this.startService();
    const admin = this.admin();
    const account = async (env: 'live' | 'test', name: string): Promise<Account> => {
      const partner = await admin.post('/partners', { name, partner_type: 'hub' });
      if (partner.status !== 201) throw new Error(`partner: ${partner.status} ${JSON.stringify(partner.body)}`);
      const key = await admin.post(`/partners/${partner.body.partner_id}/keys`, { environment: env });
      if (key.status !== 201) throw new Error(`key: ${key.status} ${JSON.stringify(key.body)}`);
      return { partnerId: partner.body.partner_id as string, key: key.body.api_key as string };
    };
    const s = this.segment;
    s.live = await account('live', 'Soak Hub Live');
    s.test = await account('test', 'Soak Hub Test');
    // A 100 % commission: the product read model's expected_commission_cents is its price, i.e. which write it shows.
    const commission = { default_commission: { type: 'percentage', rate: 100 } };
    const okStore = async (a: Account, store: string) => {
      const r = await this.api(a).put(`/stores/${store}`, storeBody(commission));
      if (r.status !== 200) throw new Error(`store ${store}: ${r.status} ${JSON.stringify(r.body)}`);
    };
    await okStore(s.live, LIVE_STORE);
    await okStore(s.test, TEST_STORE);
    const approved = await admin.post(`/partners/${s.live.partnerId}/live/stores/${LIVE_STORE}/approve`, {});
    if (approved.status !== 200) throw new Error(`approve: ${approved.status} ${JSON.stringify(approved.body)}`);
    for (const sku of TEST_SKUS) {
      const r = await this.api(s.test).put(
        `/products/${sku}`,
        productBody(TEST_STORE, { image_urls: [this.img('/img/800x600.jpg')], updated_at: at(0) }),
      );
      if (r.status !== 200) throw new Error(`test product: ${r.status} ${JSON.stringify(r.body)}`);
    }
    s.writers = Array.from({ length: WRITER_SKUS }, (_, i) => ({
      sku: `w-${i}`,
      next: 1,
      sent: new Set<number>(),
      acked: [],
    }));
    log(`segment ${index}: DATA_DIR ${dir}`);
  }

  private img(p: string): string {
    return this.servers.url('cdn.shop.test', p);
  }

  // ---------------------------------------------------------------- the load

  private async runTrial(): Promise<void> {
    const s = this.segment;
    const target = this.service;
    const agent = keepAliveAgent(32);
    let dead = false;
    const killAfter = KILL_MIN + Math.floor(this.random() * Math.max(1, KILL_MAX - KILL_MIN));
    const trialRandom = rng(SEED * 100_003 + this.trial);
    const loops: Promise<void>[] = [];
    const call = async (
      account: Account,
      method: string,
      p: string,
      body?: unknown,
    ): Promise<{ status: number; json: unknown } | null> => {
      if (dead) return null;
      try {
        const reply = await send(
          agent,
          new URL(target.api + p),
          method,
          body === undefined ? undefined : JSON.stringify(body),
          { Authorization: `Bearer ${account.key}` },
        );
        let json: unknown = null;
        try {
          json = reply.text ? JSON.parse(reply.text) : null;
        } catch {
          json = reply.text;
        }
        return { status: reply.status, json };
      } catch {
        return null; // cut by the kill: unacknowledged
      }
    };
    const unexpected = (what: string, r: { status: number; json: unknown }) => {
      if (!dead)
        figures.other.push(`trial ${this.trial}: ${what} answered ${r.status} ${JSON.stringify(r.json).slice(0, 300)}`);
    };

    // Writers: one loop per SKU.
    for (const w of s.writers) {
      loops.push(
        (async () => {
          while (!dead) {
            const n = w.next++;
            const put = n === 1 || n % 3 === 0;
            const body = put
              ? productBody(LIVE_STORE, {
                  price_cents: 1000 + n,
                  updated_at: at(n),
                  image_urls: [this.img('/img/800x600.jpg')],
                  product_url: `https://shop.test/p/${w.sku}`,
                })
              : { price_cents: 1000 + n, updated_at: at(n) };
            w.sent.add(n);
            const r = await call(s.live, put ? 'PUT' : 'PATCH', `/products/${w.sku}`, body);
            if (!r) return;
            if (r.status !== 200) return unexpected(`${w.sku} #${n}`, r);
            w.acked.push(n);
            acked('product write');
          }
        })(),
      );
    }

    // Batches: one loop over a pool of POOL SKUs, one job at a time (each SKU's cover is checked once per DATA_DIR).
    const inFlightJobs = new Set<string>();
    for (const pool of ['pa']) {
      loops.push(
        (async () => {
          while (!dead) {
            const size = Math.min(200, POOL) + Math.floor(trialRandom() * Math.max(1, POOL - 199));
            const step = 100_000 + ++s.batchSeq;
            const items = Array.from({ length: size }, (_, i) => ({
              op: 'upsert',
              sku: `${pool}-${i}`,
              product: productBody(LIVE_STORE, {
                price_cents: 5000 + i,
                updated_at: at(step),
                image_urls: [this.img('/img/800x600.jpg')],
                product_url: `https://shop.test/p/${pool}-${i}`,
              }),
            }));
            s.sentBatchSizes.add(`${size}@${at(step)}`);
            const r = await call(s.live, 'POST', '/products/batch', { items });
            if (!r) return;
            if (r.status !== 202) return unexpected(`batch of ${size}`, r);
            const jobId = (r.json as { job_id: string }).job_id;
            s.jobs.set(jobId, { jobId, items: size, trial: this.trial });
            acked('batch job');
            inFlightJobs.add(jobId);
            while (!dead) {
              await sleep(100);
              const j = await call(s.live, 'GET', `/jobs/${jobId}`);
              if (!j) return;
              if ((j.json as { state?: string }).state === 'done') break;
            }
            inFlightJobs.delete(jobId);
          }
        })(),
      );
    }

    // Conversions: two loops, each a new order per round (test key).
    for (let c = 0; c < 2; c++) {
      loops.push(
        (async () => {
          while (!dead) {
            const sku = TEST_SKUS[Math.floor(trialRandom() * TEST_SKUS.length)];
            const click = await call(s.test, 'POST', '/sandbox/clicks', { store_id: TEST_STORE, sku });
            if (!click) return;
            if (click.status !== 200) return unexpected('sandbox click', click);
            const { click_id: clickId, occurred_at: clickAt } = click.json as { click_id: string; occurred_at: string };
            s.clicksAcked.add(clickId);
            acked('sandbox click');
            const orderId = `o-${this.trial}-${++s.seq}`;
            const quantity = 1 + Math.floor(trialRandom() * 3);
            const unit = 1000 + Math.floor(trialRandom() * 9000);
            const paidAt = new Date(clickAt).toISOString();
            const item = (refunded: number) => [{ sku, quantity, unit_price_cents: unit, refunded_cents: refunded }];
            const base = {
              order_id: orderId,
              store_id: TEST_STORE,
              click_id: clickId,
              currency: 'BRL',
              paid_at: paidAt,
            };
            const refund = Math.floor(unit / 2);
            const plan: ConvEvent[] = [
              {
                eventId: `${orderId}-paid`,
                status: 'paid',
                refunded: 0,
                sent: false,
                acked: false,
                trial: this.trial,
                body: { ...base, event_id: `${orderId}-paid`, status: 'paid', occurred_at: paidAt, items: item(0) },
              },
              {
                eventId: `${orderId}-r1`,
                status: 'refunded',
                refunded: refund,
                sent: false,
                acked: false,
                trial: this.trial,
                body: {
                  ...base,
                  event_id: `${orderId}-r1`,
                  status: 'refunded',
                  occurred_at: new Date(Date.parse(paidAt) + 1000).toISOString(),
                  items: item(refund),
                },
              },
            ];
            if (trialRandom() < 0.5) {
              plan.push({
                eventId: `${orderId}-c`,
                status: 'cancelled',
                refunded: quantity * unit,
                sent: false,
                acked: false,
                trial: this.trial,
                body: {
                  ...base,
                  event_id: `${orderId}-c`,
                  status: 'cancelled',
                  occurred_at: new Date(Date.parse(paidAt) + 2000).toISOString(),
                  items: item(quantity * unit),
                },
              });
            }
            const order: Order = { orderId, clickId, events: plan };
            s.orders.push(order);
            for (const e of plan) {
              e.sent = true;
              const r = await call(s.test, 'POST', '/conversions', e.body);
              if (!r) return;
              if (r.status !== 200) return unexpected(`conversion ${e.eventId}`, r);
              const receipt = r.json as ConversionReceipt;
              if (receipt.duplicate || receipt.ignored_stale || receipt.refunded_cents !== e.refunded) {
                figures.other.push(
                  `trial ${this.trial}: first answer to ${e.eventId}: duplicate ${receipt.duplicate}, refunded ${receipt.refunded_cents} (sent ${e.refunded})`,
                );
              }
              e.acked = true;
              acked('conversion');
            }
          }
        })(),
      );
    }

    // Covers: new products whose cover answers late, one every ~40 ms.
    loops.push(
      (async () => {
        while (!dead) {
          const k = ++s.seq;
          const sku = `c-${this.trial}-${k}`;
          const delay = 200 + Math.floor(trialRandom() * 1300);
          const roll = trialRandom();
          const [route, expect] =
            roll < 0.7
              ? (['/img/800x600.jpg', 'accepted'] as const)
              : roll < 0.85
                ? (['/img/499x800.jpg', 'rejected'] as const)
                : (['/status/404', 'rejected'] as const);
          const record: CoverProduct = { sku, expect, acked: false, answersAt: 0 };
          s.covers.push(record);
          const r = await call(
            s.live,
            'PUT',
            `/products/${sku}`,
            productBody(LIVE_STORE, {
              image_urls: [this.img(`/delay/${delay}${route}?${sku}`)],
              updated_at: at(k % 1000),
              product_url: `https://shop.test/p/${sku}`,
            }),
          );
          if (!r) return;
          if (r.status !== 200) return unexpected(`cover product ${sku}`, r);
          record.acked = true;
          record.answersAt = Date.now() + delay;
          acked('cover product');
          await sleep(40);
        }
      })(),
    );

    await sleep(killAfter);
    target.process.kill('SIGKILL');
    const killedAt = Date.now();
    dead = true;
    await target.exited;
    if (inFlightJobs.size > 0) figures.killsMidBatch += 1;
    // A cover product whose image could not have answered yet had its check queued or fetching when the kill came.
    const inFlight = s.covers.filter((c) => c.acked && c.answersAt > killedAt).length;
    figures.coversInFlight += inFlight;
    if (inFlight > 0) figures.killsWithCoverInFlight += 1;
    await Promise.all(loops);
    agent.destroy();

    await this.startService();
    await this.check();
  }

  // ---------------------------------------------------------------- the checks

  /** The log by stream: `full` reads it all again (the final checks), else only what came since the last read. */
  private index: { dir: string; position: number; byStream: Map<string, RecordedEvent[]> } | null = null;

  private async readLog(full = false): Promise<Map<string, RecordedEvent[]>> {
    if (full || !this.index || this.index.dir !== this.segment.dir)
      this.index = { dir: this.segment.dir, position: 0, byStream: new Map() };
    const index = this.index;
    const store = SqliteEventStore.open({ path: path.join(index.dir, 'events.db'), readOnly: true });
    try {
      const fresh = await store.readAll({ afterPosition: index.position });
      for (const e of fresh) {
        let list = index.byStream.get(e.stream);
        if (!list) index.byStream.set(e.stream, (list = []));
        list.push(e);
        index.position = e.position;
      }
      if (full) figures.logEvents = fresh.length;
      return index.byStream;
    } finally {
      await store.close();
    }
  }

  private async check(): Promise<void> {
    const s = this.segment;
    const live: Tenant = { partnerId: s.live.partnerId, env: 'live' };
    const test: Tenant = { partnerId: s.test.partnerId, env: 'test' };
    const trialTag = `seed ${SEED} trial ${this.trial}`;
    const loss = (what: string) => figures.losses.push(`${trialTag}: ${what}`);
    const double = (what: string) => figures.doubles.push(`${trialTag}: ${what}`);

    // Conversions first (they are writes): resend every event of this trial's orders, in order, as a client retries.
    const testApi = this.api(s.test);
    for (const order of s.orders) {
      for (const e of order.events) {
        if (!e.sent || e.trial !== this.trial) continue;
        const r = await testApi.post('/conversions', e.body);
        if (r.status !== 200) {
          (e.acked ? loss : (w: string) => figures.other.push(`${trialTag}: ${w}`))(
            `resent ${e.eventId} (${e.acked ? 'acknowledged' : 'unacknowledged'}) answered ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`,
          );
          break;
        }
        const receipt = r.body as ConversionReceipt;
        if (e.acked && receipt.duplicate !== true)
          double(
            `acknowledged ${e.eventId} resent: not a duplicate (was it lost? ${JSON.stringify(receipt).slice(0, 200)})`,
          );
        if (!e.acked) {
          figures.unackedResolved += 1;
          e.acked = true; // from now on the service holds it
        }
      }
    }

    // Jobs, covers and projections settle.
    const jobsDone = async () => {
      const byStream = await this.readLog();
      const open: string[] = [];
      for (const [stream, events] of byStream) {
        if (!stream.startsWith('job-')) continue;
        if (
          events.some((e) => e.type === 'BatchQueued') &&
          !events.some((e) => e.type === 'BatchDone' || e.type === 'BatchFailed')
        )
          open.push(stream);
      }
      return open;
    };
    const coversOwed = (byStream: Map<string, RecordedEvent[]>) => {
      const owed: string[] = [];
      for (const [stream, events] of byStream) {
        if (!stream.startsWith('product-')) continue;
        const lastSend = events.map((e) => e.type).lastIndexOf('ProductUpserted');
        if (lastSend < 0) continue;
        if (events.slice(lastSend).some((e) => e.type === 'ProductRemoved')) continue;
        // A send that keeps a checked cover owes no check; a new cover owes one result for that address.
        const url = (events[lastSend].data as { product: { image_urls: string[] } }).product.image_urls[0];
        if (!events.some((e) => e.type === 'CoverChecked' && (e.data as { url: string }).url === url))
          owed.push(stream);
      }
      return owed;
    };
    let open: string[] = [];
    await waitFor(
      'jobs done after the restart',
      300_000,
      async () => (open = await jobsDone()).length === 0,
      250,
    ).catch((err: Error) => {
      throw new Error(`${err.message}: ${open.slice(0, 5).join(', ')}`);
    });
    let owed: string[] = [];
    await waitFor(
      'cover checks owed at the kill resumed',
      300_000,
      async () => (owed = coversOwed(await this.readLog())).length === 0,
      250,
    ).catch((err: Error) => {
      throw new Error(`${err.message}: ${owed.length} owed, e.g. ${owed.slice(0, 5).join(', ')}`);
    });
    let lastHead = -1;
    await waitFor(
      'projections caught up, log quiet',
      60_000,
      async () => {
        const p = await projectionProgress(s.dir);
        const quiet = p.caughtUp && p.head === lastHead;
        lastHead = p.head;
        return quiet;
      },
      200,
    );

    const byStream = await this.readLog(true);
    const liveApi = this.api(s.live);

    // Writers.
    for (const w of s.writers) {
      const events = byStream.get(streams.product(live, w.sku)) ?? [];
      const ns = events
        .filter((e) => e.type === 'ProductUpserted' || e.type === 'ProductPatched')
        .map(
          (e) =>
            (e.type === 'ProductUpserted'
              ? (e.data as { product: { price_cents: number } }).product.price_cents
              : (e.data as { patch: { price_cents: number } }).patch.price_cents) - 1000,
        );
      const seen = new Set<number>();
      for (const n of ns) {
        if (seen.has(n)) double(`${w.sku} write #${n} is in the log twice`);
        seen.add(n);
        if (!w.sent.has(n)) figures.other.push(`${trialTag}: ${w.sku} write #${n} in the log was never sent`);
      }
      for (const n of w.acked) if (!seen.has(n)) loss(`${w.sku}: acknowledged write #${n} is not in the log`);
      if (ns.some((n, i) => i > 0 && n < ns[i - 1])) figures.other.push(`${trialTag}: ${w.sku} writes out of order`);
      if (w.acked.length === 0) continue;
      const lastAcked = w.acked[w.acked.length - 1];
      const read = await liveApi.get(`/products/${w.sku}`);
      const shown =
        read.status === 200
          ? (read.body as { expected_commission_cents: number }).expected_commission_cents - 1000
          : -1;
      if (shown < lastAcked) loss(`${w.sku}: GET shows #${shown}, acknowledged up to #${lastAcked}`);
      if (shown !== ns[ns.length - 1])
        figures.replayMismatches.push(
          `${trialTag}: ${w.sku}: GET shows #${shown}, the log ends at #${ns[ns.length - 1]}`,
        );
    }

    // Jobs: every acked job done with its totals; every job in the log was sent; every item once.
    const itemEvents = new Map<string, Map<number, number>>();
    for (const [stream, events] of byStream) {
      if (!stream.startsWith('product-')) continue;
      for (const e of events) {
        const jobId = e.metadata.job_id;
        const index = e.metadata.job_item;
        if (typeof jobId !== 'string' || typeof index !== 'number') continue;
        let m = itemEvents.get(jobId);
        if (!m) itemEvents.set(jobId, (m = new Map()));
        m.set(index, (m.get(index) ?? 0) + 1);
      }
    }
    for (const [stream, events] of byStream) {
      if (!stream.startsWith(`job-live:${s.live.partnerId}:`)) continue;
      const queued = events.find((e) => e.type === 'BatchQueued');
      if (!queued) continue; // parts of a batch whose answer was never given: never processed
      const jobId = (queued.data as { job_id: string }).job_id;
      const received = (queued.data as { received: number }).received;
      const count = (type: string) => events.filter((e) => e.type === type).length;
      const record = s.jobs.get(jobId);
      const firstItem = events.find((e) => e.type === 'BatchPartStored')?.data as
        { items: { product?: { updated_at: string } }[] } | undefined;
      const sentKey = `${received}@${firstItem?.items[0]?.product?.updated_at ?? ''}`;
      if (!record && !s.sentBatchSizes.has(sentKey))
        figures.other.push(`${trialTag}: job ${jobId} (${sentKey}) in the log was never sent`);
      if (record && record.items !== received) double(`job ${jobId}: received ${received}, sent ${record.items}`);
      if (count('BatchStarted') !== 1 || count('BatchDone') !== 1 || count('BatchFailed') !== 0) {
        double(
          `job ${jobId}: BatchStarted ×${count('BatchStarted')}, BatchDone ×${count('BatchDone')}, BatchFailed ×${count('BatchFailed')}`,
        );
      }
      const outcomes = events
        .filter((e) => e.type === 'BatchChunkProcessed')
        .flatMap((e) => (e.data as { outcomes: ItemOutcome[] }).outcomes.map((o) => o.index));
      const perIndex = new Map<number, number>();
      for (const i of outcomes) perIndex.set(i, (perIndex.get(i) ?? 0) + 1);
      for (let i = 0; i < received; i++) {
        const o = perIndex.get(i) ?? 0;
        if (o !== 1) (o === 0 ? loss : double)(`job ${jobId}: item ${i} has ${o} chunk outcomes`);
        const applied = itemEvents.get(jobId)?.get(i) ?? 0;
        if (applied > 1) double(`job ${jobId}: item ${i} applied ${applied} times`);
        if (applied === 0) loss(`job ${jobId}: item ${i} never applied`);
      }
      if (perIndex.size !== received) double(`job ${jobId}: outcomes for ${perIndex.size} indexes, ${received} items`);
      if (record && record.trial === this.trial) {
        const view = await liveApi.get(`/jobs/${jobId}`);
        const totals = (view.body as { totals?: JobTotals; state?: string }).totals;
        const sum = totals ? totals.accepted + totals.rejected + totals.pending + (totals.removed ?? 0) : -1;
        if (
          view.status !== 200 ||
          (view.body as { state: string }).state !== 'done' ||
          totals?.received !== record.items ||
          sum !== record.items
        ) {
          loss(
            `job ${jobId}: GET answers ${view.status} ${JSON.stringify(view.body).slice(0, 200)}, ${record.items} items sent`,
          );
        }
      }
    }
    for (const [jobId, record] of s.jobs) {
      if (!byStream.has(streams.job(live, jobId)))
        loss(`acknowledged job ${jobId} (${record.items} items, trial ${record.trial}) is not in the log`);
    }

    // Clicks and conversions.
    for (const clickId of s.clicksAcked) {
      const n = byStream.get(streams.click(test, clickId))?.length ?? 0;
      if (n !== 1) (n === 0 ? loss : double)(`acknowledged click ${clickId}: ${n} events`);
    }
    for (const order of s.orders) {
      const events = byStream.get(streams.order(test, TEST_STORE, order.orderId)) ?? [];
      const ids = events.map((e) => (e.data as OrderEventData).event.event_id);
      const applied = events.filter((e) => ['OrderPaid', 'OrderRefunded', 'OrderCancelled'].includes(e.type));
      for (const e of order.events) {
        const times = ids.filter((id) => id === e.eventId).length;
        if (e.acked && times === 0) loss(`acknowledged conversion ${e.eventId} is not in ${order.orderId}`);
        if (times > 1) double(`conversion ${e.eventId} is ${times} times in ${order.orderId}`);
        const reserved = byStream.get(streams.conversionEvent(test, e.eventId))?.length ?? 0;
        if (reserved > 1) double(`conversion ${e.eventId} reserved ${reserved} times`);
        if (e.acked && reserved === 0) loss(`acknowledged conversion ${e.eventId} has no reservation`);
        if (!e.sent && (times > 0 || reserved > 0))
          figures.other.push(`${trialTag}: conversion ${e.eventId} in the log was never sent`);
      }
      if (applied.length !== new Set(applied.map((e) => (e.data as OrderEventData).event.event_id)).size)
        double(`${order.orderId}: an event applied twice`);
      const lastAcked = [...order.events].reverse().find((e) => e.acked);
      if (lastAcked && order.events[0].trial === this.trial) {
        const view = await testApi.get(`/conversions/${order.orderId}?store_id=${TEST_STORE}`);
        const body = view.body as { refunded_cents?: number; status?: string };
        if (view.status !== 200 || body.refunded_cents !== lastAcked.refunded || body.status !== lastAcked.status) {
          loss(
            `${order.orderId}: GET answers ${view.status} ${body.status} refunded ${body.refunded_cents}, acknowledged up to ${lastAcked.eventId}`,
          );
        }
      }
    }

    // Covers: every acked product there and judged as its image says; at most one result per send.
    for (const c of s.covers) {
      const events = byStream.get(streams.product(live, c.sku)) ?? [];
      if (c.acked && !events.some((e) => e.type === 'ProductUpserted'))
        loss(`acknowledged cover product ${c.sku} is not in the log`);
      if (!c.acked || !c.sku.startsWith(`c-${this.trial}-`)) continue;
      const results = events.filter((e) => e.type === 'CoverChecked');
      const last = results[results.length - 1]?.data as { ok: boolean } | undefined;
      if (!last || (last.ok ? 'accepted' : 'rejected') !== c.expect)
        figures.other.push(
          `${trialTag}: ${c.sku} cover ${last ? (last.ok ? 'ok' : 'refused') : 'unchecked'}, expected ${c.expect}`,
        );
    }
    for (const [stream, events] of byStream) {
      if (!stream.startsWith('product-')) continue;
      let sinceSend = 0;
      for (const e of events) {
        if (e.type === 'ProductUpserted' || e.type === 'ProductRemoved') sinceSend = 0;
        else if (e.type === 'CoverChecked' && ++sinceSend > 1)
          double(`${stream}: two cover results for one send (revision ${e.revision})`);
      }
    }

    // Read models vs a replay.
    const report = await compareWithReplay(s.dir, { timeoutMs: 120_000 });
    figures.replayDocuments += report.documents;
    for (const d of report.differences.slice(0, 5)) {
      figures.replayMismatches.push(
        `${trialTag}: ${d.collection}/${d.id}: live ${JSON.stringify(d.live).slice(0, 200)} vs replay ${JSON.stringify(d.replayed).slice(0, 200)}`,
      );
    }
    for (const [name, checkpoint] of Object.entries(report.liveCheckpoints)) {
      if (checkpoint < report.head)
        figures.replayMismatches.push(`${trialTag}: projection ${name} at ${checkpoint}, head ${report.head}`);
    }
  }

  // ---------------------------------------------------------------- the report

  private report(seconds: number, loadBefore: number, ok: boolean): void {
    const list = (title: string, items: string[]) =>
      items.length ? `${title}:\n  ${items.slice(0, 20).join('\n  ')}\n` : '';
    const kinds = Object.entries(figures.ackedByKind)
      .map(([k, n]) => `${n} ${k}${n === 1 ? '' : 's'}`)
      .join(', ');
    const summary = [
      `crash soak ${ok ? 'PASSED' : 'FAILED'}: ${figures.trials}/${TRIALS} trials (seed ${SEED}) in ${seconds} s`,
      `acknowledged writes checked: ${figures.ackedWrites} (${kinds}); unacknowledged conversion events resent and settled: ${figures.unackedResolved}`,
      `losses: ${figures.losses.length}; double applications: ${figures.doubles.length}; replay mismatches: ${figures.replayMismatches.length}; other failures: ${figures.other.length}`,
      `kills with a batch job in flight: ${figures.killsMidBatch}; with cover checks owed or in flight: ${figures.killsWithCoverInFlight} (${figures.coversInFlight} covers)`,
      `read-model documents compared with a replay: ${figures.replayDocuments}; events in the last log: ${figures.logEvents}`,
    ].join('\n');
    process.stdout.write(
      `\n${summary}\n${list('losses', figures.losses)}${list('double applications', figures.doubles)}${list('replay mismatches', figures.replayMismatches)}${list('other failures', figures.other)}`,
    );
    writeResults(ok, seconds, loadBefore, kinds);
  }
}

function writeResults(ok: boolean, seconds: number, loadBefore: number, kinds: string): void {
  const markdown = [
    `${ok ? 'Passed' : 'FAILED'}. Whole run: ${seconds} s; load average (1 min) ${loadBefore.toFixed(1)} at the start.`,
    '',
    '| Measure | Figure |',
    '| --- | --- |',
    `| SIGKILL trials under mixed load, each restarted and checked | ${figures.trials} |`,
    `| Acknowledged writes checked | ${figures.ackedWrites} (${kinds}) |`,
    `| Acknowledged writes lost | ${figures.losses.length} |`,
    `| Writes applied twice | ${figures.doubles.length} |`,
    `| Read models differing from a replay of the log | ${figures.replayMismatches.length} (${figures.replayDocuments} documents compared over the trials) |`,
    `| Kills with a batch job acknowledged and not yet seen done (queued or mid-chunk) | ${figures.killsMidBatch} of ${figures.trials} |`,
    `| Kills with cover checks owed or in flight (image not yet answered) | ${figures.killsWithCoverInFlight} of ${figures.trials} (${figures.coversInFlight} covers) |`,
    `| Unacknowledged conversion events resent after the restart, applied once | ${figures.unackedResolved} |`,
    '',
  ].join('\n');
  const file = writeBenchResults('soak', {
    command: `SOAK_TRIALS=${TRIALS} SOAK_SEED=${SEED} SOAK_TRIALS_PER_DIR=${PER_DIR} SOAK_KILL_MS=${KILL_MIN}-${KILL_MAX} node dist/tests/soak/crash-soak.js`,
    figures: {
      passed: ok,
      seconds,
      trials: figures.trials,
      acked_writes: figures.ackedWrites,
      losses: figures.losses.length,
      doubles: figures.doubles.length,
      replay_mismatches: figures.replayMismatches.length,
      replay_documents: figures.replayDocuments,
      kills_mid_batch: figures.killsMidBatch,
      kills_with_cover_in_flight: figures.killsWithCoverInFlight,
      covers_in_flight: figures.coversInFlight,
      unacked_resolved: figures.unackedResolved,
    },
    markdown,
  });
  log(`figures written to ${path.relative(ROOT, file)}`);
}

new Soak()
  .run()
  .then((code) => process.exit(code))
  .catch((err: unknown) => {
    process.stderr.write(`crash soak failed: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  });
