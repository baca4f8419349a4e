// The single-PUT benchmark in both topologies of one run: `PUT /products/{sku}` from many keep-alive clients,
// (1) against the embedded one-process service, (2) through nginx in front of two command-api replicas, two
// query-api replicas and one projections process sharing SQLite files, with NATS (rate brake, read-your-writes,
// wake-ups). Requests per second and p50/p99 latency for each, and the ratio multi ÷ embedded.
// Both run as child processes (the embedded one is `node dist/infra/main.js`), so the load generator here does
// not share an event loop with either. Client, services, nginx and NATS share this machine's cores: the figures
// compare shapes, not capacity.
// Run: node dist/tests/bench/topology-bench.js [requests=4000] [clients=32] [command replicas=2] [query replicas=2]
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { client, productBody, storeBody, type Client } from '../support/service.js';
import { startMultiTestService } from '../support/topology-service.js';
import { TOPOLOGY_ADMIN_TOKEN, topologyAvailable } from '../support/topology.js';
import { freePort } from '../../infra/topology/ports.js';

export interface PutFigures {
  requests: number;
  clients: number;
  seconds: number;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** Answers other than 200 (there should be none). */
  errors: number;
}

export interface TopologyBenchReport {
  embedded: PutFigures;
  /** Absent when nginx or nats-server is not installed. */
  multi?: PutFigures;
  /** multi requests/s ÷ embedded requests/s. */
  ratio?: number;
  notRun?: string;
}

/** A key may write 600 times a minute and the clock is manual here: one key per client, under that. */
const PER_KEY = 590;

export interface TopologyBenchOptions {
  requests?: number;
  clients?: number;
  /** Replicas of the multi-process run. Default 2 and 2. */
  commandReplicas?: number;
  queryReplicas?: number;
  /** Extra environment of every process of both runs (e.g. SQLITE_SYNCHRONOUS). */
  env?: Record<string, string>;
}

export async function benchTopologyPut(options: TopologyBenchOptions = {}): Promise<TopologyBenchReport> {
  const clients = options.clients ?? 32;
  const requests = Math.min(options.requests ?? 4000, clients * PER_KEY);
  const embedded = await runOn(await startEmbeddedProcess(options.env ?? {}), requests, clients);
  const available = topologyAvailable();
  if (!available.ok) return { embedded, notRun: `multi-process topology not run: ${available.why}` };
  const t = await startMultiTestService(options.env ?? {}, undefined, {
    nginxWorkers: 'auto',
    commandReplicas: options.commandReplicas ?? 2,
    queryReplicas: options.queryReplicas ?? 2,
  });
  const multi = await runOn({ api: t.api, admin: t.admin, close: () => t.close() }, requests, clients);
  return { embedded, multi, ratio: multi.requestsPerSecond / embedded.requestsPerSecond };
}

interface Target {
  /** `http://host:port/v1` */
  api: string;
  admin: Client;
  close(): Promise<void>;
}

async function runOn(t: Target, requests: number, clients: number): Promise<PutFigures> {
  try {
    const created = await t.admin.post('/partners', { name: 'Bench', partner_type: 'hub' });
    const partnerId = created.body.partner_id as string;
    const keys: string[] = [];
    for (let c = 0; c < clients; c++)
      keys.push((await t.admin.post(`/partners/${partnerId}/keys`, { environment: 'live' })).body.api_key);
    const store = await client(t.api, keys[0]).put('/stores/bench', storeBody());
    if (store.status !== 200) throw new Error(`store: ${store.status} ${JSON.stringify(store.body)}`);
    const url = new URL(t.api);
    const agent = new http.Agent({ keepAlive: true, maxSockets: clients });
    const start = Date.now() - 3_600_000; // the services' manual clocks start at their start
    let sent = 0;
    // Each client writes its own 20 products (concurrent writes to one stream would measure conflicts instead).
    const put = (key: string, c: number, n: number) => {
      const body = JSON.stringify(
        productBody('bench', { price_cents: 1000 + n, updated_at: new Date(start + n).toISOString() }),
      );
      return request(agent, url, `/v1/products/sku-${c}-${n % 20}`, key, body);
    };
    // Warm-up: connections, caches, JIT.
    await Promise.all(keys.map((key, c) => put(key, c, c)));
    sent = clients;
    const latencies: number[] = [];
    let errors = 0;
    const began = process.hrtime.bigint();
    await Promise.all(
      keys.map(async (key, c) => {
        for (;;) {
          const n = sent++;
          if (n >= requests + clients) return;
          const t0 = process.hrtime.bigint();
          const status = await put(key, c, n);
          latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
          if (status !== 200) errors++;
        }
      }),
    );
    const seconds = Number(process.hrtime.bigint() - began) / 1e9;
    agent.destroy();
    latencies.sort((a, b) => a - b);
    const at = (q: number) =>
      Math.round(latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] * 100) / 100;
    return {
      requests: latencies.length,
      clients,
      seconds: Math.round(seconds * 100) / 100,
      requestsPerSecond: Math.round(latencies.length / seconds),
      p50Ms: at(0.5),
      p99Ms: at(0.99),
      errors,
    };
  } finally {
    await t.close();
  }
}

/** `node dist/infra/main.js` (the embedded default) on free loopback ports, in a temp DATA_DIR, logging as little as the topology. */
async function startEmbeddedProcess(extraEnv: Record<string, string>): Promise<Target> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-bench-'));
  const main = fileURLToPath(new URL('../../infra/main.js', import.meta.url));
  const [port, adminPort] = [await freePort(), await freePort()];
  const env = {
    PATH: process.env.PATH ?? '',
    DATA_DIR: dataDir,
    PORT: String(port),
    ADMIN_PORT: String(adminPort),
    ADMIN_TOKEN: TOPOLOGY_ADMIN_TOKEN,
    CLOCK: 'manual',
    LOG_LEVEL: 'warn',
    COVER_CHECK: 'off', // as in the topology run (tests/support/topology-service.ts): test hosts never reach DNS
    ...extraEnv,
  };
  const child = spawn(process.execPath, [main], { env, stdio: ['ignore', 'ignore', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const admin = client(`http://127.0.0.1:${adminPort}/admin/v1`, TOPOLOGY_ADMIN_TOKEN);
  const deadline = Date.now() + 20_000;
  while ((await admin.get('/clock').catch(() => undefined))?.status !== 200) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error('the embedded service did not start');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return {
    api: `http://127.0.0.1:${port}/v1`,
    admin,
    async close() {
      child.kill('SIGTERM');
      await exited;
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

function request(agent: http.Agent, base: URL, path: string, key: string, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        agent,
        host: base.hostname,
        port: base.port,
        method: 'PUT',
        path,
        headers: {
          Authorization: `Bearer ${key}`,
          'Content-Type': 'application/json',
          'Content-Length': Buffer.byteLength(body),
        },
      },
      (res) => {
        res.resume();
        res.once('end', () => resolve(res.statusCode ?? 0));
        res.once('error', reject);
      },
    );
    req.once('error', reject);
    req.end(body);
  });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const requests = Number(process.argv[2] ?? 4000);
  const clients = Number(process.argv[3] ?? 32);
  const commandReplicas = Number(process.argv[4] ?? 2);
  const queryReplicas = Number(process.argv[5] ?? 2);
  const report = await benchTopologyPut({ requests, clients, commandReplicas, queryReplicas });
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  process.exit(0);
}
