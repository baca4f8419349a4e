/**
 * `GET /v1/products?limit=200` in-process (not a test; run after building):
 *
 *   node dist/tests/bench/list-bench.js [N]     (N product documents, default 200000, over LIST_BENCH_PARTNERS=4)
 *   LIST_BENCH_DIR=/tmp/x node ...             (keeps read.db; an existing one is reused)
 *
 * Fills the products read model of a fresh `read.db` with N documents as the products projector writes them
 * (a few partners, each with 10 stores; a large catalog), then, for each partner, pages through its whole list with
 * the query door's own handler (query-api/routes/catalog.ts: validation aside, the cursor, the keyset read, the
 * view mapping) and serializes each page as the door does. Reports the time per page (p50/p99/max) by depth, and
 * the share of the read store's `find`, the view mapping and JSON.stringify, plus the read's query plan.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { SqliteReadStore } from '../../infra/adapters/sqlite/read-store.js';
import { catalogReadRoutes } from '../../query-api/routes/catalog.js';
import type { QueryDeps } from '../../query-api/app.js';
import type { DoorContext } from '../../shared-schema/http/context.js';
import { CursorSecret } from '../../shared-schema/http/pagination.js';
import { systemClock } from '../../shared-schema/ports/clock.js';
import type { Messaging } from '../../shared-schema/ports/messaging.js';
import type { ReadStore } from '../../shared-schema/ports/read-store.js';
import {
  PRODUCT_COLLECTIONS,
  PRODUCTS,
  STORE_FACTS,
  productDocId,
  storeFactsId,
} from '../../shared-schema/read-models/products.js';
import type { Tenant } from '../../shared-schema/domain/streams.js';

const N = Number(process.argv[2] ?? 200_000);
const PARTNERS = Number(process.env.LIST_BENCH_PARTNERS ?? 4);
const LIMIT = 200;
const dir = process.env.LIST_BENCH_DIR ?? fs.mkdtempSync(path.join(os.tmpdir(), 'pc-list-bench-'));
fs.mkdirSync(dir, { recursive: true });
const f = (x: number, d = 2) => x.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });

const tenants: Tenant[] = Array.from({ length: PARTNERS }, (_, i) => ({
  partnerId: `pt_${String(i).padStart(4, '0')}`,
  env: 'live',
}));

async function fill(reads: SqliteReadStore): Promise<void> {
  const at = '2026-11-24T00:00:00.000Z';
  const t0 = performance.now();
  const group = 10_000;
  for (let start = 0; start < N; start += group) {
    await reads.transact(async (tx) => {
      for (let n = start; n < Math.min(N, start + group); n++) {
        const t = tenants[n % PARTNERS];
        const storeId = `st_${n % 10}`;
        const sku = `sku-${String(n).padStart(8, '0')}`;
        const accepted = n % 4 !== 0;
        await tx.put(PRODUCTS, {
          _id: productDocId(t, sku),
          partner_id: t.partnerId,
          env: t.env,
          position: n + 1,
          sku,
          store_id: storeId,
          product: {
            store_id: storeId,
            title: `Product ${n} brand${n % 97} model ${n % 1013}`,
            description: `A description of product ${n}, with a few words to index and some more text to weigh it.`,
            brand: `brand${n % 97}`,
            gtin: String(7_890_000_000_000 + n),
            product_url: `https://s${n % 10}.example.com/p/${n}`,
            image_urls: [`https://s${n % 10}.example.com/i/${n}.jpg`, `https://s${n % 10}.example.com/i/${n}-2.jpg`],
            price_cents: 1000 + (n % 100_000),
            available: true,
            stock_quantity: 10,
            attributes: { color: 'blue', size: 'M' },
            updated_at: at,
          },
          removed: false,
          cover: accepted
            ? { url: `https://s${n % 10}.example.com/i/${n}.jpg`, ok: true, reasons: [], checked_at: at }
            : null,
          cover_checked_at: accepted ? at : null,
          base_state: accepted ? 'accepted' : 'pending',
          reasons: accepted
            ? []
            : [
                {
                  code: 'domain_not_approved',
                  field: 'product_url',
                  message: 'The domain of product_url is not approved yet.',
                },
              ],
          received_at: at,
          last_write_at: at,
          published_at: accepted ? at : null,
        });
      }
      if (start === 0) {
        for (const t of tenants)
          for (let s = 0; s < 10; s++)
            await tx.put(STORE_FACTS, {
              _id: storeFactsId(t, `st_${s}`),
              position: 1,
              status: 'active',
              domains: [`s${s}.example.com`],
              domains_approved: [`s${s}.example.com`],
              default_commission: { type: 'percentage', rate: 5 },
            });
      }
    });
  }
  console.log(`filled ${f(N, 0)} products in ${f((performance.now() - t0) / 1000, 1)} s (${dir})`);
}

/** Wraps `find` and `get` to time them apart from the rest of the handler. */
function timed(reads: ReadStore, spent: { find: number; get: number }): ReadStore {
  return new Proxy(reads, {
    get(target, prop, receiver) {
      if (prop === 'find' || prop === 'get') {
        return async (...args: unknown[]) => {
          const t0 = performance.now();
          const out = await (target[prop] as (...a: unknown[]) => Promise<unknown>).apply(target, args);
          spent[prop] += performance.now() - t0;
          return out;
        };
      }
      return Reflect.get(target, prop, receiver) as unknown;
    },
  });
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

async function main(): Promise<void> {
  const file = path.join(dir, 'read.db');
  const existed = fs.existsSync(file);
  const reads = SqliteReadStore.open({ path: file, sweepIntervalMs: 0 });
  await reads.ensureCollections(PRODUCT_COLLECTIONS);
  if (!existed) await fill(reads);
  const spent = { find: 0, get: 0 };
  const deps: QueryDeps = {
    reads: timed(reads, spent),
    messaging: {} as Messaging,
    clock: systemClock,
    publicBaseUrl: 'https://api.example.com',
    waitForPosition: async () => true,
    logHead: async () => 0,
    cursorSecret: new CursorSecret('list-bench-secret-0123456789abcdef'),
  };
  const route = catalogReadRoutes.find((r) => r.path === '/products')!;
  console.log(
    'plan (page 2):',
    reads.explain(PRODUCTS, {
      find: {
        where: { partner_id: tenants[0].partnerId, env: 'live' },
        orderBy: [{ field: 'sku' }],
        after: ['sku-00000400', 'live:pt_0000:sku-00000400'],
        limit: LIMIT + 1,
      },
    }),
  );
  const rounds = Number(process.env.LIST_BENCH_ROUNDS ?? 2);
  for (const state of [undefined, 'accepted'] as const) {
    const times: number[] = [];
    const cpus: number[] = [];
    const byDepth = new Map<number, number[]>();
    let serialize = 0;
    let bytes = 0;
    spent.find = 0;
    spent.get = 0;
    const t0 = performance.now();
    for (let round = 0; round < rounds; round++) {
      for (const t of tenants) {
        let cursor: string | undefined;
        for (let depth = 0; ; depth++) {
          const query: Record<string, unknown> = { limit: LIMIT };
          if (cursor) query.cursor = cursor;
          if (state) query.state = state;
          const ctx = {
            state: { caller: { ...t, partnerName: 'x', partnerType: 'hub', scopes: [] } },
          } as unknown as DoorContext;
          const p0 = performance.now();
          const c0 = process.cpuUsage();
          const body = (await route.handle(ctx, query, deps)) as { data: unknown[]; next_cursor: string | null };
          const s0 = performance.now();
          const json = JSON.stringify(body);
          const end = performance.now();
          const cpu = process.cpuUsage(c0);
          cpus.push((cpu.user + cpu.system) / 1000);
          serialize += end - s0;
          bytes += json.length;
          times.push(end - p0);
          const bucket = 10 ** Math.floor(Math.log10(depth + 1));
          byDepth.set(bucket, [...(byDepth.get(bucket) ?? []), end - p0]);
          if (!body.next_cursor) break;
          cursor = body.next_cursor;
        }
      }
    }
    const total = performance.now() - t0;
    const pages = times.length;
    console.log(
      `state=${state ?? 'any'}: ${pages} pages of ${LIMIT}, per page p50 ${f(pct(times, 50))} ms, p99 ${f(pct(times, 99))} ms, max ${f(Math.max(...times))} ms ` +
        `(CPU per page p50 ${f(pct(cpus, 50))} ms, p99 ${f(pct(cpus, 99))} ms); ` +
        `mean ${f(total / pages)} ms = find ${f(spent.find / pages)} + store gets ${f(spent.get / pages)} + stringify ${f(serialize / pages)} + rest ${f((total - spent.find - spent.get - serialize) / pages)}; ${f(bytes / pages / 1024, 1)} KiB/page`,
    );
    console.log(
      '  by depth: ' +
        [...byDepth.entries()]
          .map(([d, xs]) => `${d}+: p50 ${f(pct(xs, 50))} p99 ${f(pct(xs, 99))} (n ${xs.length})`)
          .join('; '),
    );
  }
  await reads.close();
  if (!process.env.LIST_BENCH_DIR) fs.rmSync(dir, { recursive: true, force: true });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
