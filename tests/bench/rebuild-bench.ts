/**
 * Rebuild, restart and audit on a large event log (not a test; run after building):
 *
 *   node dist/tests/bench/rebuild-bench.js [N]            (N product/store events, default 200000)
 *   REBUILD_BENCH_DIR=/tmp/x node ... (keeps the data dir; with an existing log, the build step is skipped)
 *   REBUILD_BENCH_STEPS=rebuild,verify,restart (default all three)
 *
 * Builds an embedded DATA_DIR whose log holds N events of stores (registered, approved) and products (upserts, then
 * price patches), appended in large groups straight through the SQLite event store adapter. The live checkpoints are
 * set to the head (as if a live service had caught up) and every projection is rebuilt through the service's own
 * rebuilder (projections/rebuild.ts): the products and offers figures are the ones that count. Then `audit verify`
 * (the service's operations.verify), then a restart: startService on the data dir until ready.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import pino from 'pino';
import { SqliteEventStore } from '../../infra/adapters/sqlite/event-store.js';
import { SqliteReadStore } from '../../infra/adapters/sqlite/read-store.js';
import { loadConfig } from '../../infra/wiring/config.js';
import { PROJECTORS, startService, type Service } from '../../infra/wiring/service.js';
import type { NewEvent } from '../../shared-schema/ports/event-store.js';

const N = Number(process.argv[2] ?? 200_000);
const dir = process.env.REBUILD_BENCH_DIR ?? fs.mkdtempSync(path.join(os.tmpdir(), 'pc-rebuild-bench-'));
fs.mkdirSync(dir, { recursive: true });
const steps = new Set((process.env.REBUILD_BENCH_STEPS ?? 'rebuild,verify,restart').split(','));
/** Projections to rebuild (default every one; the audit needs them all rebuilt once on a fresh log). */
const only = process.env.REBUILD_BENCH_ONLY?.split(',');
const STORES = 1000;
const f = (x: number, d = 0) => x.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });

const meta = (at: string) => ({ recorded_at: at, request_id: 'bench', actor: 'bench' });

async function buildLog(): Promise<number> {
  const events = SqliteEventStore.open({
    path: path.join(dir, 'events.db'),
    synchronous: 'NORMAL',
    maxGroupEvents: 20_000,
  });
  const at = '2026-01-01T00:00:00.000Z';
  const partners = 200;
  const scope = (i: number) => `live:pt_${String(i % partners).padStart(4, '0')}`;
  let written = 0;
  let pending: Promise<unknown>[] = [];
  const append = (stream: string, list: NewEvent[]) => {
    pending.push(events.appendToStream(stream, list, 'any'));
    written += list.length;
  };
  const flush = async () => {
    await Promise.all(pending);
    pending = [];
  };
  for (let s = 0; s < STORES; s++) {
    const store = {
      name: `Store ${s}`,
      cnpj: String(10_000_000_000_000 + s),
      website_url: `https://s${s}.example.com`,
      domains: [`s${s}.example.com`],
    };
    append(`store-${scope(s)}:st_${s}`, [
      { type: 'StoreRegistered', data: { store_id: `st_${s}`, store, registered_at: at }, metadata: meta(at) },
      { type: 'StoreApproved', data: { store_id: `st_${s}`, domains: store.domains }, metadata: meta(at) },
    ]);
  }
  await flush();
  const skus = Math.max(1, Math.floor((N - written) * 0.6));
  for (let i = 0; written < N; i++) {
    const n = i % skus;
    const s = n % STORES;
    const stream = `product-${scope(s)}:sku-${n}`;
    const cents = 1000 + ((i * 7919) % 100_000);
    if (i < skus) {
      const product = {
        store_id: `st_${s}`,
        title: `Product ${n} brand${n % 97} model ${n % 1013}`,
        description: `A description of product ${n}, with a few words to index.`,
        brand: `brand${n % 97}`,
        product_url: `https://s${s}.example.com/p/${n}`,
        image_urls: [`https://s${s}.example.com/i/${n}.jpg`],
        price_cents: cents,
        available: true,
        stock_quantity: 10,
        updated_at: at,
      };
      append(stream, [
        { type: 'ProductUpserted', data: { sku: `sku-${n}`, product, received_at: at }, metadata: meta(at) },
      ]);
    } else {
      append(stream, [
        {
          type: 'ProductPatched',
          data: { sku: `sku-${n}`, patch: { price_cents: cents, updated_at: at }, received_at: at },
          metadata: meta(at),
        },
      ]);
    }
    if (pending.length >= 20_000) await flush();
  }
  await flush();
  const head = await events.headPosition();
  await events.close();
  // As if a live service had caught up: every projection's checkpoint at the head (its generation 0 stays empty).
  const reads = SqliteReadStore.open({ path: path.join(dir, 'read.db'), sweepIntervalMs: 0 });
  await reads.transact(async (tx) => {
    for (const p of PROJECTORS) await tx.setCheckpoint(p.name, head);
  });
  await reads.close();
  return head;
}

async function start(): Promise<{ service: Service; listeningMs: number; readyMs: number }> {
  const config = loadConfig({
    PORT: '0',
    ADMIN_PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dir,
    ADMIN_TOKEN: 'bench-admin-token-0123456789',
    COVER_CHECK: 'off',
    NODE_ENV: 'development',
  });
  const t0 = performance.now();
  const service = await startService(config, {
    log: pino({ level: 'silent' }),
    operations: {
      generationDropGraceMs: 0,
      ...(process.env.REBUILD_BENCH_PAGE ? { rebuildPageSize: Number(process.env.REBUILD_BENCH_PAGE) } : {}),
    },
  });
  const listeningMs = performance.now() - t0;
  for (;;) {
    if ((await service.operations.readiness()).ready) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  return { service, listeningMs, readyMs: performance.now() - t0 };
}

async function main(): Promise<void> {
  const existing = fs.existsSync(path.join(dir, 'events.db'));
  const t0 = performance.now();
  const head = existing ? 0 : await buildLog();
  if (!existing) console.log(`log: ${f(head)} events in ${f((performance.now() - t0) / 1000, 1)} s (${dir})`);
  const first = await start();
  let { service } = first;
  console.log(`start: ${f(first.listeningMs / 1000, 2)} s to listening, ${f(first.readyMs / 1000, 2)} s to ready`);
  if (steps.has('rebuild')) {
    for (const p of PROJECTORS) {
      if (p.collections.length === 0 || (only && !only.includes(p.name))) continue;
      const r0 = performance.now();
      const c0 = process.cpuUsage();
      service.operations.rebuilder.start(p.name);
      const end = await service.operations.rebuilder.finished(p.name);
      const s = (performance.now() - r0) / 1000;
      if (end?.state !== 'done') throw new Error(`rebuild of ${p.name}: ${JSON.stringify(end)}`);
      const cpu = process.cpuUsage(c0); // every thread of the process, user + system
      console.log(
        `rebuild ${p.name}: ${f(end.events_applied)} events in ${f(s, 2)} s → ${f(end.events_applied / s)} events/s; ` +
          `${f((cpu.user + cpu.system) / Math.max(1, end.events_applied), 1)} µs CPU per event (${f((end.events_applied / (cpu.user + cpu.system)) * 1e6)} events per CPU second)`,
      );
    }
  }
  if (steps.has('verify')) {
    const v0 = performance.now();
    const report = await service.operations.verify();
    console.log(
      `audit verify: ${f((performance.now() - v0) / 1000, 2)} s, ${f(report.events_replayed)} events replayed, ${f(report.documents_compared)} documents, ${report.differences.length} differences`,
    );
    if (report.differences.length > 0) console.log(JSON.stringify(report.differences.slice(0, 3)));
  }
  await service.close();
  if (steps.has('restart')) {
    const again = await start();
    service = again.service;
    console.log(
      `restart: ${f(again.listeningMs / 1000, 2)} s to listening, ${f(again.readyMs / 1000, 2)} s to ready (log of ${f(await service.events.headPosition())} positions)`,
    );
    await service.close();
  }
  if (!process.env.REBUILD_BENCH_DIR) fs.rmSync(dir, { recursive: true, force: true });
}

// Exits explicitly: a handle left open must not keep the run (or a --cpu-prof profile) from ending.
main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
