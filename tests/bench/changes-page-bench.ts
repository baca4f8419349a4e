/**
 * The changes feed's CPU per page, alone: CHANGES_BENCH_CHANGES upsert changes (default 5,000) written into a fresh
 * read.db by the build's own feed projector (as the runner applies them, in units of 50), then
 * CHANGES_BENCH_PAGES pages (default 200) of CHANGES_BENCH_LIMIT (default 500) answered by the build's own
 * `changesFeed` handler, each from a cursor of its own (walking the changes round and round), with the body written
 * as Koa writes it (`JSON.stringify` of an object body, a string as it is). The first fifth of the pages is warm-up.
 * Prints the CPU and the wall time per page, the bytes of a page and a SHA-256 of every page's text (two builds that
 * answer the same bytes print the same hash).
 *
 * CHANGES_BENCH_DIST=<another build's dist> measures that build (its projector, read store and handler), for A/B runs
 * in one sitting, alternating: `node dist/tests/bench/changes-page-bench.js` and
 * `CHANGES_BENCH_DIST=/path/to/base/dist node dist/tests/bench/changes-page-bench.js`.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { ReadStore } from '../../shared-schema/ports/read-store.js';
import type { RecordedEvent } from '../../shared-schema/ports/event-store.js';
import type { Projector } from '../../projections/projector.js';

const own = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const dist = path.resolve(process.env.CHANGES_BENCH_DIST ?? own);
const N = Number(process.env.CHANGES_BENCH_CHANGES ?? 5_000);
const PAGES = Number(process.env.CHANGES_BENCH_PAGES ?? 200);
const LIMIT = Number(process.env.CHANGES_BENCH_LIMIT ?? 500);
const UNIT = 50;
const from = <T>(file: string): Promise<T> => import(pathToFileURL(path.join(dist, file)).href) as Promise<T>;

/** What the handler touches of Koa's context. */
interface PageContext {
  query: Record<string, string>;
  type: string;
  body: unknown;
}
type Handler = (ctx: PageContext, deps: object, channelId: string) => Promise<void>;

const { SqliteReadStore } = await from<{ SqliteReadStore: { open(o: object): ReadStore } }>(
  'infra/adapters/sqlite/read-store.js',
);
const { feedProjector } = await from<{ feedProjector: Projector }>('projections/projectors/feed.js');
const { changesFeed, encodeChangesCursor } = await from<{
  changesFeed: Handler;
  encodeChangesCursor: (deps: object, after: string) => string;
}>('query-api/feeds/changes.js');
const { CursorSecret } = await from<{ CursorSecret: new (s: string) => object }>('shared-schema/http/pagination.js');

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'changes-bench-'));
const store = SqliteReadStore.open({ path: path.join(dir, 'read.db'), sweepIntervalMs: 0 });
const P = 'pt_bench';
const S = 'loja-bench';
const T0 = Date.parse('2026-06-01T12:00:00.000Z');
const sku = (i: number) => `sku-${String(i).padStart(7, '0')}`;
const product = (i: number, k: number, at: string) => ({
  store_id: S,
  title: `Camiseta azul "básica" ${i}`,
  description: 'Algodão penteado, macio e resistente; '.repeat(6),
  brand: 'Marca',
  category: 'Roupas > Camisetas',
  product_url: `https://shop.test/p/${i}`,
  image_urls: ['https://cdn.shop.test/1.jpg'],
  price_cents: 29_990 + k,
  original_price_cents: 39_990,
  installments: { count: 10, value_cents: 2_999, interest_free: true },
  condition: 'new',
  shipping: { type: 'fixed', cost_cents: 1234, delivery_days_min: 2, delivery_days_max: 5 },
  rating: { average: 4.5, count: 120 },
  available: true,
  updated_at: at,
  attributes: { cor: 'azul', tamanho: 'M' },
});
let position = 10;
const event = (i: number, type: string, data: object, at: string): RecordedEvent => ({
  stream: `product-live:${P}:${sku(i)}`,
  type,
  data,
  metadata: { recorded_at: at, actor: 'bench' },
  position: ++position,
  revision: 0,
  id: String(position),
});
async function apply(events: readonly RecordedEvent[]): Promise<void> {
  for (let j = 0; j < events.length; j += UNIT)
    await store.transact(async (tx) => {
      for (const e of events.slice(j, j + UNIT)) await feedProjector.apply(e, tx);
    });
}
const cpuMs = (since: NodeJS.CpuUsage) => {
  const c = process.cpuUsage(since);
  return (c.user + c.system) / 1000;
};

try {
  await store.ensureCollections(feedProjector.collections);
  await store.transact((tx) =>
    tx.put('feed_stores', {
      _id: `live:${P}:${S}`,
      store_id: S,
      name: 'Loja',
      status: 'active',
      domains: ['shop.test'],
      domains_approved: ['shop.test'],
      position: 1,
    }),
  );
  // Each offer enters the feed at its cover check (one upsert), then every price change is one more.
  const offers = Math.max(1, Math.floor(N / 4));
  const at0 = new Date(T0).toISOString();
  const seed: RecordedEvent[] = [];
  for (let i = 0; i < offers; i++) {
    seed.push(event(i, 'ProductUpserted', { sku: sku(i), product: product(i, 0, at0), received_at: at0 }, at0));
    const check = { sku: sku(i), url: 'https://cdn.shop.test/1.jpg', ok: true, reasons: [], checked_at: at0 };
    seed.push(event(i, 'CoverChecked', check, at0));
  }
  for (let k = 1; k <= N - offers; k++) {
    const i = k % offers;
    const at = new Date(T0 + k * 10).toISOString();
    seed.push(event(i, 'ProductUpserted', { sku: sku(i), product: product(i, k, at), received_at: at }, at));
  }
  await apply(seed);
  const ids = (await store.find<{ _id: string }>('feed_changes', { fields: [] })).map((d) => d._id);

  const deps = {
    reads: store,
    cursorSecret: new CursorSecret('bench-secret'),
    publicBaseUrl: 'http://127.0.0.1:8080',
  };
  const channel = 'ch_AAAAAAAAAAAAAAAAAAAAAA';
  // Page p starts after the change p * 97 (mod the changes that leave a full page after it): pages of every offset.
  const starts = ids.length > LIMIT ? ids.slice(0, ids.length - LIMIT) : [];
  const cursors = Array.from({ length: PAGES }, (_, p) =>
    p === 0 || starts.length === 0 ? undefined : encodeChangesCursor(deps, starts[(p * 97) % starts.length]),
  );
  const page = async (cursor: string | undefined): Promise<string> => {
    const ctx: PageContext = { query: { limit: String(LIMIT), ...(cursor ? { cursor } : {}) }, type: '', body: null };
    await changesFeed(ctx, deps, channel);
    return typeof ctx.body === 'string' ? ctx.body : JSON.stringify(ctx.body);
  };
  const warm = Math.floor(PAGES / 5);
  for (let p = 0; p < warm; p++) await page(cursors[p]);
  const hash = createHash('sha256');
  let bytes = 0;
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  for (let p = warm; p < PAGES; p++) {
    const text = await page(cursors[p]);
    bytes += Buffer.byteLength(text);
    hash.update(text);
  }
  const cpu = cpuMs(c0) / (PAGES - warm);
  const wall = (performance.now() - t0) / (PAGES - warm);
  process.stdout.write(
    `${dist}: ${cpu.toFixed(3)} ms of CPU a page, ${wall.toFixed(3)} ms wall (${PAGES - warm} pages of ${LIMIT}, ` +
      `${ids.length} changes, ${Math.round(bytes / (PAGES - warm))} bytes a page, sha256 ${hash.digest('hex').slice(0, 16)}); ` +
      `load ${os.loadavg()[0].toFixed(1)}\n`,
  );
} finally {
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
}
