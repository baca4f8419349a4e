/**
 * Configuration from the environment (twelve-factor), validated at start-up: every bad value is reported at once,
 * one message per variable. SETTINGS below is the one table of the variables: how each is parsed, its default and
 * bounds, its meaning and the processes that read it. loadConfig reads the environment through it, and the settings
 * table of docs/configuration.md is generated from it (`make config-doc`, infra/wiring/config-doc.ts).
 *
 * A new setting: a row in SETTINGS, its field in Config and the line of `toConfig` that sets it (the compiler
 * points at the missing one), then `make config-doc`.
 */
import path from 'node:path';
import { coverFetcherOptionsFromEnv } from '../adapters/cover/cover-fetch-config.js';
import type { CoverFetcherOptions } from '../adapters/cover/cover-fetcher.js';
import { BODY_RULES, type BodyRules } from '../../command-api/json-body.js';
import { DEFAULT_FEED_GZIP_LEVEL, DEFAULT_FEED_OFFERS_PER_SECOND } from '../../shared-schema/feeds/limits.js';

/** One operator's admin token and the name recorded as the actor of what it does. */
export interface NamedAdminToken {
  name: string;
  token: string;
}

const ADMIN_NAME = /^[a-z][a-z0-9_.-]{0,31}$/;

/** ADMIN_TOKENS: `name:token` pairs split on commas; every problem of the list is pushed to `problems`. */
function namedAdminTokens(raw: string | undefined, single: string | undefined, problems: string[]): NamedAdminToken[] {
  if (!raw) return [];
  const out: NamedAdminToken[] = [];
  for (const [i, pair] of raw.split(',').entries()) {
    const colon = pair.indexOf(':');
    const name = pair.slice(0, Math.max(colon, 0)).trim();
    const token = pair.slice(colon + 1).trim();
    // Never the token in a message: the entry is named by its position and its name.
    if (colon < 0 || !ADMIN_NAME.test(name))
      problems.push(`ADMIN_TOKENS entry ${i + 1} must be name:token with a name of a-z, 0-9, . _ - (at most 32)`);
    else if (token.length < 16) problems.push(`ADMIN_TOKENS token of ${name} must be at least 16 characters`);
    else if (out.some((t) => t.name === name)) problems.push(`ADMIN_TOKENS names ${name} twice`);
    else if (token === single || out.some((t) => t.token === token))
      problems.push(`ADMIN_TOKENS token of ${name} is not unique (each operator has a token of their own)`);
    else out.push({ name, token });
  }
  return out;
}

export interface Config {
  host: string;
  port: number;
  adminHost: string;
  adminPort: number;
  adminToken: string | undefined;
  /**
   * ADMIN_TOKENS=`name:token,name:token`: one admin token per operator; what a holder does is recorded as actor
   * `admin:<name>` (the single ADMIN_TOKEN stays actor `admin`).
   */
  adminTokens: readonly NamedAdminToken[];
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
  /** BODY_DEADLINE_MS, UPLOADS_PER_KEY, UPLOADS_PER_ADDRESS: what a write's body may cost besides its size. */
  bodies: BodyRules;
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
  /**
   * SEARCH_HELD_OFFERS (on by default): on the embedded SQLite read store the search keeps, off V8's heap, the ranking
   * facts of the offers its searches read (at most 256 MB of records), exact through the offers model's change log,
   * and a search reads only the whole documents of the page it answers (infra/adapters/sqlite/held-offers.ts). `off`
   * reads every candidate's document at every search, as the topology's query processes do.
   */
  searchHeldOffers: boolean;
  /**
   * SEARCHES_IN_FLIGHT (1 to 10,000, default 32): shopper searches one query door answers at once; one more is
   * answered 429 with `Retry-After: 1` at once (query-api/public/search.ts `limitInFlight`). 32 searches of ~3–13 ms
   * (warm to cold) are ~0.1–0.4 s of work queued: beyond that a shopper is better told to try again.
   */
  searchesInFlight: number;
  /** BATCH_PASSES: batch passes in flight at once, each of a different partner area (command-api/reactors/batch-runner.ts). */
  batchPasses: number;
  /** Real-time period between scans for covers due a re-check. */
  coverRecheckScanMs: number;
  /** FRESHNESS_SCAN_MS: real-time period between scans for accepted products whose 48 h passed. */
  freshnessScanMs: number;
  /** FEED_CHANGES_RETENTION_DAYS: days a change of the channel feeds is kept (command-api/reactors/feed-retention.ts). */
  feedChangesRetentionDays: number;
  /** FEED_GZIP_LEVEL: the zlib level of the full feed sent gzipped (query-api/feeds/offers-tsv.ts). */
  feedGzipLevel: number;
  /** FEED_OFFERS_PER_SECOND: offers a second a query process streams in full feeds, all downloads together (query-api/feeds/pace.ts). */
  feedOffersPerSecond: number;
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

/** How a variable's text becomes a value. */
export interface Kind<T> {
  /** The accepted values, as the docs show them. */
  readonly values: string;
  /** A secret: its refusal never repeats the value. */
  readonly secret?: boolean;
  /** The value, or what the text must be (`be a URL`) when it is refused. */
  parse(raw: string): { value: T } | { must: string };
}

/** The processes that read a setting: `make run` (the embedded service), those of `make run-topology`, its launcher. */
export type Reader = 'make run' | 'command-api' | 'query-api' | 'projections' | 'launcher';

export interface Setting<T, F extends T | undefined = T> {
  readonly kind: Kind<T>;
  /** The value when the variable is unset or empty. */
  readonly fallback: NoInfer<F>;
  /** The default as the docs show it, when `fallback` alone does not say it (derived, generated). */
  readonly shown?: string;
  /** One line for the docs. */
  readonly meaning: string;
  readonly readBy: readonly Reader[];
  /** With NODE_ENV=production: why this value is refused, if it is. */
  inProduction?(value: T | F): string | undefined;
}

const setting = <T>(s: Setting<T>): Setting<T> => s;
/** A setting whose value is `undefined` when unset. */
const optional = <T>(s: Setting<T, undefined>): Setting<T, undefined> => s;

const ALL: readonly Reader[] = ['make run', 'command-api', 'query-api', 'projections', 'launcher'];
const PROCESSES: readonly Reader[] = ['make run', 'command-api', 'query-api', 'projections'];
const DOORS: readonly Reader[] = ['make run', 'command-api', 'query-api'];
const COVER_CHECKERS: readonly Reader[] = ['make run', 'projections', 'command-api'];
const ADMIN: readonly Reader[] = ['make run', 'projections', 'launcher'];

const text = (values = 'any text'): Kind<string> => ({ values, parse: (raw) => ({ value: raw }) });

const port: Kind<number> = {
  values: '0–65535',
  parse: (raw) => {
    const n = Number(raw);
    return Number.isInteger(n) && n >= 0 && n <= 65535 ? { value: n } : { must: 'be a port number (0-65535)' };
  },
};

const integer = (min: number, max: number): Kind<number> => ({
  values: `${min}–${max}`,
  parse: (raw) => {
    const n = Number(raw);
    return Number.isInteger(n) && n >= min && n <= max ? { value: n } : { must: `be an integer from ${min} to ${max}` };
  },
});

const positive: Kind<number> = {
  values: '1 or more',
  parse: (raw) => {
    const n = Number(raw);
    return Number.isSafeInteger(n) && n >= 1 ? { value: n } : { must: 'be a positive integer' };
  },
};

const oneOf = <T extends string>(...allowed: readonly T[]): Kind<T> => ({
  values: allowed.map((a) => `\`${a}\``).join(', '),
  parse: (raw) =>
    (allowed as readonly string[]).includes(raw) ? { value: raw as T } : { must: `be one of ${allowed.join(', ')}` },
});

const onOff: Kind<boolean> = {
  values: '`on`, `off`',
  parse: (raw) => (raw === 'on' || raw === 'off' ? { value: raw === 'on' } : { must: 'be one of on, off' }),
};

/** A URL, without its trailing slashes. */
const url: Kind<string> = {
  values: 'a URL',
  parse: (raw) => (URL.canParse(raw) ? { value: raw.replace(/\/+$/, '') } : { must: 'be a URL' }),
};

/** A namespace or database name: letters, digits and `_` (no `-`: it would change EventStoreDB categories). */
const name: Kind<string> = {
  values: 'letters, digits, `_` (at most 60)',
  parse: (raw) =>
    /^[A-Za-z0-9_]{1,60}$/.test(raw) ? { value: raw } : { must: 'be letters, digits and _ (at most 60)' },
};

const secret = (minLength: number): Kind<string> => ({
  values: `${minLength}+ characters`,
  secret: true,
  parse: (raw) => (raw.length >= minLength ? { value: raw } : { must: `be at least ${minLength} characters` }),
});

/** Read through coverFetcherOptionsFromEnv (infra/adapters/cover/cover-fetch-config.ts), which checks the three together. */
const coverFetchTestOnly = (values: string): Kind<string> => text(`${values} (refused in production)`);

/**
 * Every variable loadConfig reads, in the order of docs/configuration.md. An empty variable counts as unset.
 * The operator surface's own settings are in infra/ops/settings.ts (docs/operations.md, "Settings").
 */
export const SETTINGS = {
  NODE_ENV: optional({
    kind: text(),
    fallback: undefined,
    meaning: '`production` refuses the test-only settings, requires `ADMIN_TOKEN` and an https `PUBLIC_BASE_URL`',
    readBy: ALL,
  }),
  PORT: setting({ kind: port, fallback: 8080, meaning: 'port of the partner API (the gateway)', readBy: ALL }),
  HOST: setting({
    kind: text('an address'),
    fallback: '127.0.0.1',
    meaning: 'address of the partner API',
    readBy: ALL,
  }),
  ADMIN_PORT: setting({ kind: port, fallback: 8081, meaning: 'port of the admin API', readBy: ADMIN }),
  ADMIN_HOST: setting({
    kind: text('an address'),
    fallback: '127.0.0.1',
    meaning: 'address of the admin API',
    readBy: ADMIN,
  }),
  ADMIN_TOKEN: optional({
    kind: secret(16),
    fallback: undefined,
    shown: 'generated into `DATA_DIR/admin-token`',
    meaning: 'bearer token of the admin API (required in production)',
    readBy: ADMIN,
    inProduction: (token) => (token === undefined ? 'ADMIN_TOKEN is required when NODE_ENV=production' : undefined),
  }),
  ADMIN_TOKENS: optional({
    kind: { ...secret(16), values: '`name:token,…` (names of a-z, 0-9, `.` `_` `-`; tokens of 16+ characters)' },
    fallback: undefined,
    meaning: 'one admin token per operator; what each does is recorded as actor `admin:<name>`',
    readBy: ADMIN,
  }),
  WEBHOOK_KEY: optional({
    kind: secret(32),
    fallback: undefined,
    shown: 'generated into `DATA_DIR/webhook-key`',
    meaning:
      'key the webhook secrets are derived from; every process that registers or sends webhooks needs the same one',
    readBy: ['make run', 'command-api', 'projections'],
  }),
  CURSOR_SECRET: optional({
    kind: secret(32),
    fallback: undefined,
    shown: 'generated into `DATA_DIR/cursor-secret`',
    meaning:
      'key of the HMAC that signs page cursors; every query-api replica needs the same one; changing it invalidates outstanding cursors (422)',
    readBy: ['make run', 'query-api'],
  }),
  DATA_DIR: setting({
    kind: text('a path'),
    fallback: 'data',
    shown: '`./data`',
    meaning:
      'SQLite files of the embedded default: `events.db` (the log), `read.db` (read models), `history.db` (operation history)',
    readBy: ALL,
  }),
  API_BASE_URL: optional({
    kind: url,
    fallback: undefined,
    shown: '`http://127.0.0.1:$PORT/v1`',
    meaning: '`{base_url}` of the contract (problem `type` URLs, published documents)',
    readBy: [...PROCESSES, 'launcher'],
  }),
  PUBLIC_BASE_URL: optional({
    kind: url,
    fallback: undefined,
    shown: '`http://127.0.0.1:$PORT`',
    meaning: 'base of `svc_url` links and of the redirector (must be https in production)',
    readBy: [...DOORS, 'launcher'],
    inProduction: (base) =>
      base?.startsWith('https://') ? undefined : 'PUBLIC_BASE_URL must be https:// when NODE_ENV=production',
  }),
  CLOCK: setting({
    kind: oneOf('system', 'manual'),
    fallback: 'system',
    meaning: '`manual`: a clock only the admin API moves (refused in production)',
    readBy: PROCESSES,
    inProduction: (clock) => (clock === 'manual' ? 'CLOCK=manual is refused when NODE_ENV=production' : undefined),
  }),
  LOG_LEVEL: setting({
    kind: oneOf('trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'),
    fallback: 'info',
    meaning: 'pino level; logs are JSON with the request id, never a key, token or body',
    readBy: PROCESSES,
  }),
  RATE_LIMIT_WRITES: setting({
    kind: positive,
    fallback: 600,
    meaning:
      "rate brake: writes per key and minute (the contract's 600; raise it only for load tests or agreed limits)",
    readBy: DOORS,
  }),
  RATE_LIMIT_READS: setting({
    kind: positive,
    fallback: 1200,
    meaning: "rate brake: reads per key and minute (the contract's 1200)",
    readBy: DOORS,
  }),
  TRUSTED_PROXY_HOPS: setting({
    kind: integer(0, 5),
    fallback: 0,
    meaning:
      'proxies in front whose `X-Forwarded-For` entry names the client (per-address brake of `/api/search`); `make run-topology` sets 1 (nginx)',
    readBy: DOORS,
  }),
  BODY_DEADLINE_MS: setting({
    kind: integer(100, 600_000),
    fallback: BODY_RULES.deadlineMs,
    meaning: "a write's body must arrive within this of its headers (a batch within twice this), else 408",
    readBy: ['make run', 'command-api'],
  }),
  UPLOADS_PER_KEY: setting({
    kind: integer(1, 10_000),
    fallback: BODY_RULES.uploadsPerKey,
    meaning: 'bodies still arriving at once per API key at one command door; one more is answered 429',
    readBy: ['make run', 'command-api'],
  }),
  UPLOADS_PER_ADDRESS: setting({
    kind: integer(1, 10_000),
    fallback: BODY_RULES.uploadsPerAddress,
    meaning: 'bodies still arriving at once per client address at one command door; one more is answered 429',
    readBy: ['make run', 'command-api'],
  }),
  SQLITE_SYNCHRONOUS: setting({
    kind: oneOf('FULL', 'NORMAL'),
    fallback: 'FULL',
    meaning: '`NORMAL` trades durability on power loss (not on a process crash) for speed',
    readBy: PROCESSES,
  }),
  SQLITE_WRITER_THREAD: setting({
    kind: onOff,
    fallback: true,
    meaning: 'the event store commits (and fsyncs) in a worker thread, off the event loop',
    readBy: PROCESSES,
  }),
  PROJECTION_THREAD: setting({
    kind: onOff,
    fallback: true,
    meaning:
      'the embedded service runs its projections (read-model units and their commits) on a thread of their own; `off`: on the event loop',
    readBy: ['make run'],
  }),
  EVENTSTORE_URL: optional({
    kind: url,
    fallback: undefined,
    meaning: 'EventStoreDB as the event store (`docs/topology.md`)',
    readBy: PROCESSES,
  }),
  EVENTSTORE_STREAM_PREFIX: setting({
    kind: name,
    fallback: '',
    meaning: 'namespace put before every stream name on EventStoreDB, so deployments or tests can share a server',
    readBy: PROCESSES,
  }),
  MONGO_URL: optional({
    kind: url,
    fallback: undefined,
    meaning: 'MongoDB as the read store (`docs/topology.md`)',
    readBy: PROCESSES,
  }),
  MONGO_DB: optional({
    kind: name,
    fallback: undefined,
    shown: 'the one of `MONGO_URL`, else `partner_commerce`',
    meaning: "the read store's database on MongoDB",
    readBy: PROCESSES,
  }),
  NATS_URL: optional({
    kind: url,
    fallback: undefined,
    meaning: 'NATS between the processes (required by those of `make run-topology`; `docs/topology.md`)',
    readBy: ALL,
  }),
  COVER_CHECK: setting({
    kind: onOff,
    fallback: true,
    meaning: '`off` starts neither the cover check nor its re-checks (tests that do not fetch; refused in production)',
    readBy: COVER_CHECKERS,
    inProduction: (on) => (on ? undefined : 'COVER_CHECK=off is refused when NODE_ENV=production'),
  }),
  COVER_CHECK_CONCURRENCY: setting({
    kind: integer(1, 64),
    fallback: 8,
    meaning:
      'cover checks running at once, and the idle connections kept per image server for the next checks (each closed after 4 s unused)',
    readBy: COVER_CHECKERS,
  }),
  FRESHNESS_SCAN_MS: setting({
    kind: integer(10, 3_600_000),
    fallback: 60_000,
    meaning:
      'real-time period of the scan for accepted products whose 48 h without a write have passed (their `stale` notification); with the system clock the scan also wakes at the next lapse due, moving the manual clock also scans, and a full feed read records what is due first',
    readBy: ['make run', 'projections'],
  }),
  FEED_CHANGES_RETENTION_DAYS: setting({
    kind: integer(1, 3650),
    fallback: 30,
    meaning:
      'days a change of the channel feeds (`/feeds/changes`) is kept by the service clock; a cursor from before the changes dropped is answered 410 (the channel reads the full feed again). Looked at with the freshness scan (FRESHNESS_SCAN_MS) and when the manual clock moves',
    readBy: ['make run', 'projections'],
  }),
  FEED_GZIP_LEVEL: setting({
    kind: integer(1, 9),
    fallback: DEFAULT_FEED_GZIP_LEVEL,
    meaning:
      "zlib compression level of the full feed (`/feeds/offers.tsv`) when the channel accepts gzip: 1 (the default, as nginx's `gzip_comp_level`) costs the query door less than half the compression CPU of 6 (zlib's own default) for about 7 % more bytes; a higher level trades that CPU, and the download's pace, for fewer bytes on the wire",
    readBy: ['make run', 'query-api'],
  }),
  FEED_OFFERS_PER_SECOND: setting({
    kind: integer(1_000, 100_000_000),
    fallback: DEFAULT_FEED_OFFERS_PER_SECOND,
    meaning:
      "offers a second one query process streams in full feeds (`/feeds/offers.tsv`), every download together: a million offers in 5 s at the default, and the feeds' share of the process's CPU bounded whatever the number of channels downloading at once, so that the shoppers' searches keep their pace. Raise it on a process with cores to spare",
    readBy: ['make run', 'query-api'],
  }),
  WEBHOOK_SCAN_MS: setting({
    kind: integer(10, 3_600_000),
    fallback: 5_000,
    meaning: "real-time period between looks for notifications to push to the partners' webhooks",
    readBy: ['make run', 'projections'],
  }),
  COVER_RECHECK_SCAN_MS: setting({
    kind: integer(10, 3_600_000),
    fallback: 60_000,
    meaning:
      'real-time period of the scan for covers due a re-check (rejected: 1 h, accepted: 7 days, by the service clock)',
    readBy: ['make run', 'projections'],
  }),
  COVER_CHECK_MAX_DELIVERIES: setting({
    kind: integer(1, 100),
    fallback: 5,
    meaning: 'deliveries of a cover-check item (the first included) before it is a dead letter',
    readBy: COVER_CHECKERS,
  }),
  COVER_CHECK_RETRY_MS: setting({
    kind: integer(0, 60_000),
    fallback: 1_000,
    meaning: 'pause before a failed cover check is handed back, doubled per delivery (at most 15 s)',
    readBy: COVER_CHECKERS,
  }),
  COVER_CHECK_WORKER: setting({
    kind: onOff,
    fallback: false,
    meaning: '`on`: a command-api process also consumes the cover-check queue (NATS), beside the projections process',
    readBy: ['command-api'],
  }),
  COVER_FETCH_HOSTS: optional({
    kind: coverFetchTestOnly('`name=ip,…`'),
    fallback: undefined,
    meaning: 'tests only: addresses used instead of the DNS for those names',
    readBy: COVER_CHECKERS,
  }),
  COVER_FETCH_ALLOW_PRIVATE: optional({
    kind: coverFetchTestOnly('`1`, `0`'),
    fallback: undefined,
    meaning: 'tests only: `1` lets the check reach loopback and private addresses',
    readBy: COVER_CHECKERS,
  }),
  COVER_FETCH_CA_FILE: optional({
    kind: coverFetchTestOnly('a PEM file'),
    fallback: undefined,
    meaning:
      "tests only: CAs trusted besides Node's own, for a service started inside a running process where `NODE_EXTRA_CA_CERTS` comes too late",
    readBy: COVER_CHECKERS,
  }),
  SEARCH_HELD_OFFERS: setting({
    kind: onOff,
    fallback: true,
    meaning:
      "on the embedded SQLite read store the search keeps, off V8's heap, the ranking facts of the offers its searches have read (at most 256 MB), exact through the offers model's change log; `off` reads every candidate's document at every search",
    readBy: ['make run'],
  }),
  SEARCHES_IN_FLIGHT: setting({
    kind: integer(1, 10_000),
    fallback: 32,
    meaning:
      'shopper searches (`/api/search`, `/busca`) a query door answers at once; one more is answered 429 with `Retry-After: 1` at once, whatever its address',
    readBy: ['make run', 'query-api'],
  }),
  BATCH_PASSES: setting({
    kind: integer(1, 64),
    fallback: 4,
    meaning: 'batch passes (50 items each) in flight at once, never two of one partner area',
    readBy: ['make run', 'projections'],
  }),
};

export type SettingName = keyof typeof SETTINGS;
/** The parsed value of every setting (its fallback when unset). */
export type SettingValues = {
  -readonly [K in SettingName]: (typeof SETTINGS)[K] extends { kind: Kind<infer T>; fallback: infer F } ? T | F : never;
};
type AnySetting = Setting<unknown, unknown>;

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const problems: string[] = [];
  const values = readSettings(env, problems);
  const adminTokens = namedAdminTokens(values.ADMIN_TOKENS, values.ADMIN_TOKEN, problems);
  let coverFetch: CoverFetcherOptions = {};
  try {
    coverFetch = coverFetcherOptionsFromEnv(env);
  } catch (err) {
    problems.push((err as Error).message);
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return toConfig(values, adminTokens, coverFetch);
}

/** Every variable of SETTINGS, each refusal (and production rule) added to `problems`. */
function readSettings(env: NodeJS.ProcessEnv, problems: string[]): SettingValues {
  const production = env.NODE_ENV === 'production';
  const values: Partial<Record<SettingName, unknown>> = {};
  for (const [variable, s] of Object.entries(SETTINGS) as [SettingName, AnySetting][]) {
    const raw = env[variable];
    let value: unknown = s.fallback;
    if (raw !== undefined && raw !== '') {
      const parsed = s.kind.parse(raw);
      if ('must' in parsed) {
        problems.push(`${variable} must ${parsed.must}${s.kind.secret ? '' : `, got "${raw}"`}`);
        continue;
      }
      value = parsed.value;
    }
    const refused = production ? s.inProduction?.(value) : undefined;
    if (refused !== undefined) problems.push(refused);
    values[variable] = value;
  }
  return values as SettingValues;
}

function toConfig(s: SettingValues, adminTokens: readonly NamedAdminToken[], coverFetch: CoverFetcherOptions): Config {
  return {
    host: s.HOST,
    port: s.PORT,
    adminHost: s.ADMIN_HOST,
    adminPort: s.ADMIN_PORT,
    adminToken: s.ADMIN_TOKEN,
    adminTokens,
    cursorSecret: s.CURSOR_SECRET,
    webhookKey: s.WEBHOOK_KEY,
    webhookScanMs: s.WEBHOOK_SCAN_MS,
    freshnessScanMs: s.FRESHNESS_SCAN_MS,
    feedChangesRetentionDays: s.FEED_CHANGES_RETENTION_DAYS,
    feedGzipLevel: s.FEED_GZIP_LEVEL,
    feedOffersPerSecond: s.FEED_OFFERS_PER_SECOND,
    dataDir: path.resolve(s.DATA_DIR),
    apiBaseUrl: s.API_BASE_URL ?? `http://127.0.0.1:${s.PORT}/v1`,
    publicBaseUrl: s.PUBLIC_BASE_URL ?? `http://127.0.0.1:${s.PORT}`,
    logLevel: s.LOG_LEVEL,
    rateLimits: { write: s.RATE_LIMIT_WRITES, read: s.RATE_LIMIT_READS },
    trustedProxyHops: s.TRUSTED_PROXY_HOPS,
    bodies: {
      deadlineMs: s.BODY_DEADLINE_MS,
      uploadsPerKey: s.UPLOADS_PER_KEY,
      uploadsPerAddress: s.UPLOADS_PER_ADDRESS,
    },
    clock: s.CLOCK,
    production: s.NODE_ENV === 'production',
    sqliteSynchronous: s.SQLITE_SYNCHRONOUS,
    sqliteWriterThread: s.SQLITE_WRITER_THREAD,
    projectionThread: s.PROJECTION_THREAD,
    eventstoreUrl: s.EVENTSTORE_URL,
    eventstoreStreamPrefix: s.EVENTSTORE_STREAM_PREFIX,
    mongoUrl: s.MONGO_URL,
    mongoDb: s.MONGO_DB,
    natsUrl: s.NATS_URL,
    coverCheck: s.COVER_CHECK,
    // As many idle connections per image server as checks run at once: a burst to one host leaves them all for
    // the next checks, where keeping fewer closed and reopened the surplus every time.
    coverFetch: { idleConnections: s.COVER_CHECK_CONCURRENCY, ...coverFetch },
    coverCheckConcurrency: s.COVER_CHECK_CONCURRENCY,
    searchHeldOffers: s.SEARCH_HELD_OFFERS,
    searchesInFlight: s.SEARCHES_IN_FLIGHT,
    batchPasses: s.BATCH_PASSES,
    coverRecheckScanMs: s.COVER_RECHECK_SCAN_MS,
    coverCheckMaxDeliveries: s.COVER_CHECK_MAX_DELIVERIES,
    coverCheckRetryMs: s.COVER_CHECK_RETRY_MS,
    coverCheckWorker: s.COVER_CHECK_WORKER,
  };
}
