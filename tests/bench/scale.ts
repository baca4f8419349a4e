/**
 * `make bench-scale` (node dist/tests/bench/scale.js): the service at the scale the project targets. Not in make test.
 *
 * The embedded default runs as its own process (`node dist/infra/main.js`, fresh DATA_DIR, real clock, contract
 * rate brake 600 writes a minute per key, cover check on against a loopback HTTPS image server whose test CA is
 * trusted with COVER_FETCH_CA_FILE, test names mapped with COVER_FETCH_HOSTS, COVER_FETCH_ALLOW_PRIVATE=1: test-only
 * settings). The load generator is its own process (tests/bench/scale-load.ts); the bare node:http yardstick is a
 * third (this file with --bare). SCALE_PARTNERS partners (default 300; a third hubs with 1–5 stores, the rest direct
 * stores), each with a live key (catalog) and a test key (sandbox click, conversions).
 *   A  initial load: SCALE_SKUS items in 1,000-item batches (partners drawn with a Zipf law), POST → every job done
 *   P  PUT of new SKUs only over every partner, closed loop: saturation, beside the bare server
 *   B  the mix (60 % PATCH Zipf, 10 % PUT new, 20 % reads, 5 % conversions, 5 % batches): saturation (closed
 *      loop), then p50/p99, projection lag and notification lag (GET /v1/events) at half of it (open loop)
 *   D  restart on the log of A+P+B → ready; rebuild of every projection → events/s; `ops audit verify`
 *   C  a fresh service loaded with 10,000 SKUs, the same mix: saturation, for the ratio B / C
 * Environment: SCALE_SKUS (default 1,000,000), SCALE_SECONDS per measuring run (default 20), SCALE_CONNECTIONS
 * (default 64), SCALE_PARTNERS, BENCH_TARGET=http://127.0.0.1:PORT
 * (a running `make run-topology`: nothing is started, BENCH_ADMIN=http://127.0.0.1:ADMIN_PORT and ADMIN_TOKEN
 * needed, BENCH_PIDS=pid,pid for RSS/CPU; phases C and the restart of D are not run), SCALE_TOPOLOGY=<n> (the same,
 * on a `make run-topology` this benchmark starts with n command-api replicas and the cover env of the run).
 * For profiles and A/B runs: SCALE_ONLY=A|P|B (stop after that phase), SCALE_KEEP_DIR=1 (keep the data dirs), SCALE_PROFILE=<dir> (CPU profiles of the
 * service), SCALE_MAIN=<another build's dist/infra/main.js>, SCALE_ENV_<NAME>=<value> (a setting of the service).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { client, storeBody, type Client } from '../support/service.js';
import { spawnService, type ChildService } from '../support/child-service.js';
import { startImageServers, type ImageServers } from '../support/https-image-server.js';
import { coverTestEnv } from '../support/cover-env.js';
import { writeBenchResults } from '../support/bench-results.js';
import { freePort } from '../../infra/topology/ports.js';
import {
  SCALE_WORKER_FLAG,
  type Mix,
  type PartnerPlan,
  type ScaleJob,
  type ScaleResult,
  type Stat,
} from './scale-load.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '../../..');
const SKUS = Number(process.env.SCALE_SKUS || 1_000_000);
const SECONDS = Number(process.env.SCALE_SECONDS || 20);
const CONNECTIONS = Number(process.env.SCALE_CONNECTIONS || 64);
const PARTNERS = Number(process.env.SCALE_PARTNERS || 300);
const SMALL_SKUS = 10_000;
/** SCALE_ONLY=A: phase A alone; P: A and P; B: A, P and B (quick runs to profile or compare one load). */
const ONLY = process.env.SCALE_ONLY ?? '';
/** SCALE_TOPOLOGY=<n>: the benchmark starts `make run-topology` (n command-api replicas, 1 query-api) and aims at it. */
const TOPOLOGY = Number(process.env.SCALE_TOPOLOGY || 0);
const MIX: Mix = { patch: 60, put: 10, read: 20, conversion: 5, batch: 5 };
const MIX_BATCH_ITEMS = Number(process.env.SCALE_MIX_BATCH_ITEMS || 50);
const ADMIN_TOKEN = 'scale-bench-admin-token-0123456789';
const T0 = Date.now();
const step = (what: string) =>
  process.stderr.write(`bench-scale: ${what} (${Math.round((Date.now() - T0) / 1000)} s)\n`);
const f0 = (n: number | undefined) => (n !== undefined && Number.isFinite(n) ? n.toFixed(0) : '-');
const f1 = (n: number | undefined) => (n !== undefined && Number.isFinite(n) ? n.toFixed(1) : '-');
const f2 = (n: number | undefined) => (n !== undefined && Number.isFinite(n) ? n.toFixed(2) : '-');

// ------------------------------------------------------------------------------------------------ bare server

if (process.argv.includes('--bare')) {
  const server = http.createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const body = text ? (JSON.parse(text) as { price_cents?: number }) : {};
      res.writeHead(req.method === 'POST' && req.url?.endsWith('/batch') ? 202 : 200, {
        'Content-Type': 'application/json',
      });
      res.end(
        JSON.stringify({
          ok: true,
          price_cents: body.price_cents ?? null,
          job_id: 'j',
          state: 'done',
          data: [],
          next_cursor: null,
        }),
      );
    });
  });
  server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as { port: number }).port }));
  process.on('disconnect', () => process.exit(0));
} else {
  main().catch((err: unknown) => {
    process.stderr.write(`bench-scale failed: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  });
}

// ------------------------------------------------------------------------------------------------ processes

class Generator {
  private readonly child: ChildProcess = fork(path.join(HERE, 'scale-load.js'), [SCALE_WORKER_FLAG], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  run(job: ScaleJob): Promise<ScaleResult> {
    return new Promise((resolve, reject) => {
      this.child.once('message', (m: { ok: boolean; result?: ScaleResult; error?: string }) =>
        m.ok ? resolve(m.result!) : reject(new Error(m.error)),
      );
      this.child.send(job);
    });
  }
  close(): void {
    this.child.disconnect();
  }
}

async function startBare(): Promise<{ base: string; pid: number; close(): void }> {
  const child = fork(fileURLToPath(import.meta.url), ['--bare'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const port = await new Promise<number>((resolve) => child.once('message', (m: { port: number }) => resolve(m.port)));
  return { base: `http://127.0.0.1:${port}/v1`, pid: child.pid!, close: () => child.disconnect() };
}

/** CPU (all threads, and the main thread: the event loop) and RSS of processes, from /proc, over one run. */
interface Usage {
  cpuMs: number;
  mainCpuMs: number;
  rssMaxMb: number;
}

function ticks(file: string): number {
  try {
    const stat = fs.readFileSync(file, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime + stime (USER_HZ 100) → ms
  } catch {
    return NaN;
  }
}
function rssMb(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}
async function watched<T>(pids: number[], work: () => Promise<T>): Promise<{ result: T; usage: Usage }> {
  const cpu = () => pids.reduce((s, p) => s + ticks(`/proc/${p}/stat`), 0);
  const main = () => pids.reduce((s, p) => s + ticks(`/proc/${p}/task/${p}/stat`), 0);
  const c0 = cpu();
  const m0 = main();
  let rssMax = pids.reduce((s, p) => s + rssMb(p), 0);
  const timer = setInterval(
    () =>
      (rssMax = Math.max(
        rssMax,
        pids.reduce((s, p) => s + rssMb(p), 0),
      )),
    200,
  );
  try {
    const result = await work();
    return { result, usage: { cpuMs: cpu() - c0, mainCpuMs: main() - m0, rssMaxMb: rssMax } };
  } finally {
    clearInterval(timer);
  }
}

// ------------------------------------------------------------------------------------------------ set-up

interface Target {
  api: string;
  adminBase: string;
  admin: Client;
  pids: number[];
  service?: ChildService;
  dataDir?: string;
}

async function startTarget(env: Record<string, string>, dataDir: string): Promise<Target> {
  // SCALE_PROFILE=<dir>: a CPU profile of every thread of the service (written when it stops).
  const profile = process.env.SCALE_PROFILE
    ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(process.env.SCALE_PROFILE)}`]
    : [];
  // SCALE_MAIN=<path of infra/main.js>: the service of another build (an A/B against the previous code, same run).
  const service = await spawnService(
    { DATA_DIR: dataDir, ADMIN_TOKEN, ...env },
    120_000,
    profile,
    process.env.SCALE_MAIN || undefined,
  );
  service.process.stdout!.resume();
  return {
    api: service.api,
    adminBase: service.admin,
    admin: client(service.admin, ADMIN_TOKEN),
    pids: [service.process.pid!],
    service,
    dataDir,
  };
}

/** Partner i's catalog share: a Zipf law over partners (a few large catalogs, a long tail). */
function catalogCounts(partners: number, skus: number): number[] {
  const counts = new Array<number>(partners).fill(0);
  const batches = Math.ceil(skus / 1000);
  const weights = Array.from({ length: partners }, (_, i) => 1 / (i + 1) ** 0.7);
  const sum = weights.reduce((a, b) => a + b, 0);
  let left = skus;
  for (let b = 0; b < batches; b++) {
    // deterministic: batch b goes to the partner whose cumulative share first passes (b + 0.5) / batches
    let u = ((b + 0.5) / batches) * sum;
    let p = 0;
    while (p < partners - 1 && (u -= weights[p]) > 0) p++;
    const n = Math.min(1000, left);
    counts[p] += n;
    left -= n;
  }
  return counts;
}

async function setUpPartners(t: Target, skus: number): Promise<PartnerPlan[]> {
  const counts = catalogCounts(PARTNERS, skus);
  const plans: PartnerPlan[] = [];
  const one = async (i: number): Promise<PartnerPlan> => {
    const hub = i % 3 === 0;
    const created = await t.admin.post('/partners', { name: `Scale ${i}`, partner_type: hub ? 'hub' : 'store' });
    if (created.status !== 201 && created.status !== 200)
      throw new Error(`partner: ${created.status} ${JSON.stringify(created.body)}`);
    const partnerId = created.body.partner_id as string;
    const live = (await t.admin.post(`/partners/${partnerId}/keys`, { environment: 'live' })).body.api_key as string;
    const test = (await t.admin.post(`/partners/${partnerId}/keys`, { environment: 'test' })).body.api_key as string;
    const stores = Array.from({ length: hub ? 1 + (i % 5) : 1 }, (_, s) => `loja-${s}`);
    const liveApi = client(t.api, live);
    for (const s of stores) {
      const put = await liveApi.put(`/stores/${s}`, storeBody({ default_commission: { type: 'percentage', rate: 8 } }));
      if (put.status !== 200 && put.status !== 201) throw new Error(`store: ${put.status} ${JSON.stringify(put.body)}`);
      const ok = await t.admin.post(`/partners/${partnerId}/live/stores/${s}/approve`, {});
      if (ok.status >= 300) throw new Error(`approve: ${ok.status} ${JSON.stringify(ok.body)}`);
    }
    const testApi = client(t.api, test);
    const ts = await testApi.put('/stores/loja-t', storeBody());
    if (ts.status >= 300) throw new Error(`test store: ${ts.status} ${JSON.stringify(ts.body)}`);
    const tp = await testApi.put('/products/tp-1', {
      store_id: 'loja-t',
      title: 'Produto de teste',
      product_url: 'https://shop.test/p/tp-1',
      image_urls: ['https://cdn.shop.test/img/800x600.jpg'],
      price_cents: 1990,
      available: true,
      updated_at: new Date(Date.now() - 120_000).toISOString(),
    });
    if (tp.status >= 300) throw new Error(`test product: ${tp.status} ${JSON.stringify(tp.body)}`);
    const click = await testApi.post('/sandbox/clicks', { store_id: 'loja-t', sku: 'tp-1' });
    if (click.status >= 300) throw new Error(`sandbox click: ${click.status} ${JSON.stringify(click.body)}`);
    return {
      partnerId,
      live,
      test,
      stores,
      testStore: 'loja-t',
      click: click.body.click_id as string,
      count: counts[i],
    };
  };
  for (let i = 0; i < PARTNERS; i += 16)
    plans.push(...(await Promise.all(Array.from({ length: Math.min(16, PARTNERS - i) }, (_, j) => one(i + j)))));
  return plans;
}

function batchList(plans: PartnerPlan[]): { partner: number; from: number; items: number }[] {
  const out: { partner: number; from: number; items: number }[] = [];
  plans.forEach((p, i) => {
    for (let from = 0; from < p.count; from += 1000)
      out.push({ partner: i, from, items: Math.min(1000, p.count - from) });
  });
  // interleave partners: batch k of every partner before batch k+1 of any
  return out.sort((a, b) => a.from - b.from || a.partner - b.partner);
}

function diskBytes(dataDir: string): { events: number; reads: number; other: number; files: Record<string, number> } {
  const files: Record<string, number> = {};
  let events = 0;
  let reads = 0;
  let other = 0;
  for (const f of fs.readdirSync(dataDir)) {
    const st = fs.statSync(path.join(dataDir, f));
    if (!st.isFile()) continue;
    files[f] = st.size;
    if (/^events?/.test(f)) events += st.size;
    else if (/^read/.test(f)) reads += st.size;
    else other += st.size;
  }
  return { events, reads, other, files };
}

async function waitReady(adminBase: string, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const ok = await new Promise<boolean>((resolve) => {
      http
        .get(`${adminBase}/health/ready`, (res) => {
          res.resume();
          resolve(res.statusCode === 200);
        })
        .on('error', () => resolve(false));
    });
    if (ok) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}

// ------------------------------------------------------------------------------------------------ phases

interface Row {
  phase: string;
  what: string;
  figure: string;
  detail: string;
  target?: string;
}

const perReq = (u: Usage, n: number) =>
  `${f0((u.cpuMs * 1000) / Math.max(1, n))} µs CPU/answer (event loop ${f0((u.mainCpuMs * 1000) / Math.max(1, n))} µs), RSS max ${f0(u.rssMaxMb)} MB`;
const stat = (s: Stat | undefined) => (s ? `p50 ${f2(s.p50)} ms, p99 ${f2(s.p99)} ms (n ${s.count})` : '-');
const bad = (r: ScaleResult) => {
  const list = Object.entries(r.statuses)
    .filter(([k]) => !/ 2\d\d$/.test(k) && !/^2\d\d$/.test(k))
    .map(([k, n]) => `${n}× ${k}`);
  return list.length || r.errors
    ? `; not 2xx: ${list.join(', ') || 'none'}${r.errors ? `, ${r.errors} connection errors` : ''}`
    : '';
};

async function mixRun(
  gen: Generator,
  base: string,
  brake: boolean,
  mix: Mix,
  extra: Partial<Extract<ScaleJob, { kind: 'mix' }>> = {},
): Promise<ScaleResult> {
  return gen.run({
    kind: 'mix',
    base,
    brake,
    mix,
    concurrency: CONNECTIONS,
    durationMs: SECONDS * 1000,
    batchItems: MIX_BATCH_ITEMS,
    lagEvery: 0,
    ...extra,
  });
}

async function main(): Promise<void> {
  const target = process.env.BENCH_TARGET;
  const images: ImageServers = await startImageServers();
  const cover = coverTestEnv(images);
  const imageBase = `https://cdn.shop.test:${images.main.port}`;
  const bare = await startBare();
  const gen = new Generator();
  const rows: Row[] = [];
  const notes: string[] = [];
  const dirs: string[] = [];
  // The re-check scan runs at the service's default period (the tests' 100 ms would scan the catalog ten times a second).
  const { COVER_RECHECK_SCAN_MS: _scan, ...coverEnv } = cover.env;
  const env: Record<string, string> = {
    ...coverEnv,
    LOG_LEVEL: 'info',
    NODE_EXTRA_CA_CERTS: cover.env.COVER_FETCH_CA_FILE,
  };
  // SCALE_ENV_<NAME>=value: <NAME>=value for the service (A/B of a setting, e.g. SCALE_ENV_BATCH_PASSES=1).
  for (const [k, v] of Object.entries(process.env))
    if (k.startsWith('SCALE_ENV_') && v !== undefined) env[k.slice('SCALE_ENV_'.length)] = v;
  let topology: ChildProcess | undefined;
  try {
    let t: Target;
    if (TOPOLOGY > 0) {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-scale-topo-'));
      dirs.push(dir);
      const started = await startTopology(env, dir, TOPOLOGY);
      topology = started.launcher;
      t = started.target;
      notes.push(
        `SCALE_TOPOLOGY=${TOPOLOGY}: \`node dist/infra/wiring/entry/topology.js\` started here on loopback (nats-server, nginx, ${TOPOLOGY} command-api, 1 query-api, 1 projections, SQLite files in a temp DATA_DIR, the cover env of this run), stopped at the end; RSS and CPU are the sums over the launcher, nats-server, the nginx master and the services (not nginx's worker).`,
      );
    } else if (target) {
      const adminBase = `${process.env.BENCH_ADMIN ?? 'http://127.0.0.1:8081'}/admin/v1`;
      t = {
        api: `${target}/v1`,
        adminBase,
        admin: client(adminBase, process.env.ADMIN_TOKEN ?? ''),
        pids: (process.env.BENCH_PIDS ?? '').split(',').filter(Boolean).map(Number),
      };
      notes.push(
        `BENCH_TARGET=${target}: the service was not started here; its cover check reaches the image server of this run only if it was started with the cover env printed above.`,
      );
      process.stderr.write(`bench-scale: cover env for the target: ${JSON.stringify(env)}\n`);
    } else {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-scale-'));
      dirs.push(dir);
      t = await startTarget(env, dir);
    }
    const pids = () => t.pids;

    step(`set-up: ${PARTNERS} partners, their stores, keys, sandbox clicks`);
    const plans = await setUpPartners(t, SKUS);
    await gen.run({ kind: 'init', partners: plans, imageBase });
    const hubs = plans.filter((_, i) => i % 3 === 0);
    notes.push(
      `${PARTNERS} partners: ${hubs.length} hubs with 1–5 stores (${hubs.reduce((s, p) => s + p.stores.length, 0)} stores), ${PARTNERS - hubs.length} direct stores; catalog sizes by a Zipf law over partners (largest ${Math.max(...plans.map((p) => p.count))} SKUs, ${plans.filter((p) => p.count === 0).length} partners start empty and grow by PUT).`,
    );

    // ---- A
    const list = batchList(plans);
    step(`A) initial load: ${SKUS} SKUs in ${list.length} batches`);
    const a = await watched(pids(), () =>
      gen.run({
        kind: 'batches',
        base: t.api,
        brake: true,
        batches: list,
        concurrency: 4,
        waitDone: true,
        timeoutMs: 3_600_000,
      }),
    );
    const aBare = await watched([bare.pid], () =>
      gen.run({
        kind: 'batches',
        base: bare.base,
        brake: false,
        batches: list.slice(0, 40),
        concurrency: 4,
        waitDone: false,
        timeoutMs: 600_000,
      }),
    );
    const coverCheckLag = await drainCovers(t);
    rows.push({
      phase: 'A',
      what: `initial load, ${list.length} batches of ≤ 1,000 (4 in flight)`,
      figure: `${f0(a.result.itemsPerSec)} items/s`,
      detail: `POST → every job done, ${f1(a.result.elapsedMs / 1000)} s; ${perReq(a.usage, a.result.answered * 1000)} per item; bare node:http answers the same POSTs at ${f0(aBare.result.itemsPerSec)} items/s; cover-check queue empty ${coverCheckLag}${bad(a.result)}`,
      target: '≥ 20,000 items/s (0 → 1,000,000)',
    });

    const stopHere = async () => {
      t.service!.process.kill('SIGTERM');
      await t.service!.exited;
      report(rows, notes);
    };
    if (ONLY === 'A' && t.service) return stopHere();
    if (ONLY === 'A' && topology) return stopTopology(topology, rows, notes);

    // ---- P: PUT of new SKUs only
    step('P) PUT of new SKUs over every partner, saturation; then the bare server');
    const putMix: Mix = { patch: 0, put: 1, read: 0, conversion: 0, batch: 0 };
    const p = await watched(pids(), () => mixRun(gen, t.api, true, putMix));
    const pBare = await watched([bare.pid], () => mixRun(gen, bare.base, false, putMix));
    const pRate = (p.result.answered / p.result.elapsedMs) * 1000;
    const pBareRate = (pBare.result.answered / pBare.result.elapsedMs) * 1000;
    rows.push({
      phase: 'P',
      what: `PUT new SKUs, ${PARTNERS} keys under the brake, cover on, ${CONNECTIONS} connections`,
      figure: `${f0(pRate)} PUT/s`,
      detail: `${stat(p.result.byType.put)}; ${perReq(p.usage, p.result.answered)}${bad(p.result)}`,
    });
    rows.push({
      phase: 'P',
      what: 'bare node:http, same client and mix',
      figure: `${f0(pBareRate)} req/s`,
      detail: `${stat(pBare.result.byType.put)}; ${perReq(pBare.usage, pBare.result.answered)}`,
    });
    rows.push({
      phase: 'P',
      what: 'ratio service / bare',
      figure: f2(pRate / pBareRate),
      detail: '',
      target: '≥ 0.25',
    });
    if (ONLY === 'P' && t.service) return stopHere();
    if (ONLY === 'P' && topology) return stopTopology(topology, rows, notes);

    // ---- B
    const b = await mixPhase('B', gen, t, bare, pids(), rows, true);
    if (ONLY === 'B' && t.service) return stopHere();
    if (ONLY === 'B' && topology) return stopTopology(topology, rows, notes);

    // ---- D
    if (t.service && t.dataDir) {
      const disk = diskBytes(t.dataDir);
      const skus = plans.reduce((s, p) => s + p.count, 0) + p.result.answered + (b.result.byType.put?.count ?? 0);
      rows.push({
        phase: 'A+P+B',
        what: `bytes on disk per SKU (${skus} SKUs)`,
        figure: `${f0((disk.events + disk.reads + disk.other) / skus)} B`,
        detail: `event log ${f0(disk.events / skus)} B/SKU, read models ${f0(disk.reads / skus)} B/SKU, other ${f0(disk.other / skus)} B/SKU; files: ${Object.entries(
          disk.files,
        )
          .map(([f, n]) => `${f} ${f1(n / 2 ** 20)} MB`)
          .join(', ')}`,
      });
      step('D) restart on the log of A, P and B');
      const head = await headPosition(t);
      t.service.process.kill('SIGTERM');
      await t.service.exited;
      const r0 = performance.now();
      const again = await startTarget(env, t.dataDir);
      const started = performance.now() - r0;
      const ready = await waitReady(again.adminBase, 600_000);
      const readyMs = performance.now() - r0;
      t = again;
      rows.push({
        phase: 'D',
        what: `restart, log of ${head} positions`,
        figure: `${f2(readyMs / 1000)} s to ready`,
        detail:
          `${f2(started / 1000)} s to listening; ${ready ? '' : 'NOT ready within 600 s; '}` +
          `RSS after ready ${f0(rssMb(t.pids[0]))} MB`,
        target: '≤ 10 s with a 10,000,000-event log',
      });
      await rebuildAll(t, rows);
      step('D) ops audit verify');
      const v0 = performance.now();
      const verify = await runOps(t.adminBase, ['audit', 'verify']);
      rows.push({
        phase: 'D',
        what: '`ops audit verify`',
        figure: `${f2((performance.now() - v0) / 1000)} s`,
        detail: `exit ${verify.code}; ${verify.out.slice(0, 200).replace(/\s+/g, ' ')}`,
      });
      t.service!.process.kill('SIGTERM');
      await t.service!.exited;

      // ---- C
      step(`C) a fresh service with ${SMALL_SKUS} SKUs, the same mix`);
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-scale-small-'));
      dirs.push(dir);
      const small = await startTarget(env, dir);
      const smallPlans = await setUpPartners(small, SMALL_SKUS);
      await gen.run({ kind: 'init', partners: smallPlans, imageBase });
      const ca = await gen.run({
        kind: 'batches',
        base: small.api,
        brake: true,
        batches: batchList(smallPlans),
        concurrency: 4,
        waitDone: true,
        timeoutMs: 3_600_000,
      });
      rows.push({
        phase: 'C',
        what: `initial load of ${SMALL_SKUS}`,
        figure: `${f0(ca.itemsPerSec)} items/s`,
        detail: bad(ca),
      });
      await drainCovers(small);
      const c = await mixPhase('C', gen, small, bare, small.pids, rows, false);
      rows.push({
        phase: 'B/C',
        what: `mix at ${SKUS} SKUs ÷ mix at ${SMALL_SKUS}`,
        figure: f2(b.rate / c.rate),
        detail: `saturation ${f0(b.rate)} vs ${f0(c.rate)} req/s`,
        target: '≥ 0.7 (at 1,000,000)',
      });
      small.service!.process.kill('SIGTERM');
      await small.service!.exited;
    } else {
      notes.push('Against BENCH_TARGET or SCALE_TOPOLOGY: no restart and no phase C.');
      await rebuildAll(t, rows);
      if (topology) return stopTopology(topology, rows, notes);
    }
  } finally {
    if (topology && topology.exitCode === null) topology.kill('SIGTERM'); // after a failure: stop what was started
    gen.close();
    bare.close();
    await images.close();
    cover.cleanup();
    // SCALE_KEEP_DIR=1: keep the data dirs (to start a service on them again, e.g. to time a restart).
    if (process.env.SCALE_KEEP_DIR === '1') process.stderr.write(`bench-scale: data dirs kept: ${dirs.join(' ')}\n`);
    else for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  }
  report(rows, notes);
}

/** Starts `make run-topology`'s launcher with `commandReplicas` command-api processes; resolves once it is ready. */
async function startTopology(
  env: Record<string, string>,
  dataDir: string,
  commandReplicas: number,
): Promise<{ launcher: ChildProcess; target: Target }> {
  const [port, adminPort] = [await freePort(), await freePort()];
  const launcher = spawn(process.execPath, [path.join(ROOT, 'dist/infra/wiring/entry/topology.js')], {
    env: {
      PATH: process.env.PATH ?? '',
      ...env,
      HOST: '127.0.0.1',
      ADMIN_HOST: '127.0.0.1',
      PORT: String(port),
      ADMIN_PORT: String(adminPort),
      DATA_DIR: dataDir,
      ADMIN_TOKEN,
      COMMAND_REPLICAS: String(commandReplicas),
      QUERY_REPLICAS: '1',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  launcher.stderr.resume();
  const ready = await new Promise<{
    pids: { launcher: number; nats: number | null; nginx: number | null; services: Record<string, number | null> };
  }>((resolve, reject) => {
    let buffer = '';
    launcher.stdout.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      let nl: number;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        if (line.startsWith('{"ready":"topology"')) resolve(JSON.parse(line) as never);
      }
      if (buffer.length > 1_000_000) buffer = '';
    });
    launcher.once('exit', (code) => reject(new Error(`the topology exited (${code}) before it was ready`)));
  });
  const pids = [ready.pids.launcher, ready.pids.nats, ready.pids.nginx, ...Object.values(ready.pids.services)].filter(
    (p): p is number => typeof p === 'number',
  );
  const adminBase = `http://127.0.0.1:${adminPort}/admin/v1`;
  return {
    launcher,
    target: { api: `http://127.0.0.1:${port}/v1`, adminBase, admin: client(adminBase, ADMIN_TOKEN), pids },
  };
}

async function stopTopology(launcher: ChildProcess, rows: Row[], notes: string[]): Promise<void> {
  const exited = new Promise<void>((resolve) => launcher.once('exit', () => resolve()));
  launcher.kill('SIGTERM');
  await exited;
  report(rows, notes);
}

async function mixPhase(
  phase: string,
  gen: Generator,
  t: Target,
  bare: { base: string; pid: number },
  pids: number[],
  rows: Row[],
  half: boolean,
): Promise<{ rate: number; result: ScaleResult }> {
  step(`${phase}) the mix, saturation (closed loop, ${CONNECTIONS} connections); then the bare server`);
  const sat = await watched(pids, () => mixRun(gen, t.api, true, MIX));
  const rate = (sat.result.answered / sat.result.elapsedMs) * 1000;
  const satBare = await watched([bare.pid], () => mixRun(gen, bare.base, false, MIX));
  const bareRate = (satBare.result.answered / satBare.result.elapsedMs) * 1000;
  const types = (r: ScaleResult) =>
    Object.entries(r.byType)
      .filter(([k]) => k !== 'all')
      .map(([k, s]) => `${k} ${s.count}`)
      .join(', ');
  rows.push({
    phase,
    what: 'mix at saturation',
    figure: `${f0(rate)} req/s`,
    detail: `${stat(sat.result.byType.all)}; ${types(sat.result)}; ${perReq(sat.usage, sat.result.answered)}; ${sat.result.budgetRedraws} draws redrawn for a key without budget${bad(sat.result)}`,
  });
  rows.push({
    phase,
    what: 'bare node:http, same mix',
    figure: `${f0(bareRate)} req/s`,
    detail: `${stat(satBare.result.byType.all)}; ${perReq(satBare.usage, satBare.result.answered)}; ratio service / bare ${f2(rate / bareRate)}`,
  });
  if (half) {
    step(`${phase}) the mix at half of saturation (${f0(rate / 2)} req/s, open loop), projection lag sampled`);
    const h = await watched(pids, () =>
      mixRun(gen, t.api, true, MIX, { ratePerSec: rate / 2, lagEvery: 10, eventsLagEvery: 2 }),
    );
    const hBare = await watched([bare.pid], () => mixRun(gen, bare.base, false, MIX, { ratePerSec: rate / 2 }));
    const hr = h.result;
    rows.push({
      phase,
      what: `mix at half (${f0((hr.answered / hr.elapsedMs) * 1000)} req/s done)`,
      figure: `PATCH p99 ${f2(hr.byType.patch?.p99)} ms`,
      detail: `PATCH ${stat(hr.byType.patch)}; ${perReq(h.usage, hr.answered)}${bad(hr)}`,
      target: 'PATCH p99 ≤ 25 ms',
    });
    for (const k of [
      'put',
      'get-product',
      'list-products',
      'list-clicks',
      'conversion-paid',
      'conversion-refund',
      'batch',
    ]) {
      rows.push({
        phase,
        what: `  ${k} at half`,
        figure: `p99 ${f2(hr.byType[k]?.p99)} ms`,
        detail: `${stat(hr.byType[k])}${k === 'list-products' ? `; pages reached up to depth ${hr.maxDepth} (limit 200)` : ''}`,
        ...(k === 'list-products' ? { target: 'p99 ≤ 20 ms at any depth' } : {}),
      });
    }
    rows.push({
      phase,
      what: 'projection lag at half (PATCH answered → GET of it answered)',
      figure: `p99 ${f2(hr.lag?.p99)} ms`,
      detail: `${stat(hr.lag)}; an upper bound: includes one GET round trip (read-your-writes waits for the projections)`,
      target: 'p99 ≤ 50 ms',
    });
    // The events feed keeps up when a notification is readable about as soon as the read models show its write:
    // both measured on the same new SKUs' PUTs, the two GETs sent together.
    rows.push({
      phase,
      what: 'notification lag at half (new SKU PUT answered → GET /v1/events holds its notification)',
      figure: `p99 ${f2(hr.eventsLag?.p99)} ms`,
      detail: `${stat(hr.eventsLag)}; the same PUTs → GET of the product: ${stat(hr.putLag)}; p99 ratio ${f2((hr.eventsLag?.p99 ?? NaN) / (hr.putLag?.p99 ?? NaN))}, p50 ratio ${f2((hr.eventsLag?.p50 ?? NaN) / (hr.putLag?.p50 ?? NaN))}; samples given up ${hr.eventsLagMissed ?? 0}`,
      target: 'within 2× of the read models’ lag',
    });
    rows.push({
      phase,
      what: 'bare node:http at the same rate',
      figure: `p99 ${f2(hBare.result.byType.all?.p99)} ms`,
      detail: `${stat(hBare.result.byType.all)}; ${perReq(hBare.usage, hBare.result.answered)}`,
    });
  }
  return { rate, result: sat.result };
}

async function drainCovers(t: Target): Promise<string> {
  // The cover-check backlog is not exposed as one figure here; wait until the projections are live (ready).
  const t0 = performance.now();
  const ok = await waitReady(t.adminBase, 600_000);
  return ok ? `(ready ${f1((performance.now() - t0) / 1000)} s after the last job)` : '(not ready within 600 s)';
}

async function headPosition(t: Target): Promise<number> {
  const r = await t.admin.get('/projections');
  return Math.max(0, ...(r.body.projections as { head: number }[]).map((p) => p.head));
}

async function rebuildAll(t: Target, rows: Row[]): Promise<void> {
  const names = ((await t.admin.get('/projections')).body.projections as { name: string }[]).map((p) => p.name);
  for (const name of names) {
    step(`D) rebuild ${name}`);
    const t0 = performance.now();
    const started = await t.admin.post(`/projections/${name}/rebuild`, {});
    if (started.status !== 202) {
      rows.push({ phase: 'D', what: `rebuild ${name}`, figure: '-', detail: `answered ${started.status}` });
      continue;
    }
    type Progress = { state: string; events_applied: number; events_per_second: number };
    let progress: Progress | null = null;
    for (let i = 0; i < 36_000; i++) {
      await new Promise((r) => setTimeout(r, 100));
      const s: { name: string; rebuild: Progress | null } | undefined = (
        (await t.admin.get('/projections')).body.projections as { name: string; rebuild: Progress | null }[]
      ).find((p) => p.name === name);
      progress = s?.rebuild ?? null;
      if (progress && progress.state !== 'rebuilding' && progress.state !== 'switching') break;
    }
    const ms = performance.now() - t0;
    const n = progress?.events_applied ?? 0;
    rows.push({
      phase: 'D',
      what: `rebuild ${name}`,
      figure: `${f0((n / ms) * 1000)} events/s`,
      detail: `${n} events in ${f2(ms / 1000)} s (POST → switched, state ${progress?.state}); the service's own figure ${f0(progress?.events_per_second)} events/s`,
      target: '≥ 100,000 events/s',
    });
  }
}

function runOps(adminBase: string, args: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(ROOT, 'dist/infra/ops/cli/ops.js'), ...args], {
      env: { PATH: process.env.PATH ?? '', ADMIN_URL: adminBase, ADMIN_TOKEN },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    child.on('exit', (code) => resolve({ code, out }));
  });
}

function report(rows: Row[], notes: string[]): void {
  const table = rows
    .map((r) => `| ${r.phase} | ${r.what} | ${r.figure} | ${r.target ?? ''} | ${r.detail} |`)
    .join('\n');
  process.stdout.write(
    `\n${rows.map((r) => `${r.phase.padEnd(5)} ${r.what.padEnd(60)} ${r.figure.padStart(22)}  ${r.target ? `[target ${r.target}] ` : ''}${r.detail}`).join('\n')}\n${notes.join('\n')}\n`,
  );
  const cmd = `SCALE_SKUS=${SKUS} SCALE_SECONDS=${SECONDS} SCALE_CONNECTIONS=${CONNECTIONS} SCALE_PARTNERS=${PARTNERS} node dist/tests/bench/scale.js`;
  const markdown = [
    `${f0((Date.now() - T0) / 1000)} s in all. **SCALE_SKUS=${SKUS}**${SKUS < 1_000_000 ? ' (below the 1,000,000 of the targets: nothing "at 1,000,000" is measured).' : '.'}`,
    '',
    '| Phase | What | Figure | Target | Detail |',
    '| --- | --- | --- | --- | --- |',
    table,
    '',
    ...notes.map((n) => `- ${n}`),
    '',
  ].join('\n');
  const file = writeBenchResults('bench-scale', { command: cmd, figures: { skus: SKUS, rows, notes }, markdown });
  process.stdout.write(`figures written to ${path.relative(ROOT, file)} (and its .md beside it)\n`);
}
