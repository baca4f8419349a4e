/**
 * Configuration from the environment (twelve-factor), validated at start-up with one clear message per bad value.
 * Besides the variables of DESIGN.md: RATE_LIMIT_WRITES / RATE_LIMIT_READS (per key and minute, default 600 / 1200 as
 * the contract says; raise them only for load tests or a deployment that agreed other limits), and
 * SQLITE_WRITER_THREAD=on|off (default on: the embedded event store commits, and fsyncs, in a worker thread).
 * SQLITE_MAX_GROUP_EVENTS (default 128 with the writer thread, 5000 without): the events of one group commit at most.
 * PROJECTION_THREAD=on|off (default on: the embedded service runs its projections on a thread of their own).
 * CURSOR_SECRET (at least 32 characters; default: generated into DATA_DIR/cursor-secret): the key of page cursors.
 * WEBHOOK_KEY (at least 32 characters; default: generated into DATA_DIR/webhook-key): webhook secrets derive from it.
 */
import path from 'node:path';
import { coverFetcherOptionsFromEnv } from './cover/cover-fetch-config.js';
import type { CoverFetcherOptions } from './cover/cover-fetcher.js';

export interface Config {
  host: string;
  port: number;
  adminHost: string;
  adminPort: number;
  adminToken: string | undefined;
  /** CURSOR_SECRET: the key of page cursors; unset, one is generated once into DATA_DIR/cursor-secret. */
  cursorSecret: string | undefined;
  /** WEBHOOK_KEY: the key webhook secrets are derived from; unset, one is generated once into DATA_DIR/webhook-key. */
  webhookKey: string | undefined;
  /** WEBHOOK_SCAN_MS: real-time period between looks for notifications to push to webhooks. */
  webhookScanMs: number;
  dataDir: string;
  /** `{base_url}` of the contract (ends in /v1): the prefix of problem `type` URLs and of the published documents. */
  apiBaseUrl: string;
  /** Base of `svc_url` links and the redirector. */
  publicBaseUrl: string;
  logLevel: string;
  /** Rate brake per key and minute (RATE_LIMIT_WRITES / RATE_LIMIT_READS); defaults are the contract's 600 / 1200. */
  rateLimits: { write: number; read: number };
  /**
   * Proxies in front of the doors whose `X-Forwarded-For` entry is trusted (TRUSTED_PROXY_HOPS, 0 to 5, default 0):
   * the client address of the per-address rate brakes is the entry the last of them added, never one a client wrote.
   */
  trustedProxyHops: number;
  clock: 'system' | 'manual';
  production: boolean;
  sqliteSynchronous: 'FULL' | 'NORMAL';
  /** SQLITE_WRITER_THREAD=on|off (default on): the event store commits in a worker thread, off the event loop. */
  sqliteWriterThread: boolean;
  /**
   * PROJECTION_THREAD=on|off (default on): the embedded service (SQLite event and read stores) runs the live
   * projections on a thread of their own (infra/wiring/projection-thread.ts); off, on the event loop.
   */
  projectionThread: boolean;
  /**
   * SQLITE_MAX_GROUP_EVENTS (default 128 with the writer thread, 5000 without): the events of one group commit at most.
   * Bounded, the next group commits while the event loop answers the last one; one unbounded group took every
   * waiting write and the loop idled through its fsync. Each group has fixed costs (a commit and its fsync, a message
   * each way, a wake-up of every subscription, which then reads): 128 rather than 32 cut the CPU per batch item by
   * ~15 % and per PUT of the scale benchmark by ~7 %, neutral in `make bench` (docs/adr/0010-event-store-writer-thread.md).
   */
  sqliteMaxGroupEvents: number;
  eventstoreUrl: string | undefined;
  /**
   * EVENTSTORE_STREAM_PREFIX: a namespace put before every stream name on EventStoreDB (letters, digits, `_`; '' by
   * default), so that several deployments or test services share one server without seeing each other's events.
   */
  eventstoreStreamPrefix: string;
  mongoUrl: string | undefined;
  /** MONGO_DB: the read store's database (default: the one named in MONGO_URL, else `partner_commerce`). */
  mongoDb: string | undefined;
  natsUrl: string | undefined;
  /** The cover check (reactor and re-check scheduler) runs; `COVER_CHECK=off` only outside production. */
  coverCheck: boolean;
  /** COVER_FETCH_HOSTS / COVER_FETCH_ALLOW_PRIVATE / COVER_FETCH_CA_FILE (tests only; refused in production). */
  coverFetch: CoverFetcherOptions;
  /** Cover checks running at once. */
  coverCheckConcurrency: number;
  /** COVER_CHECK_THREAD (on by default): the cover fetch runs on a thread of its own, not on the event loop. */
  coverCheckThread: boolean;
  /**
   * SEARCH_THREADS (0 to 8, default 2): threads that run the shopper search's reads and ranking beside the event
   * loop when the read models are an SQLite file (infra/sqlite/search-reader.ts); 0 runs them on the event loop.
   * The first thread answers every search while it has fewer than four in flight, the others take the rest (a burst,
   * the first seconds after a start): search-reader.ts `pickThread`. Each thread holds two SQLite connections with
   * their page caches (~2 MB each) and what it holds of the offers (held-offers.ts, at most 256 MB).
   */
  searchThreads: number;
  /**
   * SEARCH_HELD_OFFERS (on by default): each search thread keeps, off V8's heap, the ranking facts of the offers its
   * searches read (at most 256 MB of records a thread), exact through the offers model's change log, and a search
   * reads only the whole documents of the page it answers (infra/sqlite/held-offers.ts). `off` reads every
   * candidate's document at every search, as before.
   */
  searchHeldOffers: boolean;
  /**
   * SEARCHES_IN_FLIGHT (1 to 10,000, default 32): shopper searches one query door answers at once; one more is
   * answered 429 with `Retry-After: 1` at once (query-api/public/search.ts `limitInFlight`). 32 searches of ~7 ms
   * (warm) on two search threads are ~0.1–0.25 s of work queued: beyond that a shopper is better told to try again.
   */
  searchesInFlight: number;
  /**
   * SEARCH_NICE (-20 to 19, default -10): the search threads' nice value, counted from the process's own (Linux).
   * When the cores are busy a search then runs before the writes' work on the other threads, which waits: a shopper
   * waits for a search, a partner's write is answered without waiting for its projection. Below the process's own
   * needs CAP_SYS_NICE; without it the threads keep the process's and a warning is logged once (docs/adr/0051-thread-priorities-and-names.md).
   */
  searchNice: number;
  /**
   * EVENT_LOOP_NICE (-20 to 19, default -5): the event loop's thread's nice value, counted from the process's own, set
   * by `make run`'s entry once the service has started (infra/main.ts): it serves every request, searches included,
   * and goes before the projection, event-store writer, cover and history threads, after the search threads.
   */
  eventLoopNice: number;
  /** BATCH_PASSES: batch passes in flight at once, each of a different partner area (command-api/reactors/batch-runner.ts). */
  batchPasses: number;
  /** Real-time period between scans for covers due a re-check. */
  coverRecheckScanMs: number;
  /** FRESHNESS_SCAN_MS: real-time period between scans for accepted products whose 48 h passed. */
  freshnessScanMs: number;
  /** Deliveries of a cover-check item (the first included) before it is a dead letter. */
  coverCheckMaxDeliveries: number;
  /** Pause before retrying a failed cover check, doubled per delivery. */
  coverCheckRetryMs: number;
  /** This process consumes the cover-check queue (COVER_CHECK_WORKER; a command-api process, beside the projections one). */
  coverCheckWorker: boolean;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const problems: string[] = [];
  const port = (name: string, fallback: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 0 || n > 65535)
      problems.push(`${name} must be a port number (0-65535), got "${raw}"`);
    return n;
  };
  const oneOf = <T extends string>(name: string, allowed: readonly T[], fallback: T): T => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    if (!allowed.includes(raw as T)) problems.push(`${name} must be one of ${allowed.join(', ')}, got "${raw}"`);
    return raw as T;
  };
  const url = (name: string, fallback: string | undefined): string | undefined => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    try {
      new URL(raw);
    } catch {
      problems.push(`${name} must be a URL, got "${raw}"`);
    }
    return raw.replace(/\/+$/, '');
  };
  /** A namespace or database name: letters, digits and `_` (no `-`: it would change EventStoreDB categories). */
  const name = (variable: string, minLength: number): string | undefined => {
    const raw = env[variable];
    if (raw === undefined || (raw === '' && minLength > 0)) return undefined;
    if (!/^[A-Za-z0-9_]*$/.test(raw) || raw.length < minLength || raw.length > 60) {
      problems.push(`${variable} must be letters, digits and _ (at most 60), got "${raw}"`);
    }
    return raw;
  };
  const integer = (name: string, fallback: number, min: number, max: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min || n > max)
      problems.push(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
    return n;
  };
  const positive = (name: string, fallback: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const n = Number(raw);
    if (!Number.isSafeInteger(n) || n < 1) problems.push(`${name} must be a positive integer, got "${raw}"`);
    return n;
  };
  const production = env.NODE_ENV === 'production';
  const p = port('PORT', 8080);
  const host = env.HOST || '127.0.0.1';
  const clock = oneOf('CLOCK', ['system', 'manual'] as const, 'system');
  if (clock === 'manual' && production) problems.push('CLOCK=manual is refused when NODE_ENV=production');
  const adminToken = env.ADMIN_TOKEN || undefined;
  if (adminToken !== undefined && adminToken.length < 16) problems.push('ADMIN_TOKEN must be at least 16 characters');
  if (production && adminToken === undefined) problems.push('ADMIN_TOKEN is required when NODE_ENV=production');
  const cursorSecret = env.CURSOR_SECRET || undefined;
  if (cursorSecret !== undefined && cursorSecret.length < 32)
    problems.push('CURSOR_SECRET must be at least 32 characters');
  const webhookKey = env.WEBHOOK_KEY || undefined;
  if (webhookKey !== undefined && webhookKey.length < 32) problems.push('WEBHOOK_KEY must be at least 32 characters');
  const publicBase = url('PUBLIC_BASE_URL', `http://127.0.0.1:${p}`)!;
  if (production && !publicBase.startsWith('https://'))
    problems.push('PUBLIC_BASE_URL must be https:// when NODE_ENV=production');
  const coverCheck = oneOf('COVER_CHECK', ['on', 'off'] as const, 'on') === 'on';
  if (!coverCheck && production) problems.push('COVER_CHECK=off is refused when NODE_ENV=production');
  let coverFetch: CoverFetcherOptions = {};
  try {
    coverFetch = coverFetcherOptionsFromEnv(env);
  } catch (err) {
    problems.push((err as Error).message);
  }
  const sqliteWriterThread = oneOf('SQLITE_WRITER_THREAD', ['on', 'off'] as const, 'on') === 'on';
  const coverCheckConcurrency = integer('COVER_CHECK_CONCURRENCY', 8, 1, 64);
  const config: Config = {
    host,
    port: p,
    adminHost: env.ADMIN_HOST || '127.0.0.1',
    adminPort: port('ADMIN_PORT', 8081),
    adminToken,
    cursorSecret,
    webhookKey,
    dataDir: path.resolve(env.DATA_DIR || 'data'),
    apiBaseUrl: url('API_BASE_URL', `http://127.0.0.1:${p}/v1`)!,
    publicBaseUrl: publicBase,
    rateLimits: { write: positive('RATE_LIMIT_WRITES', 600), read: positive('RATE_LIMIT_READS', 1200) },
    trustedProxyHops: integer('TRUSTED_PROXY_HOPS', 0, 0, 5),
    logLevel: oneOf('LOG_LEVEL', ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const, 'info'),
    clock,
    production,
    sqliteSynchronous: oneOf('SQLITE_SYNCHRONOUS', ['FULL', 'NORMAL'] as const, 'FULL'),
    sqliteWriterThread,
    projectionThread: oneOf('PROJECTION_THREAD', ['on', 'off'] as const, 'on') === 'on',
    sqliteMaxGroupEvents: integer('SQLITE_MAX_GROUP_EVENTS', sqliteWriterThread ? 128 : 5000, 1, 100_000),
    eventstoreUrl: url('EVENTSTORE_URL', undefined),
    eventstoreStreamPrefix: name('EVENTSTORE_STREAM_PREFIX', 0) ?? '',
    mongoUrl: url('MONGO_URL', undefined),
    mongoDb: name('MONGO_DB', 1),
    natsUrl: url('NATS_URL', undefined),
    coverCheck,
    // As many idle connections per image server as checks run at once: a burst to one host leaves them all for
    // the next checks, where keeping fewer closed and reopened the surplus every time.
    coverFetch: { idleConnections: coverCheckConcurrency, ...coverFetch },
    coverCheckConcurrency,
    batchPasses: integer('BATCH_PASSES', 4, 1, 64),
    coverCheckThread: oneOf('COVER_CHECK_THREAD', ['on', 'off'] as const, 'on') === 'on',
    searchThreads: integer('SEARCH_THREADS', 2, 0, 8),
    searchHeldOffers: oneOf('SEARCH_HELD_OFFERS', ['on', 'off'] as const, 'on') === 'on',
    searchesInFlight: integer('SEARCHES_IN_FLIGHT', 32, 1, 10_000),
    searchNice: integer('SEARCH_NICE', -10, -20, 19),
    eventLoopNice: integer('EVENT_LOOP_NICE', -5, -20, 19),
    coverRecheckScanMs: integer('COVER_RECHECK_SCAN_MS', 60_000, 10, 3_600_000),
    freshnessScanMs: integer('FRESHNESS_SCAN_MS', 60_000, 10, 3_600_000),
    webhookScanMs: integer('WEBHOOK_SCAN_MS', 5_000, 10, 3_600_000),
    coverCheckMaxDeliveries: integer('COVER_CHECK_MAX_DELIVERIES', 5, 1, 100),
    coverCheckRetryMs: integer('COVER_CHECK_RETRY_MS', 1_000, 0, 60_000),
    coverCheckWorker: oneOf('COVER_CHECK_WORKER', ['on', 'off'] as const, 'off') === 'on',
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}
