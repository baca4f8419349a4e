/**
 * Wires the whole service on the embedded default, in one process: SQLite event and read stores in DATA_DIR,
 * in-process messaging, the projection runner, the command and query doors behind the in-process gateway, and the
 * admin API. Everything is passed in; nothing is a module-level singleton.
 */
import path from 'node:path';
import fs from 'node:fs';
import type http from 'node:http';
import pino, { type Logger } from 'pino';
import { systemClock, type Clock } from '../shared-schema/ports/clock.js';
import { categoryOf, type EventStore } from '../shared-schema/ports/event-store.js';
import { CATEGORIES } from '../shared-schema/streams.js';
import type { ReadStore } from '../shared-schema/ports/read-store.js';
import type { Messaging } from '../shared-schema/ports/messaging.js';
import type { CoverChecker } from '../shared-schema/ports/cover-checker.js';
import { IDEMPOTENCY_COLLECTION } from '../command-api/idempotency.js';
import { WRITE_ROUTES } from '../command-api/write-routes.js';
import { READ_ROUTES } from '../query-api/read-routes.js';
import { ProjectionRunner, type LiveProjections } from '../projections/runner.js';
import { GENERATION_SWITCHED } from '../projections/generations.js';
import { PORTAL_SESSION_COLLECTIONS } from '../shared-schema/read-models/portal-sessions.js';
import { adapterChoice, openStores, sqliteFiles, type StoreMode } from './wiring/stores.js';
import { ProjectionThread } from './wiring/projection-thread.js';
import { SharedMemoryClock } from './wiring/shared-clock.js';
import { SqliteEventStore } from './sqlite/event-store.js';
import { PROJECTORS } from './wiring/projectors.js';
import { SqliteReadStore } from './sqlite/read-store.js';
import { startSearchReader } from './sqlite/search-reader.js';
import { searchHere } from '../query-api/public/product-search.js';
import type { ProductSearch } from '../shared-schema/shopper/search-policy.js';
import {
  buildAdminApp,
  buildCommandApp,
  buildRedirector,
  buildQueryApp,
  commandDeps,
  KeyCache,
  type DoorParts,
} from './wiring/doors.js';
import { startReactors, type ReactorStart } from './wiring/reactors.js';
import {
  batchRunnerReactor,
  coverCheckReactor,
  freshnessReactor,
  webhookSenderReactor,
} from './wiring/core-reactors.js';
import { WEBHOOK_DELIVERY_COLLECTION } from '../shared-schema/read-models/webhooks.js';
import { gatewayHandler, listen } from './gateway.js';
import type { Config } from './config.js';
import { Operations } from './ops/operations.js';
import type { OperationsSettings } from './ops/settings.js';
import { drainServer } from './ops/shutdown.js';
import { dataDirSecret } from './wiring/data-dir-secret.js';
import { CursorSecret } from '../shared-schema/http/pagination.js';

export { keyLookup } from './wiring/doors.js';
/** The doors' routes (the separate processes serve the same). */
export { READ_ROUTES, WRITE_ROUTES };

export interface Service {
  config: Config;
  clock: Clock;
  log: Logger;
  events: EventStore;
  reads: ReadStore;
  messaging: Messaging;
  /** The live projections: a ProjectionRunner, or the proxy of the one on the projection thread. */
  runner: LiveProjections;
  gateway: http.Server;
  admin: http.Server;
  adminToken: string;
  /** History, metrics, health, projection generations and rebuilds, audit (infra/ops/). */
  operations: Operations;
  close(): Promise<void>;
}

export { PROJECTORS };

/** Reactors: started here in the embedded default, in the projections process otherwise (infra/wiring/reactors.ts). */
export const REACTORS: ReactorStart[] = [batchRunnerReactor, coverCheckReactor, freshnessReactor, webhookSenderReactor];

/** Every collection a door or a projector reads (each process makes sure they exist before serving). */
export const ALL_COLLECTIONS = () => [
  IDEMPOTENCY_COLLECTION,
  WEBHOOK_DELIVERY_COLLECTION,
  ...PORTAL_SESSION_COLLECTIONS,
  ...PROJECTORS.flatMap((p) => p.collections),
];

/** Where the generated admin token is kept when ADMIN_TOKEN is not set. */
export const adminTokenFile = (config: Config): string => path.join(config.dataDir, 'admin-token');

/** The admin token: ADMIN_TOKEN, or one generated once and kept in DATA_DIR/admin-token (mode 0600). */
export function resolveAdminToken(config: Config): string {
  return dataDirSecret(config.dataDir, 'admin-token', config.adminToken);
}

/**
 * The key of page cursors (shared-schema/http/pagination.ts): CURSOR_SECRET, or one generated once and kept in
 * DATA_DIR/cursor-secret (mode 0600). Every query door sharing DATA_DIR signs and checks with the same one.
 */
export function resolveCursorSecret(config: Config): CursorSecret {
  return new CursorSecret(dataDirSecret(config.dataDir, 'cursor-secret', config.cursorSecret));
}

export interface StartOptions {
  log?: Logger;
  /**
   * 'embedded' (default, `make run`): the SQLite files of DATA_DIR and in-process messaging, whatever the URLs say.
   * 'configured': EVENTSTORE_URL / MONGO_URL / NATS_URL when set (the e2e harness on real engines, each test service
   * in its own EVENTSTORE_STREAM_PREFIX and MONGO_DB).
   */
  storeMode?: StoreMode;
  operations?: Partial<OperationsSettings>;
  /**
   * Tests only: messaging to use instead of the in-process adapter (e.g. NATS, to run the embedded service's
   * reactors on a durable queue). The service closes it.
   */
  messaging?: Messaging;
  /** Tests only: replaces the cover check's HTTPS fetcher. */
  coverChecker?: CoverChecker;
  /** Tests only: wraps the event store that every part of the service uses (fault injection). */
  eventStore?: (opened: EventStore) => EventStore;
  /**
   * Tests only: how often the projection thread looks for commits it was not told of (default 50 ms); a long one
   * leaves the wake-ups of this process's appends as the only thing that moves it.
   */
  projectionThreadPollMs?: number;
  /** Tests only: wraps the shopper search the query door calls (to hold searches in flight). */
  wrapSearch?: (search: ProductSearch) => ProductSearch;
  /** Tests only: where `CLOCK=manual` starts (default: now), so that a restart resumes the time it left. */
  clockAt?: Date;
}

export async function startService(config: Config, options: StartOptions = {}): Promise<Service> {
  fs.mkdirSync(config.dataDir, { recursive: true });
  const log =
    options.log ?? pino({ level: config.logLevel, redact: ['req.headers.authorization', 'api_key', 'token'] });
  // A manual clock in shared memory: the projection thread stamps parked events with it.
  const clock: Clock = config.clock === 'manual' ? new SharedMemoryClock(options.clockAt) : systemClock;
  const mode = options.storeMode ?? 'embedded';
  const choice = adapterChoice(config, mode);
  // The projections run on a thread of their own when both stores are SQLite files it can open too, unless a test
  // wraps the event store (fault injection must reach every reader of the log).
  const thread =
    config.projectionThread && choice.events === 'sqlite' && choice.reads === 'sqlite' && !options.eventStore
      ? new ProjectionThread(sqliteFiles(config), clock, log, options.projectionThreadPollMs)
      : undefined;
  const stores = await openStores(config, mode, clock, log, { yieldWhenBusy: thread !== undefined });
  const events = options.eventStore ? options.eventStore(stores.events) : stores.events;
  if (options.messaging) await stores.messaging.close(); // the in-process one, replaced
  const messaging = options.messaging ?? stores.messaging;
  // Operations: every read-model access goes through `operations.reads` (projection generations).
  const operations = await Operations.create({
    log,
    clock,
    events,
    reads: stores.reads,
    history: stores.history,
    messaging,
    projectors: PROJECTORS,
    settings: options.operations ?? {},
    ...(thread ? { gate: thread.gate } : {}),
  });
  const reads = operations.reads;
  await reads.ensureCollections(ALL_COLLECTIONS());

  const keyCache = new KeyCache();
  const onError = (err: unknown) => operations.subscriptionStopped('projections', err);
  let runner: LiveProjections;
  let stopWaking = (): void => undefined;
  if (thread) {
    await thread.start({ onCommitted: (partner) => partner && keyCache.clear(), onError });
    if (events instanceof SqliteEventStore) stopWaking = events.onAppended(() => thread.notifyAppended());
    runner = thread;
  } else {
    const inProcess = new ProjectionRunner(events, operations.runnerReads, PROJECTORS, {
      ...operations.runnerHooks(),
      onError,
      onCommitted: (batch) => {
        if (batch.some((e) => categoryOf(e.stream) === CATEGORIES.partner)) keyCache.clear();
      },
    });
    await inProcess.start();
    runner = inProcess;
  }
  // A rebuilt partners projection serves from a new generation: forget what the old one answered.
  await messaging.subscribe(GENERATION_SWITCHED, () => keyCache.clear());
  const waitForPosition = (position: number, timeoutMs: number) => runner.waitFor(position, timeoutMs);
  // The shopper search on threads of its own (SEARCH_THREADS) when the read models are an SQLite file
  // (infra/sqlite/search-reader.ts).
  const searchReader =
    stores.reads instanceof SqliteReadStore && config.searchThreads > 0
      ? startSearchReader(stores.reads.file, reads, config.searchThreads, { held: config.searchHeldOffers })
      : null;
  const threaded = searchReader?.search;
  const productSearch = options.wrapSearch ? options.wrapSearch(threaded ?? searchHere(reads)) : threaded;
  const parts: DoorParts = {
    config,
    log,
    clock,
    events,
    reads,
    messaging,
    waitForPosition,
    keyCache,
    ...(productSearch ? { productSearch } : {}),
  };
  const deps = commandDeps(parts);
  const reactors = await startReactors(REACTORS, {
    ...parts,
    deps,
    recordHistory: operations.recordHistory,
    metrics: operations.metrics,
    subscriptionStopped: operations.subscriptionStopped,
    ...(options.coverChecker ? { coverChecker: options.coverChecker } : {}),
  });

  const commandApp = buildCommandApp(parts, deps, WRITE_ROUTES, operations.doorHooks('command'));
  const queryApp = buildQueryApp(parts, READ_ROUTES, resolveCursorSecret(config), operations.doorHooks('query'));
  const adminToken = resolveAdminToken(config); // before anything answers: whoever sees the API up finds the token
  const gateway = await listen(
    gatewayHandler(
      commandApp.callback(),
      queryApp.callback(),
      buildRedirector(parts, deps, operations.metrics.redirectAnswered),
    ),
    config.port,
    config.host,
    config.apiBaseUrl,
  );

  const adminApp = buildAdminApp(parts, deps, adminToken, {
    onClockMoved: () => reactors.clockMoved(),
    extend: operations.adminRoutes,
  });
  const admin = await listen(
    operations.adminHandler(adminApp.callback(), config.apiBaseUrl),
    config.adminPort,
    config.adminHost,
    config.apiBaseUrl,
  );

  let closed = false;
  return {
    config,
    clock,
    log,
    events,
    reads,
    messaging,
    runner,
    gateway,
    admin,
    adminToken,
    operations,
    async close() {
      if (closed) return;
      closed = true;
      operations.beginShutdown();
      const drainMs = Math.floor(operations.settings.shutdownTimeoutMs * 0.6);
      await Promise.all([drainServer(gateway, drainMs), drainServer(admin, drainMs)]);
      await reactors.stop();
      await operations.close();
      stopWaking();
      await runner.stop();
      await messaging.close();
      await events.close();
      await searchReader?.close();
      await reads.close();
    },
  };
}
