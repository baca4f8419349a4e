/**
 * The channel feed's two costs, each alone and by CPU time (so that a busy machine moves them least):
 *   write) the feed projector's CPU per product write: FEED_BENCH_OFFERS offers in the feed, then FEED_BENCH_WRITES
 *     price changes (each an upsert change), applied in units of 50 as the runner does, the first fifth as warm-up;
 *   read) the full feed's server loop: the same offers read from the store and written as TSV lines for a channel, as
 *     `query-api/feeds/offers-tsv.ts` does (median of 5);
 *   changes) the changes feed's CPU per page: FEED_BENCH_PAGES pages (default 200) of 500 of the changes those writes
 *     made, answered by the build's own `changesFeed` handler, each from a cursor of its own (pages of every offset),
 *     the body as Koa writes it; the first fifth as warm-up. A SHA-256 of the pages' text is printed: two builds that
 *     answer the same bytes print the same hash.
 * FEED_BENCH_DIST=<another build's dist> measures that build instead (its projector and read store; the read loop of
 * a build without the kept line is that build's: every document parsed, `isSearchable`, `tsvLine(feedOffer(...))`),
 * for A/B runs in one sitting: `node dist/tests/bench/feed-bench.js` and
 * `FEED_BENCH_DIST=/path/to/base/dist node dist/tests/bench/feed-bench.js`, alternating.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Doc, ReadStore } from '../../shared-schema/ports/read-store.js';
import type { RecordedEvent } from '../../shared-schema/ports/event-store.js';
import type { Projector } from '../../projections/projector.js';

const own = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const dist = path.resolve(process.env.FEED_BENCH_DIST ?? own);
const N = Number(process.env.FEED_BENCH_OFFERS ?? 20_000);
const WRITES = Number(process.env.FEED_BENCH_WRITES ?? 30_000);
const PAGES = Number(process.env.FEED_BENCH_PAGES ?? 200);
const LIMIT = 500;
const UNIT = 50;
const from = <T>(file: string): Promise<T> => import(pathToFileURL(path.join(dist, file)).href) as Promise<T>;

type Entry = unknown;
interface FeedOffer {
  tsvLine: (o: unknown) => string;
  feedOffer: (entry: Entry, base: string, channel: string) => unknown;
  tsvLink?: (base: string, channel: string) => unknown;
  tsvOf?: (template: string, link: unknown) => string;
}

const { SqliteReadStore } = await from<{ SqliteReadStore: { open(o: object): ReadStore } }>(
  'infra/adapters/sqlite/read-store.js',
);
const { feedProjector } = await from<{ feedProjector: Projector }>('projections/projectors/feed.js');
const fo = await from<FeedOffer>('shared-schema/feeds/feed-offer.js');
const { isSearchable } = await from<{ isSearchable: (o: unknown, s: unknown, now: Date) => boolean }>(
  'shared-schema/shopper/offer-facts.js',
);

/** What the changes handler touches of Koa's context. */
interface PageContext {
  query: Record<string, string>;
  type: string;
  body: unknown;
}
/** A build before the changes feed has no such module: the changes figure is left out. */
const changes = await from<{
  changesFeed: (ctx: PageContext, deps: object, channelId: string) => Promise<void>;
  encodeChangesCursor: (deps: object, after: string) => string;
}>('query-api/feeds/changes.js').catch(() => null);
const { CursorSecret } = await from<{ CursorSecret: new (s: string) => object }>('shared-schema/http/pagination.js');
/** The build's own page of the full feed (a build before the constant read pages of 2,000). */
const { FEED_PAGE = 2000 } = await from<{ FEED_PAGE?: number }>('query-api/feeds/offers-tsv.js').catch(
  (): { FEED_PAGE?: number } => ({}),
);

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'feed-bench-'));
const store = SqliteReadStore.open({ path: path.join(dir, 'read.db'), sweepIntervalMs: 0 });
const P = 'pt_bench';
const S = 'loja-bench';
const T0 = Date.parse('2026-06-01T12:00:00.000Z');
const sku = (i: number) => `sku-${String(i).padStart(7, '0')}`;
const product = (i: number, k: number, at: string) => ({
  store_id: S,
  title: `Camiseta azul ${i}`,
  description: 'Algodão penteado, macio e resistente; '.repeat(6),
  brand: 'Marca',
  category: 'Roupas > Camisetas',
  product_url: `https://shop.test/p/${i}`,
  image_urls: ['https://cdn.shop.test/1.jpg'],
  price_cents: 29_990 + k,
  original_price_cents: 39_990,
  condition: 'new',
  shipping: { type: 'fixed', cost_cents: 1234 },
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

/** CPU per page of the changes feed, over the changes the writes made, from cursors at every offset. */
async function changesPages(handler: NonNullable<typeof changes>, base: string, channel: string): Promise<string> {
  const ids = (await store.find<{ _id: string }>('feed_changes', { fields: [] })).map((d) => d._id);
  const deps = { reads: store, cursorSecret: new CursorSecret('bench-secret'), publicBaseUrl: base };
  const starts = ids.length > LIMIT ? ids.slice(0, ids.length - LIMIT) : [];
  const cursors = Array.from({ length: PAGES }, (_, p) =>
    p === 0 || starts.length === 0 ? undefined : handler.encodeChangesCursor(deps, starts[(p * 97) % starts.length]),
  );
  const page = async (cursor: string | undefined): Promise<string> => {
    const ctx: PageContext = { query: { limit: String(LIMIT), ...(cursor ? { cursor } : {}) }, type: '', body: null };
    await handler.changesFeed(ctx, deps, channel);
    return typeof ctx.body === 'string' ? ctx.body : JSON.stringify(ctx.body);
  };
  const warm = Math.floor(PAGES / 5);
  for (let p = 0; p < warm; p++) await page(cursors[p]);
  const hash = createHash('sha256');
  let bytes = 0;
  const c0 = process.cpuUsage();
  for (let p = warm; p < PAGES; p++) {
    const text = await page(cursors[p]);
    bytes += Buffer.byteLength(text);
    hash.update(text);
  }
  const n = PAGES - warm;
  return (
    `${(cpuMs(c0) / n).toFixed(3)} ms of CPU a page (${n} pages of ${LIMIT}, ${ids.length} changes, ` +
    `${Math.round(bytes / n)} bytes a page, sha256 ${hash.digest('hex').slice(0, 16)})`
  );
}

try {
  await store.ensureCollections(feedProjector.collections);
  const storeKey = `live:${P}:${S}`;
  await store.transact((tx) =>
    tx.put('feed_stores', {
      _id: storeKey,
      store_id: S,
      name: 'Loja',
      status: 'active',
      domains: ['shop.test'],
      domains_approved: ['shop.test'],
      position: 1,
    }),
  );
  const at0 = new Date(T0).toISOString();
  const seed: RecordedEvent[] = [];
  for (let i = 0; i < N; i++) {
    seed.push(event(i, 'ProductUpserted', { sku: sku(i), product: product(i, 0, at0), received_at: at0 }, at0));
    const check = { sku: sku(i), url: 'https://cdn.shop.test/1.jpg', ok: true, reasons: [], checked_at: at0 };
    seed.push(event(i, 'CoverChecked', check, at0));
  }
  await apply(seed);

  const writes: RecordedEvent[] = [];
  for (let k = 1; k <= WRITES; k++) {
    const i = k % N;
    const at = new Date(T0 + k * 10).toISOString();
    writes.push(event(i, 'ProductUpserted', { sku: sku(i), product: product(i, k, at), received_at: at }, at));
  }
  const warm = Math.floor(WRITES / 5);
  await apply(writes.slice(0, warm));
  const w0 = process.cpuUsage();
  await apply(writes.slice(warm));
  const perWrite = (1000 * cpuMs(w0)) / (WRITES - warm);

  const now = new Date(T0 + WRITES * 10 + 60_000);
  const base = 'http://127.0.0.1:8080';
  const channel = 'ch_AAAAAAAAAAAAAAAAAAAAAA';
  const kept = fo.tsvLink !== undefined && fo.tsvOf !== undefined;
  async function feed(): Promise<number> {
    let chars = 0;
    const link = kept ? fo.tsvLink!(base, channel) : null;
    const since = new Date(now.getTime() - 48 * 3_600_000).toISOString();
    const stores = new Map<string, Doc | null>();
    for (let after: string | null = null; ;) {
      const page: Doc[] = await store.find('feed_offers', {
        where: kept ? { in_feed: true, last_write_at: { gte: since } } : { in_feed: true },
        ...(after !== null ? { after: [after] } : {}),
        limit: FEED_PAGE,
        ...(kept ? { fields: ['tsv'] } : {}),
      });
      let text = '';
      for (const doc of page) {
        if (kept) text += fo.tsvOf!(doc.tsv as string, link);
        else {
          const key = doc.store_key as string;
          if (!stores.has(key)) stores.set(key, await store.get('feed_stores', key));
          const st = stores.get(key);
          if (doc.entry && st && isSearchable(doc, st, now)) text += fo.tsvLine(fo.feedOffer(doc.entry, base, channel));
        }
      }
      chars += text.length;
      if (page.length < FEED_PAGE) return chars;
      after = page[page.length - 1]._id;
    }
  }
  await feed();
  const reads: { ms: number; chars: number }[] = [];
  for (let r = 0; r < 5; r++) {
    const r0 = process.cpuUsage();
    const chars = await feed();
    reads.push({ ms: cpuMs(r0), chars });
  }
  const read = reads.map((r) => r.ms).sort((a, b) => a - b)[2];
  const pages = changes ? await changesPages(changes, base, channel) : 'no changes feed in this build';
  process.stdout.write(
    `${dist}: write) ${perWrite.toFixed(1)} µs of CPU per product write (${WRITES - warm} writes, ${N} offers in the feed); ` +
      `read) ${((1000 * read) / N).toFixed(2)} µs of CPU an offer (${N} offers, ${reads[0].chars} characters, median of 5); ` +
      `changes) ${pages}; load ${os.loadavg()[0].toFixed(1)}\n`,
  );
} finally {
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
}
