/**
 * Wires the whole service on the embedded default, in one process: SQLite event and read stores in DATA_DIR,
 * in-process messaging, the projection runner, the command and query doors behind the in-process gateway, and the
 * admin API. It composes the very parts the separate processes of the distributed topology start (infra/wiring/:
 * the registry of projectors, reactors and collections, the doors, the operator surface). Everything is passed in;
 * nothing is a module-level singleton.
 */
import fs from 'node:fs';
import type http from 'node:http';
import pino, { type Logger } from 'pino';
import { systemClock, type Clock } from '../../shared-schema/ports/clock.js';
import { categoryOf, type EventStore } from '../../shared-schema/ports/event-store.js';
import { CATEGORIES } from '../../shared-schema/domain/streams.js';
import type { ReadStore } from '../../shared-schema/ports/read-store.js';
import type { Messaging } from '../../shared-schema/ports/messaging.js';
import type { CoverChecker } from '../../shared-schema/ports/cover-checker.js';
import { ProjectionRunner, type LiveProjections } from '../../projections/runner.js';
import { GENERATION_SWITCHED } from '../../projections/generations.js';
import { adapterChoice, openStores, sqliteFiles, type StoreMode, type Stores } from './stores.js';
import { ProjectionThread } from './projection-thread.js';
import { SharedMemoryClock } from './shared-clock.js';
import { SqliteEventStore } from '../adapters/sqlite/event-store.js';
import { PROJECTORS } from './registry.js';
import { SqliteReadStore } from '../adapters/sqlite/read-store.js';
import { startHeldSearch } from '../adapters/sqlite/held-search.js';
import { searchHere } from '../../query-api/public/product-search.js';
import type { ProductSearch } from '../../shared-schema/shopper/search-policy.js';
import { buildCommandApp, buildRedirector, buildQueryApp, commandDeps, KeyCache, type DoorParts } from './doors.js';
import { openOperations, serveAdmin, startAllReactors } from './operator.js';
import { gatewayHandler, listen } from '../http/gateway.js';
import type { Config } from './config.js';
import type { Operations } from '../ops/operations.js';
import type { OperationsSettings } from '../ops/settings.js';
import { drainServer } from '../ops/shutdown.js';
import { resolveAdminToken } from './data-dir-secret.js';
import type { CommandDeps } from '../../command-api/services/context.js';

export { keyLookup } from './doors.js';
export { ALL_COLLECTIONS, PROJECTORS, REACTORS } from './registry.js';
export { adminTokenFile, resolveAdminToken, resolveCursorSecret } from './data-dir-secret.js';

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

/** The log, the clock and the stores of DATA_DIR, and the projection thread when both stores are its SQLite files. */
async function openBackbone(config: Config, options: StartOptions) {
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
  return { log, clock, thread, stores, events, messaging };
}

type Backbone = Awaited<ReturnType<typeof openBackbone>>;

/**
 * The live projections, on their thread or on the event loop; a committed change of partners (or a rebuilt partners
 * projection) empties the doors' key cache.
 */
async function startProjections(b: Backbone, operations: Operations, keyCache: KeyCache) {
  const onError = (err: unknown) => operations.subscriptionStopped('projections', err);
  let runner: LiveProjections;
  if (b.thread) {
    const thread = b.thread;
    if (b.events instanceof SqliteEventStore) b.events.signalCommits(thread.commitSignal);
    keyCache.follow(() => thread.partnerUnits);
    await thread.start({ onError });
    runner = thread;
  } else {
    const inProcess = new ProjectionRunner(b.events, operations.runnerReads, PROJECTORS, {
      ...operations.runnerHooks(),
      onError,
      onCommitted: (batch) => {
        if (batch.some((e) => categoryOf(e.stream) === CATEGORIES.partner)) keyCache.clear();
      },
    });
    await inProcess.start();
    runner = inProcess;
  }
  await b.messaging.subscribe(GENERATION_SWITCHED, () => keyCache.clear());
  return runner;
}

/**
 * The shopper search: on the offers held from the read store's file when the read models are an SQLite file
 * (SEARCH_HELD_OFFERS), else the door's own search on the documents.
 */
function startSearch(config: Config, stores: Stores, reads: Operations['reads'], options: StartOptions) {
  const heldSearch =
    stores.reads instanceof SqliteReadStore && config.searchHeldOffers
      ? startHeldSearch(stores.reads.file, reads)
      : null;
  const held = heldSearch?.search;
  const productSearch = options.wrapSearch ? options.wrapSearch(held ?? searchHere(reads)) : held;
  return { heldSearch, productSearch };
}

/** Both doors and the redirector behind the in-process gateway on PORT. */
function serveGateway(parts: DoorParts, deps: CommandDeps, operations: Operations): Promise<http.Server> {
  const { config } = parts;
  const commandApp = buildCommandApp(parts, deps, operations.doorHooks('command'));
  const queryApp = buildQueryApp(parts, operations.doorHooks('query'), deps);
  const redirector = buildRedirector(parts, deps, operations.metrics.redirectAnswered);
  return listen(
    gatewayHandler(commandApp.callback(), queryApp.callback(), redirector),
    config.port,
    config.host,
    config.apiBaseUrl,
  );
}

export async function startService(config: Config, options: StartOptions = {}): Promise<Service> {
  const backbone = await openBackbone(config, options);
  const { log, clock, thread, stores, events, messaging } = backbone;
  const operations = await openOperations({
    log,
    clock,
    events,
    reads: stores.reads,
    history: stores.history,
    messaging,
    settings: options.operations ?? {},
    ...(thread ? { gate: thread.gate } : {}),
  });
  const reads = operations.reads;
  const keyCache = new KeyCache();
  const runner = await startProjections(backbone, operations, keyCache);
  const { heldSearch, productSearch } = startSearch(config, stores, reads, options);
  const parts: DoorParts = {
    config,
    log,
    clock,
    events,
    reads,
    messaging,
    waitForPosition: (position, timeoutMs) => runner.waitFor(position, timeoutMs),
    keyCache,
    ...(productSearch ? { productSearch } : {}),
  };
  const deps = commandDeps(parts);
  const reactors = await startAllReactors(parts, deps, operations, options.coverChecker);
  const adminToken = resolveAdminToken(config); // before anything answers: whoever sees the API up finds the token
  const gateway = await serveGateway(parts, deps, operations);
  const admin = await serveAdmin(parts, deps, operations, reactors, adminToken);

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
      await runner.stop();
      await messaging.close();
      await events.close();
      heldSearch?.close();
      await reads.close();
    },
  };
}
