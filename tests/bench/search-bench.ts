/**
 * The shopper search under load (not part of make test): `make bench-search` (`SEARCH_OFFERS`, default
 * 1 000 000; `SEARCH_SECONDS`, default 60; `SEARCH_RATE`, default 50/s; `SEARCH_WRITERS`, default 30 partners).
 *
 * 1. Seeds the offers read model of a fresh DATA_DIR with SEARCH_OFFERS searchable offers (1 000 stores of 300
 *    partners, titles from a small vocabulary so that common words match thousands of offers, a third of the offers
 *    sharing a gtin with others) straight into `read.db` — the documents the offers projector writes, and the same
 *    offers in the channel feed's model (the documents the feed projector writes, by its own judgment, each with its
 *    line of the full feed, and the `upsert` change that brought it in), without the 2 × N events behind them,
 *    which would take hours to send through the API here.
 * 2. Starts the service on it (`node dist/infra/main.js`, embedded default, a process of its own).
 * 3. For SEARCH_WARMUP (default 5) + SEARCH_SECONDS, open loop: SEARCH_RATE searches a second to `/api/search` (one
 *    to three words, the last one a prefix at times; from 100 loopback addresses, under the per-address brake; sent and
 *    read by a thread of their own, search-shoppers.ts, so that the writers' load on this process is not counted), while
 *    SEARCH_WRITERS partners send PUT /v1/products at 10 a second each (their rate brake), new SKUs and updates
 *    whose covers the service checks against loopback HTTPS image servers (SEARCH_COVERS=off: no cover checks),
 *    projected into the same read model. A search's latency runs from its scheduled start to its answer's end (no
 *    coordinated omission). The figures count the SEARCH_SECONDS after the warm-up (a steady state: the writers
 *    writing, every connection open); the warm-up's own p99 and max are reported apart.
 *
 * `SEARCH_DATA_DIR` (optional): a directory kept between runs holding a seeded `read.db` for SEARCH_OFFERS (seeded
 * there on the first run). Each run then copies it into a fresh DATA_DIR instead of seeding, so A/B runs of two
 * builds cost minutes less; the workload is the same (the copy is the same documents, the writers start from an
 * empty event store). `SEARCH_MAIN` (optional): the service's entry to run (default this build's dist/infra/main.js),
 * e.g. /work/base/dist/infra/main.js for an A/B against another build on the same seeded data; `SEARCH_NODE_OPTIONS`:
 * node options for the service only (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`). `SEARCH_MONITOR=1`: the service
 * also records its event loop's late turns and its collections (service-monitor.ts: a 5 ms timer, a little work of
 * its own), and the figures add them for the measured seconds, with how many of the slow searches overlapped one.
 *
 * `SEARCH_FEED_DOWNLOADS=1`: the operator makes a channel (POST /admin/v1/channels) and, from the middle of the
 * measured seconds to their end, the channel downloads the full feed (GET /feeds/offers.tsv, plain, on a
 * connection of its own), one download after another. The figures add the search p50/p99/max of the first half (no
 * download) and of the second (downloading) — the same run, the same writers — the p99 of the searches due while a
 * download was streaming, and the downloads (count, offers each, offers/s). A build without feeds answers 404.
 *
 * `SEARCH_FEED_CHANGES=1`: for the measured seconds a channel follows `GET /feeds/changes?limit=500` while the partners
 * write (feed-changes-walker.ts, a thread of its own): from the first change (the seed's backlog of one `upsert` per
 * offer, read in full pages, then the writers' changes), following each page's cursor, the next page at once after a
 * full one, after a shorter one a poll when about 500 more should have come at the rate it saw
 * (at least SEARCH_FEED_CHANGES_POLL_MS, default 1000, later; at most 15 s). The figures add the full pages' (500
 * changes) p50/p99/max and count, every page's p50/p99, the changes followed and their rate, and the feed projection's
 * lag (the writers' offers enter the feed once their covers are checked: with SEARCH_COVERS=off none does).
 *
 * Prints one JSON line with the figures and writes them to .bench/bench-search.json and .bench/bench-search.md
 * (tests/support/bench-results.ts). Loopback only.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { constants } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { SqliteReadStore } from '../../infra/adapters/sqlite/read-store.js';
import { ALL_COLLECTIONS } from '../../infra/wiring/service.js';
import { OFFER_STORES, OFFERS } from '../../shared-schema/read-models/offers.js';
import { offerProduct, otherText, type OfferDoc, type OfferStoreDoc } from '../../shared-schema/shopper/offer-facts.js';
import { scopedId } from '../../shared-schema/read-models/scoped-id.js';
import {
  FEED_CHANGES,
  FEED_OFFERS,
  FEED_STORES,
  feedChangeKey,
  type FeedOfferDoc,
} from '../../shared-schema/read-models/feed.js';
import { feedChangeDoc, judgeOffer } from '../../projections/projectors/feed.js';
import { send } from '../support/keep-alive.js';
import { startImageServers } from '../support/https-image-server.js';
import { coverTestEnv } from '../support/cover-env.js';
import { writeBenchResults } from '../support/bench-results.js';
import { nextCnpj } from '../support/service.js';
import type { ShopperPlan, ShopperResult } from './search-shoppers.js';
import type { ChangesPlan, ChangesResult } from './feed-changes-walker.js';
import type { MonitorRecord } from './service-monitor.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const env = (name: string, fallback: number) => (process.env[name] ? Number(process.env[name]) : fallback);
const OFFERS_N = env('SEARCH_OFFERS', 1_000_000);
const SECONDS = env('SEARCH_SECONDS', 60);
const WARMUP = env('SEARCH_WARMUP', 5);
const RATE = env('SEARCH_RATE', 50);
const WRITERS = env('SEARCH_WRITERS', 30);
const PORT = env('SEARCH_PORT', 18480);
const ADMIN_PORT = PORT + 1;
const ADMIN_TOKEN = 'bench-admin-token-0123456789abcdef';
const MONITOR = process.env.SEARCH_MONITOR === '1';
/** SEARCH_FEED_DOWNLOADS=1: a channel downloads the full feed, one download after another, in the second half. */
const FEED_DOWNLOADS = process.env.SEARCH_FEED_DOWNLOADS === '1';
/** SEARCH_FEED_CHANGES=1: a channel follows the changes feed for the measured seconds. */
const FOLLOW_CHANGES = process.env.SEARCH_FEED_CHANGES === '1';
const CHANGES_LIMIT = 500;
const CHANGES_POLL_MS = env('SEARCH_FEED_CHANGES_POLL_MS', 1000);
/** A search slower than this counts as slow in the monitor's figures (the target's p99). */
const SLOW_MS = 50;

const NOUNS = (
  'camiseta calca tenis bota sandalia jaqueta vestido saia bermuda meia bone mochila bolsa carteira relogio oculos ' +
  'chaleira panela frigideira liquidificador batedeira cafeteira torradeira sanduicheira fritadeira micro-ondas geladeira fogao ' +
  'ventilador aquecedor umidificador aspirador ferro secador chapinha barbeador escova notebook celular tablet monitor teclado ' +
  'mouse fone caixa carregador cabo roteador impressora cadeira mesa sofa colchao travesseiro lencol toalha tapete cortina ' +
  'luminaria abajur espelho quadro vaso bicicleta patinete skate bola raquete halter esteira'
).split(' ');
const ADJECTIVES =
  'azul preto branco vermelho verde amarelo rosa cinza bege marrom grande pequeno medio leve compacto portatil eletrico digital infantil adulto masculino feminino unissex premium basico classico moderno retro esportivo casual'.split(
    ' ',
  );
const MATERIALS =
  'inox aluminio algodao couro plastico madeira vidro ceramica silicone bambu linho poliester nylon metal'.split(' ');
const BRANDS = Array.from(
  { length: 200 },
  (_, i) => `Marca${String.fromCharCode(65 + (i % 26))}${String.fromCharCode(97 + Math.floor(i / 26))}`,
);

/** A small deterministic generator (the same data on every run). */
export function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];

function gtinOf(n: number): string {
  const body = `789${String(n).padStart(9, '0')}`;
  const sum = [...body].reduce((acc, d, i) => acc + Number(d) * (i % 2 === 0 ? 1 : 3), 0);
  return `${body}${(10 - (sum % 10)) % 10}`;
}

/** The bench's searches (one to three words, the last a 4-letter prefix at times), from the generator `r`. */
export function benchQueries(r: () => number): string[] {
  return Array.from({ length: 997 }, () => {
    const kind = r();
    const noun = pick(r, NOUNS).replace(/-.*/, '');
    if (kind < 0.4) return noun;
    if (kind < 0.8) return `${noun} ${pick(r, ADJECTIVES)}`;
    return `${noun} ${pick(r, ADJECTIVES)} ${pick(r, MATERIALS).slice(0, 4)}`;
  });
}

export async function seed(dataDir: string, now: Date): Promise<{ ms: number; bytes: number }> {
  const started = Date.now();
  const store = SqliteReadStore.open({ path: path.join(dataDir, 'read.db'), sweepIntervalMs: 0 });
  await store.ensureCollections(ALL_COLLECTIONS());
  const r = rng(17);
  const PARTNERS = 300;
  const STORES = 1000;
  const at = now.toISOString();
  const stores: OfferStoreDoc[] = [];
  await store.transact(async (tx) => {
    for (let s = 0; s < STORES; s++) {
      const partnerId = `pt_bench${s % PARTNERS}`;
      const doc: OfferStoreDoc = {
        _id: scopedId({ env: 'live', partnerId }, `loja-${s}`),
        store_id: `loja-${s}`,
        name: `Loja ${s}`,
        status: 'active',
        domains: [`loja${s}.example`],
        domains_approved: [`loja${s}.example`],
        position: 0,
      };
      await tx.put(OFFER_STORES, doc);
      // The channel feed's model holds the same stores and offers (what its projector would write for them).
      await tx.put(FEED_STORES, doc);
      stores.push(doc);
    }
  });
  const UNIT = 5000;
  // The seeded changes' ranks in one event: 6 digits (feedChangeKey), as many as a million offers.
  if (OFFERS_N > 1_000_000) throw new Error('the seed ranks at most 1 000 000 changes (SEARCH_OFFERS)');
  let rank = 0;
  for (let from = 0; from < OFFERS_N; from += UNIT) {
    await store.transact(async (tx) => {
      for (let n = from; n < Math.min(OFFERS_N, from + UNIT); n++) {
        const s = Math.floor(r() * STORES);
        const partnerId = `pt_bench${s % PARTNERS}`;
        const noun = pick(r, NOUNS);
        const brand = pick(r, BRANDS);
        // A third of the offers share a gtin (a product sold by a few stores), the others stand alone.
        const gtin = r() < 1 / 3 ? gtinOf(Math.floor(r() * (OFFERS_N / 9))) : undefined;
        const product = offerProduct({
          store_id: `loja-${s}`,
          title: `${noun} ${pick(r, ADJECTIVES)} ${pick(r, MATERIALS)} ${brand} ${Math.floor(r() * 900) + 100}`,
          brand,
          category: `Casa > ${noun}`,
          ...(gtin ? { gtin } : {}),
          product_url: `https://loja${s}.example/p/${n}`,
          image_urls: [`https://loja${s}.example/i/${n}.jpg`],
          price_cents: 1000 + Math.floor(r() * 200_000),
          available: true,
          ...(r() < 0.5 ? { shipping: { type: 'fixed', cost_cents: 990 } } : {}),
          ...(r() < 0.4 ? { rating: { average: Math.round(r() * 50) / 10, count: 1 + Math.floor(r() * 500) } } : {}),
          updated_at: at,
        });
        const sku = `sku-${n}`;
        const doc: OfferDoc = {
          _id: scopedId({ env: 'live', partnerId }, sku),
          partner_id: partnerId,
          sku,
          store_id: product.store_id,
          store_key: scopedId({ env: 'live', partnerId }, product.store_id),
          gtin: product.gtin ?? null,
          product,
          removed: false,
          cover: { url: product.image_urls[0], ok: true, reasons: [], checked_at: at },
          last_write_at: at,
          text_title: product.title,
          text_other: otherText(product),
          position: 0,
        };
        await tx.put(OFFERS, doc);
        // The feed projector's document for this offer's first write (its judgment, its entry's id and hash, its
        // line in the `tsv` column the full feed reads) and the change it makes (the offer's `upsert`, with its JSON
        // in the `json` column the changes feed reads), by the projector's own functions. The changes are ranked as
        // the changes of one event at log position 0 (before any the service writes from position 1): a backlog a
        // channel following the changes from the start reads in full pages while the partners write.
        const first: FeedOfferDoc = { ...doc, description: null, in_feed: false, feed_id: null, entry_hash: null };
        const judged = judgeOffer(first, stores[s], now);
        if (!judged.doc.in_feed) throw new Error(`seeded offer ${sku} is not in the feed`);
        await tx.put(FEED_OFFERS, { ...judged.doc, position: 0 });
        for (const change of judged.changes) {
          await tx.put(FEED_CHANGES, feedChangeDoc(feedChangeKey(0, rank++), change, at));
        }
      }
    });
  }
  await store.close();
  return { ms: Date.now() - started, bytes: fs.statSync(path.join(dataDir, 'read.db')).size };
}

/**
 * A `read.db` seeded with OFFERS_N offers in `dataDir`: copied from SEARCH_DATA_DIR when it holds one for this count
 * (seeded there first when not), else seeded in place. The seed time is kept with the template: offers seeded more
 * than a day ago would near the 48-hour rule, so such a template is seeded again; so is one of an older seed
 * (its marker's `seed` below SEED_VERSION: before the feed's model was seeded, or its documents without the line).
 */
/**
 * The seed's version, kept in the template's marker: 4 seeds the feed's documents by the feed projector's own
 * judgment (with their `tsv` line) and its changes with their JSON text, 3 the changes without it, 2 the documents
 * without the changes, 1 (`feed: true`) without the line, none before the feed's model was seeded.
 */
const SEED_VERSION = 4;

async function seeded(dataDir: string): Promise<{ ms: number; bytes: number; reused: boolean }> {
  const template = process.env.SEARCH_DATA_DIR;
  if (!template) return { ...(await seed(dataDir, new Date())), reused: false };
  const marker = path.join(template, 'seeded.json');
  const old = fs.existsSync(marker)
    ? (JSON.parse(fs.readFileSync(marker, 'utf8')) as {
        offers: number;
        at: string;
        ms: number;
        bytes: number;
        seed?: number;
      })
    : null;
  let figures: { ms: number; bytes: number };
  let reused = true;
  if (old && old.offers === OFFERS_N && old.seed === SEED_VERSION && Date.now() - Date.parse(old.at) < 24 * 3600_000)
    figures = old;
  else {
    fs.rmSync(template, { recursive: true, force: true });
    fs.mkdirSync(template, { recursive: true });
    const at = new Date();
    figures = await seed(template, at);
    fs.writeFileSync(
      marker,
      JSON.stringify({ offers: OFFERS_N, at: at.toISOString(), seed: SEED_VERSION, ...figures }),
    );
    reused = false;
  }
  fs.copyFileSync(path.join(template, 'read.db'), path.join(dataDir, 'read.db'));
  return { ...figures, reused };
}

/** The last of the service's stderr (warnings and errors), printed when a feed download failed. */
let serviceLog = '';

function startServiceProcess(dataDir: string, coverEnv: Record<string, string>): Promise<ChildProcess> {
  // SEARCH_NODE_OPTIONS: node options for the service only (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`).
  const nodeOptions = (process.env.SEARCH_NODE_OPTIONS ?? '').split(' ').filter((o) => o.length > 0);
  if (MONITOR) nodeOptions.push('--import', fileURLToPath(new URL('./service-monitor.js', import.meta.url)));
  const main = process.env.SEARCH_MAIN ?? path.join(ROOT, 'dist/infra/main.js');
  const child = spawn(process.execPath, [...nodeOptions, main], {
    env: {
      ...process.env,
      PORT: String(PORT),
      ADMIN_PORT: String(ADMIN_PORT),
      DATA_DIR: dataDir,
      ADMIN_TOKEN,
      COVER_CHECK: 'off',
      LOG_LEVEL: 'warn',
      // Every search is served and timed: the bound on searches in flight would answer some of a stall's searches
      // 429 at once, which the latencies would count as fast (SEARCHES_IN_FLIGHT set by the caller: kept).
      SEARCHES_IN_FLIGHT: process.env.SEARCHES_IN_FLIGHT ?? '10000',
      ...(MONITOR ? { SERVICE_MONITOR_FILE: monitorFile(dataDir) } : {}),
      ...coverEnv,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let err = '';
    child.stderr.on('data', (c: Buffer) => {
      err += c.toString();
      serviceLog = (serviceLog + c.toString()).slice(-4000);
      if (err.includes('ready:')) resolve(child);
    });
    child.once('exit', (code) => reject(new Error(`service exited ${code}: ${err}`)));
  });
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
async function call(
  method: string,
  url: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; json: unknown }> {
  const r = await send(agent, new URL(url), method, body === undefined ? undefined : JSON.stringify(body), headers);
  return { status: r.status, json: r.text ? (JSON.parse(r.text) as unknown) : null };
}

/** Stops the service (SIGTERM: it ends gracefully) and waits for it to exit. */
async function stopService(service: ChildProcess): Promise<void> {
  if (service.exitCode !== null || service.signalCode !== null) return;
  const exited = new Promise((res) => service.once('exit', res));
  service.kill('SIGTERM');
  await exited;
}

/** CPU seconds the process has used, all its threads (Linux /proc; NaN elsewhere). */
function cpuSeconds(pid: number | undefined): number {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime + stime, in ticks of 1/100 s
  } catch {
    return NaN;
  }
}

/** The process's resident memory in MB at its peak and now (Linux /proc; NaN elsewhere). */
function residentMb(pid: number | undefined): { peak: number; now: number } {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
    return { peak: Math.round(kb('VmHWM') / 1024), now: Math.round(kb('VmRSS') / 1024) };
  } catch {
    return { peak: NaN, now: NaN };
  }
}

/** Per thread of the process (by tid): its name and its seconds on a CPU and runnable but waiting for one. */
type ThreadTimes = Map<string, { name: string; run: number; wait: number }>;

/**
 * Each thread's time on a CPU and on the run queue (Linux `/proc/<pid>/task/<tid>/schedstat`, in ns; empty
 * elsewhere). The main thread is the event loop; the service's own threads name themselves `pc-…`
 * (infra/adapters/thread-name.ts); V8's and libuv's helpers keep the process's name.
 */
function threadTimes(pid: number | undefined): ThreadTimes {
  const times: ThreadTimes = new Map();
  try {
    for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
      try {
        const comm = fs.readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
        const [run, wait] = fs.readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ').map(Number);
        const name = tid === String(pid) ? 'event loop' : comm.startsWith('pc-') ? comm : 'other (V8, libuv)';
        times.set(tid, { name, run: run / 1e9, wait: wait / 1e9 });
      } catch {
        /* the thread ended meanwhile */
      }
    }
  } catch {
    /* not Linux */
  }
  return times;
}

/** Seconds on a CPU and waiting for one between two readings, summed per thread name: `{ name: [run, wait] }`. */
function threadSeconds(before: ThreadTimes, after: ThreadTimes): Record<string, [number, number]> {
  const sums: Record<string, [number, number]> = {};
  for (const [tid, t] of after) {
    const b = before.get(tid) ?? { run: 0, wait: 0 };
    const sum = (sums[t.name] ??= [0, 0]);
    sum[0] += t.run - b.run;
    sum[1] += t.wait - b.wait;
  }
  for (const sum of Object.values(sums)) sum.forEach((x, i) => (sum[i] = Math.round(x * 10) / 10));
  return sums;
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
const round1 = (x: number) => Math.round(x * 10) / 10;

/** One full-feed download: its start and end in ms from the end of the warm-up, its status, bytes and lines. */
type FeedDownload = { from: number; to: number; status: number | string; bytes: number; lines: number };

/** GET /feeds/offers.tsv as a channel, plain, on a connection of its own; the body counted (bytes, lines), not kept. */
function downloadFeed(url: string, token: string): Promise<Pick<FeedDownload, 'status' | 'bytes' | 'lines'>> {
  if (new URL(url).hostname !== '127.0.0.1') throw new Error(`not loopback: ${url}`);
  return new Promise((resolve) => {
    const req = http.get(url, { agent: false, headers: { Authorization: `Bearer ${token}` } }, (res) => {
      let bytes = 0;
      let lines = 0;
      res.on('data', (c: Buffer) => {
        bytes += c.length;
        for (let i = c.indexOf(10); i !== -1; i = c.indexOf(10, i + 1)) lines++;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes, lines }));
      res.on('close', () => resolve({ status: res.complete ? (res.statusCode ?? 0) : 'cut', bytes, lines }));
      // Cut mid-stream: counted as such, with the bytes that came (the run goes on).
      res.on('error', (e: NodeJS.ErrnoException) => resolve({ status: `cut ${e.code ?? e.message}`, bytes, lines }));
    });
    req.on('error', (e: NodeJS.ErrnoException) =>
      resolve({ status: `error ${e.code ?? e.message}`, bytes: 0, lines: 0 }),
    );
  });
}

/**
 * The measured searches split by the feed downloads (SEARCH_FEED_DOWNLOADS=1): the first half of the measured
 * seconds (no download) against the second (a channel downloading the full feed, one download after another), and,
 * strictest, the searches due while a download was streaming. `trace`: [due ms from the end of the warm-up, latency].
 */
function feedFigures(trace: [number, number][], downloads: FeedDownload[], seconds: number): Record<string, unknown> {
  const half = seconds * 500;
  const sorted = (xs: [number, number][]) => xs.map(([, l]) => l).sort((a, b) => a - b);
  const quiet = sorted(trace.filter(([due]) => due < half));
  const loaded = sorted(trace.filter(([due]) => due >= half));
  const during = sorted(trace.filter(([due]) => downloads.some((d) => d.from <= due && due < d.to)));
  const whole = downloads.filter((d) => d.status === 200);
  const busy = downloads.reduce(
    (ms, d) => ms + Math.max(0, Math.min(d.to, seconds * 1000) - Math.max(d.from, half)),
    0,
  );
  const statuses: Record<string, number> = {};
  for (const d of downloads) statuses[d.status] = (statuses[d.status] ?? 0) + 1;
  const rates = whole.map((d) => ((d.lines - 1) / (d.to - d.from)) * 1000).sort((a, b) => a - b);
  return {
    feed_downloads: downloads.length,
    feed_statuses: statuses,
    feed_offers_per_download: whole.length ? whole[whole.length - 1].lines - 1 : NaN,
    feed_mb_per_download: whole.length ? round1(whole[whole.length - 1].bytes / 1e6) : NaN,
    feed_seconds_per_download: whole.map((d) => round1((d.to - d.from) / 1000)),
    feed_offers_per_s_p50: Math.round(percentile(rates, 50)),
    // How much of the second half a download was streaming (1: back to back).
    feed_busy_share_of_second_half: Math.round((busy / half) * 100) / 100,
    searches_without_feed: quiet.length,
    p50_without_feed_ms: round1(percentile(quiet, 50)),
    p99_without_feed_ms: round1(percentile(quiet, 99)),
    max_without_feed_ms: round1(quiet[quiet.length - 1] ?? NaN),
    searches_with_feed: loaded.length,
    p50_with_feed_ms: round1(percentile(loaded, 50)),
    p99_with_feed_ms: round1(percentile(loaded, 99)),
    max_with_feed_ms: round1(loaded[loaded.length - 1] ?? NaN),
    searches_during_a_download: during.length,
    p99_during_a_download_ms: round1(percentile(during, 99)),
  };
}

/**
 * The changes walked (SEARCH_FEED_CHANGES=1): the full pages' times apart (the target's page of 500), every page's
 * (the polls that found fewer), the changes followed and the statuses.
 */
function changesFigures(result: ChangesResult): Record<string, unknown> {
  const times = (pages: ChangesResult['pages']) => pages.map(([, ms]) => ms).sort((a, b) => a - b);
  const full = result.pages.filter(([, , n]) => n === CHANGES_LIMIT);
  const fullMs = times(full);
  const allMs = times(result.pages);
  return {
    changes_pages: result.pages.length,
    changes_statuses: result.statuses,
    changes_followed: result.pages.reduce((sum, [, , n]) => sum + n, 0),
    changes_per_s: round1(result.pages.reduce((sum, [, , n]) => sum + n, 0) / SECONDS),
    changes_full_pages: full.length,
    changes_full_p50_ms: round1(percentile(fullMs, 50)),
    changes_full_p99_ms: round1(percentile(fullMs, 99)),
    changes_full_max_ms: round1(fullMs[fullMs.length - 1] ?? NaN),
    changes_full_kb: full.length ? Math.round(full.reduce((sum, [, , , b]) => sum + b, 0) / full.length / 1000) : NaN,
    changes_all_p50_ms: round1(percentile(allMs, 50)),
    changes_all_p99_ms: round1(percentile(allMs, 99)),
  };
}

const monitorFile = (dataDir: string) => path.join(dataDir, 'service-monitor.json');

/**
 * The monitor's figures for the measured seconds (from `start`, epoch ms): the event loop's late turns and
 * collections, and how many searches (each [due from `start`, latency]) overlapped a late turn or a collection of
 * 8 ms or more — the slow ones and all of them, so that a pause every search meets is not taken for a cause.
 */
function monitorFigures(record: MonitorRecord, start: number, trace: [number, number][]): Record<string, unknown> {
  const end = start + SECONDS * 1000;
  const inWindow = ([at]: [number, ...number[]]) => at >= start && at < end;
  const gaps = record.gaps.filter(inWindow);
  const gcs = record.gcs.filter(inWindow);
  const byKind = (kind: number) =>
    gcs
      .filter((g) => g[2] === kind)
      .map((g) => g[1])
      .sort((a, b) => a - b);
  const minor = byKind(constants.NODE_PERFORMANCE_GC_MINOR);
  const major = byKind(constants.NODE_PERFORMANCE_GC_MAJOR);
  const pauses = [...gaps, ...gcs.filter((g) => g[1] >= 8)];
  const overlaps = ([due, latency]: [number, number]) =>
    pauses.some(([at, ms]) => at < start + due + latency && at + ms > start + due);
  const slow = trace.filter(([, latency]) => latency > SLOW_MS);
  return {
    loop_late_turns_over_25ms: gaps.length,
    loop_late_turn_max_ms: round1(Math.max(0, ...gaps.map((g) => g[1]))),
    loop_minor_gcs: minor.length,
    loop_minor_gc_p50_ms: round1(percentile(minor, 50)),
    loop_minor_gc_max_ms: round1(minor[minor.length - 1] ?? NaN),
    loop_major_gcs: major.length,
    loop_major_gc_max_ms: round1(major[major.length - 1] ?? NaN),
    searches_over_50ms: slow.length,
    of_them_overlapping_a_pause: slow.filter(overlaps).length,
    all_searches_overlapping_a_pause: trace.filter(overlaps).length,
  };
}

async function main(): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-search-bench-'));
  let service: ChildProcess | undefined;
  // The writers' covers are checked (SEARCH_COVERS=off: not), against loopback HTTPS image servers as in the scale
  // bench: every new SKU's cover is fetched and judged while the searches run, and becomes searchable once accepted.
  const covers = process.env.SEARCH_COVERS === 'off' ? null : await startImageServers();
  const coverSetup = covers ? coverTestEnv(covers) : null;
  try {
    const now = new Date();
    const seededDb = await seeded(dataDir);
    // The re-check scan at the service's default period (the tests' 100 ms would scan the catalog ten times a second).
    const { COVER_RECHECK_SCAN_MS: _scan, ...coverEnv } = coverSetup?.env ?? {};
    service = await startServiceProcess(
      dataDir,
      coverSetup ? { ...coverEnv, NODE_EXTRA_CA_CERTS: coverSetup.env.COVER_FETCH_CA_FILE } : {},
    );
    const imageBase = covers ? `https://cdn.shop.test:${covers.main.port}` : null;
    const api = `http://127.0.0.1:${PORT}`;
    const admin = `http://127.0.0.1:${ADMIN_PORT}/admin/v1`;
    const auth = { Authorization: `Bearer ${ADMIN_TOKEN}` };

    // The writing partners: each a live key and an approved store.
    const writers: { key: string; n: number }[] = [];
    for (let w = 0; w < WRITERS; w++) {
      const p = (await call('POST', `${admin}/partners`, { name: `Escritor ${w}`, partner_type: 'store' }, auth))
        .json as { partner_id: string };
      const k = (await call('POST', `${admin}/partners/${p.partner_id}/keys`, { environment: 'live' }, auth)).json as {
        api_key: string;
      };
      const storeBody = {
        name: `Escritor ${w}`,
        cnpj: nextCnpj(),
        website_url: `https://w${w}.example`,
        domains: [`w${w}.example`],
        ...(imageBase ? { image_hosts: ['cdn.shop.test'] } : {}),
      };
      const reg = await call('PUT', `${api}/v1/stores/loja-w`, storeBody, { Authorization: `Bearer ${k.api_key}` });
      if (reg.status !== 200) throw new Error(`store: ${reg.status} ${JSON.stringify(reg.json)}`);
      await call('POST', `${admin}/partners/${p.partner_id}/live/stores/loja-w/approve`, {}, auth);
      writers.push({ key: k.api_key, n: 0 });
    }
    // SEARCH_FEED_DOWNLOADS=1: a channel, made by the operator as FEEDS.md says, to download the full feed.
    let channelToken: string | null = null;
    if (FEED_DOWNLOADS) {
      const made = await call('POST', `${admin}/channels`, { name: 'Comparador (bench)' }, auth);
      if (made.status !== 201) throw new Error(`channel: ${made.status} ${JSON.stringify(made.json)}`);
      channelToken = (made.json as { token: string }).token;
    }

    const r = rng(99);
    const queries = benchQueries(r);
    // Unloaded first: the same queries one after the other, nobody writing (what one search costs here).
    // Four searches first, not counted (a service opens what it searches with its first searches).
    for (let i = 0; i < 4; i++) await send(agent, new URL(`${api}/api/search?q=warm${i}`), 'GET');
    const alone: number[] = [];
    const aloneCpu0 = cpuSeconds(service.pid);
    for (let i = 0; i < 100; i++) {
      const started = performance.now();
      const reply = await send(agent, new URL(`${api}/api/search?q=${encodeURIComponent(queries[i])}`), 'GET');
      if (reply.status !== 200) throw new Error(`search: ${reply.status} ${reply.text}`);
      alone.push(performance.now() - started);
    }
    const aloneCpu = cpuSeconds(service.pid) - aloneCpu0;
    alone.sort((a, b) => a - b);

    const writeStatuses: Record<string, number> = {};
    // Writes on the bench's own event loop, one timer at a time; the searches from a thread of their own
    // (search-shoppers.ts), so that a search is sent and read on time whatever the writers and image servers do here.
    type Job = { due: number; run: (due: number) => Promise<void> };
    const jobs: Job[] = [];
    const writesPerWriter = (WARMUP + SECONDS) * 10;
    // The writes: 10 a second per partner (its brake is 600 a minute), half new SKUs, half updates.
    writers.forEach((w, wi) => {
      for (let i = 0; i < writesPerWriter; i++) {
        jobs.push({
          due: i * 100 + (wi * 100) / WRITERS,
          run: async () => {
            const sku = `w-${i % 2 === 0 ? i : Math.floor(i / 4)}`;
            const body = {
              store_id: 'loja-w',
              title: `${pick(r, NOUNS)} ${pick(r, ADJECTIVES)} escritor ${wi}`,
              product_url: `https://w${wi}.example/p/${sku}`,
              // One cover in ten too small (rejected: never searchable), the others accepted.
              image_urls: [
                imageBase
                  ? `${imageBase}/img/${i % 20 === 0 ? '500x500' : '800x600'}.jpg`
                  : `https://w${wi}.example/i/${sku}.jpg`,
              ],
              price_cents: 1000 + i,
              available: true,
              updated_at: new Date(now.getTime() + i).toISOString(),
            };
            // A connection the service reset counts as an answer `reset`, not as the end of the run.
            const status = await send(agent, new URL(`${api}/v1/products/${sku}`), 'PUT', JSON.stringify(body), {
              Authorization: `Bearer ${w.key}`,
            }).then(
              (reply) => String(reply.status),
              (e: unknown) => `error ${(e as NodeJS.ErrnoException).code ?? String(e)}`,
            );
            if (i >= WARMUP * 10) writeStatuses[status] = (writeStatuses[status] ?? 0) + 1;
            w.n++;
          },
        });
      }
    });
    jobs.sort((a, b) => a.due - b.due);
    const inFlight: Promise<void>[] = [];
    const start = performance.now() + 200;
    const t0 = start + WARMUP * 1000; // the measured seconds start here
    const plan: ShopperPlan = {
      api,
      queries,
      rate: RATE,
      warmupSeconds: WARMUP,
      seconds: SECONDS,
      startAt: performance.timeOrigin + start,
      trace: process.env.SEARCH_TRACE !== undefined || MONITOR || FEED_DOWNLOADS,
    };
    const shoppers = new Worker(new URL('./search-shoppers.js', import.meta.url), { workerData: plan });
    const shopped = new Promise<ShopperResult>((resolve, reject) => {
      shoppers.once('message', resolve);
      shoppers.once('error', reject);
      shoppers.once('exit', (code) => reject(new Error(`the shoppers' thread exited (${code})`)));
    });
    // SEARCH_FEED_CHANGES=1: a channel following the changes for the measured seconds, from a thread of its own.
    const followed = FOLLOW_CHANGES
      ? new Promise<ChangesResult>((resolve, reject) => {
          const changesPlan: ChangesPlan = {
            api,
            admin,
            adminToken: ADMIN_TOKEN,
            startAt: performance.timeOrigin + t0,
            endAt: performance.timeOrigin + t0 + SECONDS * 1000,
            limit: CHANGES_LIMIT,
            pollMs: CHANGES_POLL_MS,
          };
          const walker = new Worker(new URL('./feed-changes-walker.js', import.meta.url), { workerData: changesPlan });
          walker.once('message', resolve);
          walker.once('error', reject);
          walker.once('exit', (code) => reject(new Error(`the changes walker's thread exited (${code})`)));
        })
      : null;
    let cpu0 = process.cpuUsage();
    let serviceCpu0 = cpuSeconds(service.pid);
    let threads0 = threadTimes(service.pid);
    let measuring = false;
    // The offers projection keeping up: its lag (events of its categories after its checkpoint) sampled twice a
    // second through the admin API while the load runs, then how long after the last write it is caught up.
    const lagOf = async (name: string): Promise<number> => {
      const r = (await call('GET', `${admin}/projections`, undefined, auth)).json as {
        projections: { name: string; lag_events: number }[];
      };
      return r.projections.find((p) => p.name === name)?.lag_events ?? NaN;
    };
    const offersLag = () => lagOf('offers');
    const lagSamples: number[] = [];
    // SEARCH_FEED_CHANGES=1: the feed projection's lag too (a page is short when the changes are not written yet).
    const feedLagSamples: number[] = [];
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        if (measuring) lagSamples.push(await offersLag());
        if (measuring && FOLLOW_CHANGES) feedLagSamples.push(await lagOf('feed'));
        await new Promise((res) => setTimeout(res, 500));
      }
    })();
    // The channel's downloads: from the middle of the measured seconds to their end, one after another (the last
    // one is let finish; the searches after the measured seconds are not counted).
    const downloads: FeedDownload[] = [];
    const downloader = channelToken
      ? (async (token: string) => {
          await new Promise((res) => setTimeout(res, Math.max(0, t0 + SECONDS * 500 - performance.now())));
          while (performance.now() < t0 + SECONDS * 1000) {
            const from = performance.now() - t0;
            const got = await downloadFeed(`${api}/feeds/offers.tsv`, token);
            downloads.push({ from, to: performance.now() - t0, ...got });
          }
        })(channelToken)
      : null;
    // One timer at a time: each turn starts every job whose due time has come.
    await new Promise<void>((done) => {
      let next = 0;
      const turn = (): void => {
        const nowMs = performance.now();
        if (!measuring && nowMs >= t0) {
          measuring = true;
          cpu0 = process.cpuUsage();
          serviceCpu0 = cpuSeconds(service!.pid);
          threads0 = threadTimes(service!.pid);
        }
        while (next < jobs.length && start + jobs[next].due <= nowMs) {
          const job = jobs[next++];
          inFlight.push(job.run(start + job.due));
        }
        if (next === jobs.length) done();
        else setTimeout(turn, Math.max(0, start + jobs[next].due - performance.now()));
      };
      setTimeout(turn, Math.max(0, start - performance.now()));
    });
    await Promise.all(inFlight);
    const { latencies, warmupLatencies, statuses: searchStatuses, withResults: resultsSeen, trace } = await shopped;
    await downloader;
    const walked = followed ? await followed : null;
    if (downloads.some((d) => d.status !== 200)) console.error(`the service's last stderr:\n${serviceLog}`);
    const elapsed = (performance.now() - t0) / 1000;
    sampling = false;
    await sampler;
    const lastWriteAnswered = performance.now();
    while ((await offersLag()) > 0) await new Promise((res) => setTimeout(res, 20));
    const caughtUpMs = performance.now() - lastWriteAnswered;
    lagSamples.sort((a, b) => a - b);
    feedLagSamples.sort((a, b) => a - b);
    const changesWalked: Record<string, unknown> = walked
      ? {
          ...changesFigures(walked),
          feed_lag_events_p50: percentile(feedLagSamples, 50),
          feed_lag_events_max: feedLagSamples[feedLagSamples.length - 1] ?? NaN,
        }
      : {};
    // With covers checked: how many of the first writer's new SKUs are accepted once their checks are done.
    let coversAccepted: number | null = null;
    if (covers) {
      const key = { Authorization: `Bearer ${writers[0].key}` };
      const state = async (sku: string) =>
        ((await call('GET', `${api}/v1/products/${sku}`, undefined, key)).json as { state?: string }).state;
      const skus = Array.from({ length: 10 }, (_, k) => `w-${k * 2 * 10 + 2}`); // even i: new SKUs, i % 20 ≠ 0
      const deadline = Date.now() + 60_000;
      while ((await Promise.all(skus.map(state))).some((st) => st === 'pending') && Date.now() < deadline)
        await new Promise((res) => setTimeout(res, 200));
      coversAccepted = (await Promise.all(skus.map(state))).filter((st) => st === 'accepted').length;
    }
    const cpu = process.cpuUsage(cpu0);
    const serviceCpu = cpuSeconds(service.pid) - serviceCpu0;
    const threads = threadSeconds(threads0, threadTimes(service.pid));
    const resident = residentMb(service.pid);
    latencies.sort((a, b) => a - b);
    warmupLatencies.sort((a, b) => a - b);
    const figures = {
      offers: OFFERS_N,
      seed_seconds: Math.round(seededDb.ms / 1000),
      seed_reused: seededDb.reused,
      read_db_mb: Math.round(seededDb.bytes / 1e6),
      alone_p50_ms: Math.round(percentile(alone, 50) * 10) / 10,
      alone_p99_ms: Math.round(percentile(alone, 99) * 10) / 10,
      // The service's CPU (every thread) per search, nobody writing: less noisy than latency on a shared machine.
      alone_service_cpu_ms_per_search: Math.round(aloneCpu * 10),
      // The warm-up seconds (writers and searches both started, nothing counted above): the service's first
      // seconds under this load, reported apart.
      warmup_seconds: WARMUP,
      warmup_p99_ms: Math.round(percentile(warmupLatencies, 99) * 10) / 10,
      warmup_max_ms: Math.round((warmupLatencies[warmupLatencies.length - 1] ?? NaN) * 10) / 10,
      seconds: Math.round(elapsed * 10) / 10,
      searches: latencies.length,
      search_rate_per_s: Math.round((latencies.length / elapsed) * 10) / 10,
      search_statuses: searchStatuses,
      searches_with_results: resultsSeen,
      p50_ms: Math.round(percentile(latencies, 50) * 10) / 10,
      p90_ms: Math.round(percentile(latencies, 90) * 10) / 10,
      p99_ms: Math.round(percentile(latencies, 99) * 10) / 10,
      max_ms: Math.round(latencies[latencies.length - 1] * 10) / 10,
      writes: Object.values(writeStatuses).reduce((a, b) => a + b, 0),
      write_rate_per_s: Math.round((Object.values(writeStatuses).reduce((a, b) => a + b, 0) / elapsed) * 10) / 10,
      write_statuses: writeStatuses,
      // The offers projection under these writes: its lag in events, sampled every 500 ms, and the time from the
      // last answer to its checkpoint at the head.
      offers_lag_events_p50: percentile(lagSamples, 50),
      offers_lag_events_max: lagSamples[lagSamples.length - 1] ?? NaN,
      offers_caught_up_ms_after_last_answer: Math.round(caughtUpMs),
      covers_checked: covers !== null,
      // Of 10 of the first writer's new SKUs with a good cover: accepted once checked (null: covers not checked).
      covers_accepted_of_10: coversAccepted,
      service_cpu_s: Math.round(serviceCpu * 10) / 10,
      // Per thread name, seconds on a CPU and seconds runnable but waiting for one, over the measured seconds: when
      // the cores are short, who waited (the event loop's wait delays every search it serves).
      service_threads_run_wait_s: threads,
      // The service's resident memory at its peak and at the end (the search threads' held offers included).
      service_rss_peak_mb: resident.peak,
      service_rss_mb: resident.now,
      load_generator_cpu_s: Math.round((cpu.user + cpu.system) / 1e5) / 10,
      loadavg_1m: os.loadavg()[0],
    };
    const feed = downloader && trace ? feedFigures(trace, downloads, SECONDS) : {};
    // The monitor writes its record when the service exits: stopped here, before the figures are printed.
    let monitored: Record<string, unknown> = {};
    if (MONITOR && trace) {
      await stopService(service);
      const record = JSON.parse(fs.readFileSync(monitorFile(dataDir), 'utf8')) as MonitorRecord;
      monitored = monitorFigures(record, performance.timeOrigin + t0, trace);
    }
    console.log(JSON.stringify({ ...figures, ...feed, ...changesWalked, ...monitored }));
    const file = writeBenchResults('bench-search', {
      command: `${FEED_DOWNLOADS ? 'SEARCH_FEED_DOWNLOADS=1 ' : ''}${FOLLOW_CHANGES ? `SEARCH_FEED_CHANGES=1 SEARCH_FEED_CHANGES_POLL_MS=${CHANGES_POLL_MS} ` : ''}SEARCH_OFFERS=${OFFERS_N} SEARCH_SECONDS=${SECONDS} SEARCH_WARMUP=${WARMUP} SEARCH_RATE=${RATE} SEARCH_WRITERS=${WRITERS} node dist/tests/bench/search-bench.js`,
      figures: { ...figures, ...feed, ...changesWalked, ...monitored },
      markdown: [
        '| Measure | Figure | Target |',
        '| --- | --- | --- |',
        `| search p99 at ${RATE} searches/s over ${OFFERS_N} offers, ${WRITERS} partners writing | ${figures.p99_ms} ms (p50 ${figures.p50_ms} ms, max ${figures.max_ms} ms) | p99 <= 50 ms |`,
        `| searches answered | ${figures.searches} (${JSON.stringify(figures.search_statuses)}) | |`,
        `| writes answered | ${figures.writes} (${JSON.stringify(figures.write_statuses)}) | |`,
        `| warm-up (${WARMUP} s) p99 / max | ${figures.warmup_p99_ms} / ${figures.warmup_max_ms} ms | |`,
        `| offers projection lag | at most ${figures.offers_lag_events_max} events, caught up ${figures.offers_caught_up_ms_after_last_answer} ms after the last write | |`,
        ...(downloader
          ? [
              `| search p99, first half (no download) against second half (a channel downloading /feeds/offers.tsv) | ${String(feed.p99_without_feed_ms)} against ${String(feed.p99_with_feed_ms)} ms (while a download streamed: ${String(feed.p99_during_a_download_ms)} ms) | p99 <= 50 ms |`,
              `| full-feed downloads | ${String(feed.feed_downloads)} (${JSON.stringify(feed.feed_statuses)}), ${String(feed.feed_offers_per_download)} offers each, ${String(feed.feed_offers_per_s_p50)} offers/s | |`,
            ]
          : []),
        ...(followed
          ? [
              `| /feeds/changes page of ${CHANGES_LIMIT} while the partners write | p99 ${String(changesWalked.changes_full_p99_ms)} ms (p50 ${String(changesWalked.changes_full_p50_ms)} ms, max ${String(changesWalked.changes_full_max_ms)} ms) over ${String(changesWalked.changes_full_pages)} full pages | p99 <= 20 ms |`,
              `| /feeds/changes, every page (polls included) | ${String(changesWalked.changes_pages)} pages (${JSON.stringify(changesWalked.changes_statuses)}), p99 ${String(changesWalked.changes_all_p99_ms)} ms, ${String(changesWalked.changes_followed)} changes followed | |`,
            ]
          : []),
        '',
      ].join('\n'),
    });
    console.error(`figures written to ${path.relative(ROOT, file)} (and its .md beside it)`);
    if (trace && process.env.SEARCH_TRACE) fs.writeFileSync(process.env.SEARCH_TRACE, JSON.stringify(trace));
  } finally {
    if (service) await stopService(service);
    agent.destroy();
    await covers?.close();
    coverSetup?.cleanup();
    fs.rmSync(dataDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
