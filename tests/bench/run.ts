/**
 * `make bench` (node dist/tests/bench/run.js): benchmarks of the embedded default on loopback, in about a minute.
 *
 * The service runs in this process (temp DATA_DIR, CLOCK=manual, pino at info to /dev/null, the rate brake raised
 * with RATE_LIMIT_WRITES); the load generator is a child process (tests/bench/load.ts). Figures:
 *   a) PUT /products/{sku} through the gateway: req/s, p50/p99; the same load against a bare node:http server (in this
 *      process, same JSON parse) and the ratio between the two (target >= 25 %); the same with logging off.
 *   b) projection lag, from an append's commit to the projections having committed it (runner position), p50/p99,
 *      while PUTs run at half the rate measured in (a) (target p99 <= 20 ms); then the same while conversions (POST
 *      /conversions, a `paid` order each, in the test environment) run at that rate: the lag of the order events,
 *      whose projectors (the ledger's movements, the reports, the notifications) are others than the products'.
 *   c) PATCH latency on a product whose stream holds 10 events vs 10 000 (seeded by direct appends): ratio of the
 *      medians (target <= 1.5).
 * Prints a table and writes it to .bench/bench.json and .bench/bench.md (tests/support/bench-results.ts). BENCH_SECONDS scales the measuring phases (default 8);
 * BENCH_CONNECTIONS sets the connections of the closed loop (default 64); BENCH_PROFILE=<file.cpuprofile> saves a CPU
 * profile of the service process during the first gateway round of (a); BENCH_ONLY=a runs phase (a) alone (no report
 * written), for quick comparisons while tuning, and prints the CPU per write of each thread by name (Linux: the
 * service's threads are `pc-…`, the event loop and Node's own helpers `node`), to tell which stage a change moved.
 * Three options of BENCH_ONLY=a, to compare builds: BENCH_DIST=<another build's dist/> measures that build's service
 * (same load generator, same measures; an older layout's paths are tried too), BENCH_RATE=<req/s> sends the
 * gateway rounds as an open loop at that rate instead of 64 connections flat out, and BENCH_BARE=off leaves out the
 * bare server's rounds and the round with logging off (a run in half the time, for many runs of builds in turn).
 * At saturation a build's CPU per write also depends on its rate (the group commit, log writes and thread messages
 * are shared by the writes of a turn), so two builds whose rates differ are compared at one rate both sustain.
 */
import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Session } from 'node:inspector/promises';
import pino from 'pino';
import { loadConfig } from '../../infra/wiring/config.js';
import { startService, type Service } from '../../infra/wiring/service.js';
import { portOf } from '../../infra/http/gateway.js';
import { SqliteEventStore } from '../../infra/adapters/sqlite/event-store.js';
import { streams } from '../../shared-schema/domain/streams.js';
import { client, storeBody } from '../support/service.js';
import { writeBenchResults } from '../support/bench-results.js';
import type { LoadJob, LoadResult } from './load.js';
import { productPut, WORKER_FLAG } from './load.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '../../..');
const SECONDS = Number(process.env.BENCH_SECONDS || 8);
const CONCURRENCY = Number(process.env.BENCH_CONNECTIONS || 64);
const ROUNDS = 5;
const RATE = process.env.BENCH_RATE ? Number(process.env.BENCH_RATE) : undefined;
const GATEWAY_ONLY = process.env.BENCH_BARE === 'off';
const ROUND_MS = (SECONDS * 1000) / 2;
const STORE = 'loja-bench';
const BASE_MS = Date.now() - 3600_000;

const pct = (sorted: number[], p: number) =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const sortNum = (a: number[]) => [...a].sort((x, y) => x - y);
const f1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : '-');
const f2 = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : '-');

interface Figure {
  rps: number;
  /** CPU time of this process (service or bare server, plus whatever else runs here) per 2xx answer. */
  cpuUs?: number;
  /** CPU time of this process's main thread (the event loop: the stage that bounds the rate) per 2xx answer (Linux). */
  mainCpuUs?: number;
  /** CPU time per 2xx answer by thread name (Linux; the service's threads name themselves `pc-…`). */
  threadsCpuUs?: Record<string, number>;
  /** CPU time of the load generator per 2xx answer. */
  loadCpuUs: number;
  p50: number;
  p99: number;
  count: number;
  statuses: Record<string, number>;
  errors: number;
}

function summarize(r: LoadResult): Figure {
  const s = sortNum(r.latencies);
  return {
    rps: (r.count / r.elapsedMs) * 1000,
    loadCpuUs: r.cpuUs,
    p50: pct(s, 50),
    p99: pct(s, 99),
    count: r.count,
    statuses: r.statuses,
    errors: r.errors,
  };
}

/** CPU microseconds used so far by this process's main thread (Linux /proc; NaN elsewhere). */
function mainThreadCpuUs(): number {
  try {
    const stat = fs.readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1e6) / 100; // utime + stime, in USER_HZ (100) ticks
  } catch {
    return NaN;
  }
}

/** CPU microseconds used so far by each of this process's threads, summed by thread name (Linux /proc; empty elsewhere). */
function threadsCpuUs(): Map<string, number> {
  const byName = new Map<string, number>();
  try {
    for (const tid of fs.readdirSync('/proc/self/task')) {
      try {
        const stat = fs.readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
        const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        const us = ((Number(fields[11]) + Number(fields[12])) * 1e6) / 100;
        byName.set(name, (byName.get(name) ?? 0) + us);
      } catch {
        /* the thread ended between the listing and the read */
      }
    }
  } catch {
    /* not Linux */
  }
  return byName;
}

/**
 * Runs a load and adds the CPU time this process (its main thread, each named thread) spent per answer. A thread that
 * ended during the load is not counted by name (its time is still in the process's total).
 */
async function measured(work: () => Promise<LoadResult>): Promise<Figure> {
  const before = process.cpuUsage();
  const mainBefore = mainThreadCpuUs();
  const threadsBefore = threadsCpuUs();
  const result = await work();
  const used = process.cpuUsage(before);
  const answers = Math.max(1, result.count);
  const threads: Record<string, number> = {};
  for (const [name, us] of threadsCpuUs()) {
    const spent = (us - (threadsBefore.get(name) ?? 0)) / answers;
    if (spent > 0) threads[name] = spent;
  }
  return {
    ...summarize(result),
    cpuUs: (used.user + used.system) / answers,
    mainCpuUs: (mainThreadCpuUs() - mainBefore) / answers,
    threadsCpuUs: threads,
  };
}

/** `name µs` of each thread's CPU per answer, the busiest first. */
const threadsLine = (f: Figure): string =>
  Object.entries(f.threadsCpuUs ?? {})
    .sort((x, y) => y[1] - x[1])
    .map(([name, us]) => `${name} ${f1(us)}`)
    .join(', ');

/** The median of a few numbers (the lower middle one of an even count). */
const medianOf = (xs: number[]): number => sortNum(xs)[Math.floor((xs.length - 1) / 2)];

/** The round with the median rate. */
function median(figures: Figure[]): Figure {
  return [...figures].sort((a, b) => a.rps - b.rps)[Math.floor(figures.length / 2)];
}

class LoadGenerator {
  private readonly child: ChildProcess;
  constructor() {
    this.child = fork(path.join(HERE, 'load.js'), [WORKER_FLAG], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  }
  run(job: LoadJob): Promise<LoadResult> {
    return new Promise((resolve, reject) => {
      this.child.once('message', (m: { ok: boolean; result?: LoadResult; error?: string }) =>
        m.ok ? resolve(m.result!) : reject(new Error(m.error)),
      );
      this.child.send(job);
    });
  }
  close(): void {
    this.child.disconnect();
  }
}

/** The yardstick: node:http, the same body read and JSON.parse, 200 with a small JSON answer. */
async function bareServer(): Promise<http.Server> {
  const server = http.createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { price_cents?: number };
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ ok: true, price_cents: body.price_cents }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

/** Runs `work`, under the CPU profiler when BENCH_PROFILE names a file. */
async function profiled<T>(work: () => Promise<T>): Promise<T> {
  const file = process.env.BENCH_PROFILE;
  if (!file) return work();
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  try {
    return await work();
  } finally {
    const { profile } = await session.post('Profiler.stop');
    fs.writeFileSync(file, JSON.stringify(profile));
    session.disconnect();
  }
}

/**
 * The service's start-up: this build's, or that of the build at BENCH_DIST (its `dist/`), whose modules may sit at
 * an older layout's paths (infra/config.js, infra/service.js before infra/wiring/).
 */
async function serviceOf(): Promise<{ loadConfig: typeof loadConfig; startService: typeof startService }> {
  const dist = process.env.BENCH_DIST;
  if (!dist) return { loadConfig, startService };
  const first = async <T>(...candidates: string[]): Promise<T> => {
    const file = candidates.map((c) => path.resolve(dist, c)).find((f) => fs.existsSync(f));
    if (!file) throw new Error(`BENCH_DIST: none of ${candidates.join(', ')} under ${dist}`);
    return (await import(pathToFileURL(file).href)) as T;
  };
  const config = await first<{ loadConfig: typeof loadConfig }>('infra/wiring/config.js', 'infra/config.js');
  const service = await first<{ startService: typeof startService }>('infra/wiring/service.js', 'infra/service.js');
  return { loadConfig: config.loadConfig, startService: service.startService };
}

interface BenchPartner {
  api: string;
  key: string;
  partnerId: string;
  /** The partner's test key, with the store and a click the conversions are attributed to. */
  test: { key: string; clickId: string; paidAt: string };
}

async function setUp(service: Service): Promise<BenchPartner> {
  const admin = client(`http://127.0.0.1:${portOf(service.admin)}/admin/v1`, service.adminToken);
  const partner = await admin.post('/partners', { name: 'Hub Bench', partner_type: 'hub' });
  const key = await admin.post(`/partners/${partner.body.partner_id}/keys`, { environment: 'live' });
  const api = `http://127.0.0.1:${portOf(service.gateway)}/v1`;
  const put = await client(api, key.body.api_key).put(
    `/stores/${STORE}`,
    storeBody({ default_commission: { type: 'percentage', rate: 10 } }),
  );
  if (put.status !== 200) throw new Error(`store: ${put.status} ${JSON.stringify(put.body)}`);
  await admin.post(`/partners/${partner.body.partner_id}/live/stores/${STORE}/approve`, {});
  return {
    api,
    key: key.body.api_key,
    partnerId: partner.body.partner_id,
    test: await testClick(admin, api, partner.body.partner_id),
  };
}

/** A test key of the partner, its store and products, and a sandbox click (the contract's way to a test order). */
async function testClick(
  admin: ReturnType<typeof client>,
  api: string,
  partnerId: string,
): Promise<BenchPartner['test']> {
  const key = (await admin.post(`/partners/${partnerId}/keys`, { environment: 'test' })).body.api_key as string;
  const test = client(api, key);
  const store = await test.put(`/stores/${STORE}`, storeBody({ default_commission: { type: 'percentage', rate: 10 } }));
  if (store.status !== 200) throw new Error(`test store: ${store.status} ${JSON.stringify(store.body)}`);
  for (const sku of ['a', 'b']) {
    const put = await test.put(`/products/${sku}`, JSON.parse(productPut(STORE, sku, 0, BASE_MS)));
    if (put.status !== 200) throw new Error(`test product: ${put.status} ${JSON.stringify(put.body)}`);
  }
  const click = await test.post('/sandbox/clicks', { store_id: STORE, sku: 'a' }, { 'Idempotency-Key': 'bench-click' });
  if (click.status !== 200) throw new Error(`sandbox click: ${click.status} ${JSON.stringify(click.body)}`);
  return { key, clickId: click.body.click_id as string, paidAt: click.body.occurred_at as string };
}

/** Appends `count` events to one product stream directly through the event store (ProductUpserted, then patches). */
async function seedStream(service: Service, partnerId: string, sku: string, count: number): Promise<void> {
  const stream = streams.product({ partnerId, env: 'live' }, sku);
  const meta = (i: number) => ({ recorded_at: new Date(BASE_MS + i).toISOString(), actor: 'bench' });
  const upsert = {
    type: 'ProductUpserted',
    data: { sku, product: JSON.parse(productPut(STORE, sku, 0, BASE_MS)), received_at: meta(0).recorded_at },
    metadata: meta(0),
  };
  let revision = (await service.events.appendToStream(stream, [upsert], 'no_stream')).nextRevision;
  for (let i = 1; i < count; i += 500) {
    const chunk = Array.from({ length: Math.min(500, count - i) }, (_, j) => ({
      type: 'ProductPatched',
      data: {
        sku,
        patch: { price_cents: 10_000 + ((i + j) % 5000), updated_at: new Date(BASE_MS + i + j).toISOString() },
        received_at: meta(i + j).recorded_at,
      },
      metadata: meta(i + j),
    }));
    revision = (await service.events.appendToStream(stream, chunk, revision)).nextRevision;
  }
}

async function main(): Promise<void> {
  const started = Date.now();
  const loadBefore = os.loadavg()[0];
  if ((process.env.BENCH_DIST || RATE !== undefined || GATEWAY_ONLY) && process.env.BENCH_ONLY !== 'a') {
    throw new Error('BENCH_DIST, BENCH_RATE and BENCH_BARE go with BENCH_ONLY=a (they compare builds: not the report)');
  }
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-bench-'));
  const built = await serviceOf();
  const config = built.loadConfig({
    PORT: '0',
    ADMIN_PORT: '0',
    DATA_DIR: dataDir,
    CLOCK: 'manual',
    LOG_LEVEL: 'info',
    RATE_LIMIT_WRITES: '1000000000',
    COVER_CHECK: 'off',
    // PROJECTION_THREAD=off|on in the environment: an A/B of where the projections run.
    ...(process.env.PROJECTION_THREAD ? { PROJECTION_THREAD: process.env.PROJECTION_THREAD } : {}),
  });
  const log = pino({ level: 'info' }, pino.destination({ dest: '/dev/null', sync: false }));
  const service = await built.startService(config, { log });
  const bare = await bareServer();
  const load = new LoadGenerator();
  try {
    const { api, key, partnerId, test } = await setUp(service);
    const job = (over: Partial<LoadJob>): LoadJob => ({
      base: api,
      mode: 'put',
      key,
      storeId: STORE,
      prefix: 'w',
      concurrency: CONCURRENCY,
      maxCount: 1_000_000,
      durationMs: SECONDS * 1000,
      baseUpdatedAtMs: BASE_MS,
      ...over,
    });
    let stamp = BASE_MS;
    const nextStamp = () => (stamp += 300_000); // 5 minutes of updated_at per phase, at 1 ms per request
    const step = (what: string) =>
      process.stderr.write(`bench: ${what} (${Math.round((Date.now() - started) / 1000)} s)\n`);

    step('warming up');
    await load.run(job({ prefix: 'warm', durationMs: 3000, baseUpdatedAtMs: nextStamp() }));
    // Gateway and bare server alternate, several rounds, so that a busy neighbour on the machine weighs on both.
    const bareBase = `http://127.0.0.1:${portOf(bare)}`;
    await load.run(job({ base: bareBase, prefix: 'warm', durationMs: 1000 }));
    const rounds: { gateway: Figure; bare?: Figure }[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      step(
        `a) round ${r + 1}/${ROUNDS}: PUT through the gateway${GATEWAY_ONLY ? '' : ', then the bare node:http server'}`,
      );
      const put = () =>
        load.run(
          job({
            prefix: `a${r}`,
            durationMs: ROUND_MS,
            baseUpdatedAtMs: nextStamp(),
            ...(RATE !== undefined ? { ratePerSec: RATE } : {}),
          }),
        );
      const g = await measured(() => (r === 0 ? profiled(put) : put()));
      if (GATEWAY_ONLY) rounds.push({ gateway: g });
      else
        rounds.push({
          gateway: g,
          bare: await measured(() => load.run(job({ base: bareBase, prefix: 'a', durationMs: ROUND_MS }))),
        });
    }
    const gateway = median(rounds.map((r) => r.gateway));
    const perRound = () =>
      `a) per round, req/s / µs CPU per write / main thread: ${rounds.map(({ gateway: g }) => `${f1(g.rps)} / ${f1(g.cpuUs!)} / ${f1(g.mainCpuUs!)}`).join('; ')}; ` +
      `medians of the rounds: ${f1(medianOf(rounds.map((r) => r.gateway.cpuUs!)))} / ${f1(medianOf(rounds.map((r) => r.gateway.mainCpuUs!)))} µs` +
      `${process.env.BENCH_DIST ? ` (service of ${process.env.BENCH_DIST})` : ''}${RATE !== undefined ? ` (open loop at ${RATE} req/s)` : ''}; load average ${os.loadavg().map(f2).join(' ')} (at start ${f2(loadBefore)})\n`;
    if (GATEWAY_ONLY) {
      process.stdout.write(
        `\na) gateway ${f1(gateway.rps)} req/s (p50 ${f2(gateway.p50)} ms, p99 ${f2(gateway.p99)} ms), ${f1(gateway.cpuUs!)} µs CPU per write, main thread ${f1(gateway.mainCpuUs!)} (load generator ${f1(gateway.loadCpuUs)})\n` +
          `a) CPU per write by thread (µs): ${threadsLine(gateway)}\n` +
          perRound(),
      );
      return;
    }
    const yard = median(rounds.map((r) => r.bare!));
    const ratios = rounds.map((r) => (100 * r.gateway.rps) / r.bare!.rps);
    step('a) PUT through the gateway, logging off');
    service.log.level = 'silent';
    const quiet = await measured(() =>
      load.run(
        job({
          prefix: 'q',
          durationMs: ROUND_MS,
          baseUpdatedAtMs: nextStamp(),
          ...(RATE !== undefined ? { ratePerSec: RATE } : {}),
        }),
      ),
    );
    service.log.level = 'info';
    if (process.env.BENCH_ONLY === 'a') {
      process.stdout.write(
        `\na) gateway ${f1(gateway.rps)} req/s, ${f1(gateway.cpuUs!)} µs CPU per write, main thread ${f1(gateway.mainCpuUs!)} (load generator ${f1(gateway.loadCpuUs)}); bare ${f1(yard.rps)} req/s (load generator ${f1(yard.loadCpuUs)} µs); ` +
          `ratio ${f1((100 * gateway.rps) / yard.rps)} % (rounds ${ratios.map(f1).join(', ')}); logging off ${f1(quiet.rps)} req/s, ${f1(quiet.cpuUs!)} µs\n` +
          `a) CPU per write by thread (µs): ${threadsLine(gateway)}\n` +
          perRound(),
      );
      return;
    }

    // Every append's lag while `work` runs: from its commit to the projections having committed it.
    const events = service.events as SqliteEventStore;
    const lagWhile = async (work: LoadJob): Promise<{ lags: number[]; load: Figure }> => {
      const lags: number[] = [];
      let measuring = true;
      const off = events.onAppended((position) => {
        if (!measuring) return;
        const t0 = performance.now();
        void service.runner.waitFor(position, 10_000).then((ok) => ok && lags.push(performance.now() - t0));
      });
      const paced = summarize(await load.run(work));
      measuring = false;
      off();
      await service.runner.waitFor(await events.headPosition(), 60_000);
      return { lags: sortNum(lags), load: paced };
    };
    const halfRate = Math.max(1, Math.round(gateway.rps / 2));
    step('b) projection lag at half the rate of (a), PUTs');
    const { lags: lagSorted, load: paced } = await lagWhile(
      job({ prefix: 'b', ratePerSec: halfRate, baseUpdatedAtMs: nextStamp() }),
    );
    step('b) projection lag at the same rate, conversions');
    const orders = await lagWhile(
      job({ prefix: 'o', mode: 'conversion', key: test.key, ratePerSec: halfRate, conversion: test }),
    );

    step('c) PATCH on a stream of 10 events vs 10 000');
    await seedStream(service, partnerId, 'short', 10);
    await seedStream(service, partnerId, 'long', 10_000);
    await service.runner.waitFor(await service.events.headPosition(), 60_000);
    const patchJob = job({
      mode: 'patch-pair',
      skus: ['short', 'long'],
      concurrency: 1,
      maxCount: 1,
      baseUpdatedAtMs: nextStamp(),
    });
    const cold = await load.run({ ...patchJob, skus: ['long'] });
    const coldMs = cold.latencies[0] ?? NaN;
    await load.run({ ...patchJob, maxCount: 200, baseUpdatedAtMs: nextStamp() });
    const pair = await load.run({
      ...patchJob,
      maxCount: 2000,
      durationMs: SECONDS * 1000,
      baseUpdatedAtMs: nextStamp(),
    });
    const short = sortNum(pair.bySku![0]);
    const long = sortNum(pair.bySku![1]);

    const rows: [string, string, string][] = [
      [
        'a) PUT /products via gateway',
        `${f1(gateway.rps)} req/s`,
        `p50 ${f2(gateway.p50)} ms, p99 ${f2(gateway.p99)} ms; ${f1(gateway.cpuUs!)} µs CPU per write, ${f1(gateway.mainCpuUs!)} µs of it on the main thread (median of ${ROUNDS} rounds of ${ROUND_MS / 1000} s, ${CONCURRENCY} connections)`,
      ],
      [
        'a) bare node:http, same body',
        `${f1(yard.rps)} req/s`,
        `p50 ${f2(yard.p50)} ms, p99 ${f2(yard.p99)} ms; ${f1(yard.cpuUs!)} µs CPU per answer`,
      ],
      [
        'a) gateway / bare',
        `${f1((100 * gateway.rps) / yard.rps)} %`,
        `rounds: ${ratios.map((r) => `${f1(r)} %`).join(', ')}; CPU per answer, bare / gateway: ${f1((100 * yard.cpuUs!) / gateway.cpuUs!)} %; target >= 25 %`,
      ],
      [
        'a) gateway, logging off',
        `${f1(quiet.rps)} req/s`,
        `p50 ${f2(quiet.p50)} ms, p99 ${f2(quiet.p99)} ms; ${f1(quiet.cpuUs!)} µs CPU per write (with pino at info: ${f1(gateway.cpuUs!)})`,
      ],
      [
        'b) projection lag',
        `p50 ${f2(pct(lagSorted, 50))} ms`,
        `p99 ${f2(pct(lagSorted, 99))} ms, max ${f2(lagSorted[lagSorted.length - 1] ?? NaN)} ms over ${lagSorted.length} commits; target p99 <= 20 ms`,
      ],
      [
        'b) write load during (b)',
        `${f1(paced.rps)} req/s`,
        `asked ${halfRate} req/s; PUT p50 ${f2(paced.p50)} ms, p99 ${f2(paced.p99)} ms`,
      ],
      [
        'b) projection lag, conversions',
        `p50 ${f2(pct(orders.lags, 50))} ms`,
        `p99 ${f2(pct(orders.lags, 99))} ms, max ${f2(orders.lags[orders.lags.length - 1] ?? NaN)} ms over ${orders.lags.length} commits; p99 ÷ the PUTs': ${f2(pct(orders.lags, 99) / pct(lagSorted, 99))}; POST /conversions at ${f1(orders.load.rps)} req/s (asked ${halfRate}), p50 ${f2(orders.load.p50)} ms, p99 ${f2(orders.load.p99)} ms, statuses ${JSON.stringify(orders.load.statuses)}`,
      ],
      [
        'c) PATCH, stream of 10',
        `p50 ${f2(pct(short, 50))} ms`,
        `p99 ${f2(pct(short, 99))} ms (${short.length} sequential PATCHes)`,
      ],
      [
        'c) PATCH, stream of 10 000',
        `p50 ${f2(pct(long, 50))} ms`,
        `p99 ${f2(pct(long, 99))} ms; first PATCH (cold cache) ${f2(coldMs)} ms`,
      ],
      [
        'c) ratio 10 000 / 10',
        `${f2(pct(long, 50) / pct(short, 50))}`,
        `p50 ratio; p99 ratio ${f2(pct(long, 99) / pct(short, 99))}; target <= 1.5`,
      ],
    ];
    const all = [...rounds.flatMap((r) => [r.gateway, r.bare!]), quiet, paced];
    const bad = all.flatMap((f) =>
      Object.entries(f.statuses)
        .filter(([s]) => !s.startsWith('2'))
        .map(([s, n]) => `${n}×${s}`),
    );
    const errors = all.reduce((n, f) => n + f.errors, 0);
    const width = Math.max(...rows.map((r) => r[0].length));
    const table = rows.map(([a, b, c]) => `${a.padEnd(width)}  ${b.padStart(14)}  ${c}`).join('\n');
    process.stdout.write(
      `\n${table}\n${bad.length || errors ? `non-2xx: ${bad.join(', ') || 'none'}; connection errors: ${errors}\n` : ''}`,
    );
    writeReport(rows, Math.round((Date.now() - started) / 1000), bad, errors, loadBefore);
  } finally {
    load.close();
    await new Promise<void>((resolve) => bare.close(() => resolve()));
    bare.closeAllConnections();
    await service.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

function writeReport(
  rows: [string, string, string][],
  seconds: number,
  bad: string[],
  errors: number,
  loadBefore: number,
): void {
  const markdown = [
    `Whole run: ${seconds} s. Load average (1 min) of the machine at the start: ${loadBefore.toFixed(1)} (other work shares these cores).`,
    '',
    'Set-up: the embedded default in the benchmark process (SQLite event and read stores in a temp DATA_DIR,',
    '`SQLITE_SYNCHRONOUS=FULL`, CLOCK=manual, pino at info written to /dev/null, `RATE_LIMIT_WRITES` raised so that the',
    'rate brake counts but never refuses); the load generator is a separate Node process (keep-alive `http.Agent`,',
    `${CONCURRENCY} connections, loopback only). The bare server runs in the same process as the service, one at a time.`,
    '',
    '| Measure | Figure | Detail |',
    '| --- | --- | --- |',
    ...rows.map(([a, b, c]) => `| ${a} | ${b} | ${c} |`),
    '',
    bad.length || errors
      ? `Non-2xx answers: ${bad.join(', ') || 'none'}; connection errors: ${errors}.`
      : 'Every answer was 2xx; no connection errors.',
    '',
    'Notes:',
    '- (a) closed loop: each connection sends its next PUT when the last answer came; each PUT is a full product on',
    '  one of 16 SKUs per connection, with a newer `updated_at` each time, so every request appends one event. The',
    '  cover check is off, so the products stay pending and a write answer needs no products read for `published_at`',
    '  (docs/adr/0007-write-path-reads.md); a write to an accepted product reads one indexed document more.',
    '- The load generator and the server share the machine. The bare server is bounded by the generator, not by itself',
    '  (its CPU per answer shows it could answer several times more), so the req/s ratio flatters the gateway; the',
    '  ratio of CPU per answer is the figure that does not depend on the generator or on the neighbours.',
    '- "CPU per write" is the CPU time of the whole service process (HTTP, command, the writer and history threads,',
    '  projections, logging) divided by the answers; "on the main thread" is the event loop\'s part, the stage that',
    '  bounds the rate. "logging off" is the same load with pino silenced, for the cost of logging.',
    "- (b) is measured from the group commit of an append (the event store's `onAppended`) to the projection runner",
    '  having committed that position (`runner.waitFor`), one sample per group commit.',
    '- (c) 10 000 events seeded by direct appends; PATCHes alternate between the two SKUs, one at a time.',
    '',
  ].join('\n');
  const figures = Object.fromEntries(rows.map(([measure, figure, detail]) => [measure, { figure, detail }]));
  const file = writeBenchResults('bench', {
    command: `BENCH_SECONDS=${SECONDS} BENCH_CONNECTIONS=${CONCURRENCY} node dist/tests/bench/run.js`,
    figures: { ...figures, seconds, non_2xx: bad, connection_errors: errors, loadavg_1m_start: loadBefore },
    markdown,
  });
  process.stdout.write(`figures written to ${path.relative(ROOT, file)} (and its .md beside it)\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
