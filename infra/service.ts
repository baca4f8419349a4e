/**
 * Wires the whole service on the embedded default, in one process: SQLite event and read stores in DATA_DIR,
 * in-process messaging, the projection runner, the command and query doors behind the in-process gateway, and the
 * admin API. Everything is passed in; nothing is a module-level singleton.
 */
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type http from 'node:http';
import pino, { type Logger } from 'pino';
import { ManualClock, systemClock, type Clock } from '../shared-schema/ports/clock.js';
import type { EventStore } from '../shared-schema/ports/event-store.js';
import type { ReadStore } from '../shared-schema/ports/read-store.js';
import type { Messaging } from '../shared-schema/ports/messaging.js';
import { IDEMPOTENCY_COLLECTION } from '../shared-schema/http/idempotency.js';
import type { KeyLookup, KeyRecord } from '../shared-schema/http/door.js';
import { AggregateRepository } from '../command-api/handler.js';
import { createCommandApi, coreWriteRoutes } from '../command-api/app.js';
import type { CommandDeps } from '../command-api/services/context.js';
import { createQueryApi, type QueryDeps } from '../query-api/app.js';
import { catalogReadRoutes } from '../query-api/routes/catalog.js';
import { ProjectionRunner } from '../projections/runner.js';
import { partnersProjector } from '../projections/projectors/partners.js';
import { storesProjector } from '../projections/projectors/stores.js';
import { productsProjector } from '../projections/projectors/products.js';
import { jobsProjector } from '../projections/projectors/jobs.js';
import { batchWriteRoutes } from '../command-api/routes/batch.js';
import { BatchRunner } from '../command-api/reactors/batch-runner.js';
import { jobsReadRoutes } from '../query-api/routes/jobs.js';
import { clicksProjector } from '../projections/projectors/clicks.js';
import { ordersProjector } from '../projections/projectors/orders.js';
import { reportProjector } from '../projections/projectors/report.js';
import { commerceWriteRoutes } from '../command-api/routes/commerce.js';
import { commerceReadRoutes } from '../query-api/routes/commerce.js';
import { createRedirector } from '../command-api/redirector.js';
import { SqliteEventStore } from './sqlite/event-store.js';
import { SqliteReadStore } from './sqlite/read-store.js';
import { InProcessMessaging } from './messaging/in-process.js';
import { createAdminApi } from './admin/app.js';
import { gatewayHandler, listen } from './gateway.js';
import { publicDocuments } from './public-documents.js';
import { startCoverChecks } from './cover/cover-checks.js';
import type { Config } from './config.js';
import { Operations } from './ops/operations.js';
import type { OperationsSettings } from './ops/settings.js';
import { drainServer } from './ops/shutdown.js';

export interface Service {
  config: Config;
  clock: Clock;
  log: Logger;
  events: EventStore;
  reads: ReadStore;
  messaging: Messaging;
  runner: ProjectionRunner;
  gateway: http.Server;
  admin: http.Server;
  adminToken: string;
  /** History, metrics, health, projection generations and rebuilds, audit (infra/ops/). */
  operations: Operations;
  close(): Promise<void>;
}

export const PROJECTORS = [partnersProjector, storesProjector, productsProjector, jobsProjector, clicksProjector, ordersProjector, reportProjector];

/** The admin token: ADMIN_TOKEN, or one generated once and kept in DATA_DIR/admin-token (mode 0600). */
export function resolveAdminToken(config: Config): string {
  if (config.adminToken) return config.adminToken;
  const file = path.join(config.dataDir, 'admin-token');
  if (fs.existsSync(file)) return fs.readFileSync(file, 'utf8').trim();
  const token = randomBytes(24).toString('base64url');
  fs.writeFileSync(file, token + '\n', { mode: 0o600 });
  return token;
}

export function keyLookup(reads: ReadStore): KeyLookup {
  return (hash) => reads.get<KeyRecord & { _id: string }>('keys', hash);
}

export async function startService(config: Config, options: { log?: Logger; operations?: Partial<OperationsSettings> } = {}): Promise<Service> {
  fs.mkdirSync(config.dataDir, { recursive: true });
  const log = options.log ?? pino({ level: config.logLevel, redact: ['req.headers.authorization', 'api_key', 'token'] });
  const clock: Clock = config.clock === 'manual' ? new ManualClock() : systemClock;
  const events = SqliteEventStore.open({ path: path.join(config.dataDir, 'events.db'), synchronous: config.sqliteSynchronous, writerThread: config.sqliteWriterThread });
  // The read store commits without fsync (WAL, synchronous NORMAL): its documents and checkpoints commit together, so
  // a power loss can only take it back to an earlier checkpoint, from which the log replays. The log keeps FULL.
  // The expiry sweep (idempotency records) reads the service clock like every other time rule.
  const storedReads = SqliteReadStore.open({ path: path.join(config.dataDir, 'read.db'), synchronous: 'NORMAL', clock });
  const messaging = new InProcessMessaging(clock);
  // Operations: every read-model access goes through `operations.reads` (projection generations).
  const operations = await Operations.create({ log, clock, events, reads: storedReads, messaging, projectors: PROJECTORS, settings: options.operations ?? {} });
  const reads = operations.reads;
  await reads.ensureCollections([IDEMPOTENCY_COLLECTION, ...PROJECTORS.flatMap((p) => p.collections)]);

  const runner = new ProjectionRunner(events, operations.runnerReads, PROJECTORS, { onError: (err) => log.error({ err }, 'projection stopped') });
  await runner.start();
  const waitForPosition = (position: number, timeoutMs: number) => runner.waitFor(position, timeoutMs);

  const deps: CommandDeps = { events, reads, messaging, clock, repo: new AggregateRepository(events), publicBaseUrl: config.publicBaseUrl };
  const batchRunner = new BatchRunner(deps, {
    log,
    onFinished: (job) =>
      void operations.recordHistory({ kind: 'batch_processed', partnerId: job.partnerId, env: job.env, refs: { job_id: job.jobId }, outcome: job.outcome }),
  });
  await batchRunner.start();
  const keys = keyLookup(reads);
  const commandApp = createCommandApi({ deps, log, baseUrl: config.apiBaseUrl, keys, routes: { ...coreWriteRoutes, ...batchWriteRoutes, ...commerceWriteRoutes }, ...operations.doorHooks('command'), rateLimits: config.rateLimits });
  const queryDeps: QueryDeps = { reads, messaging, clock, publicBaseUrl: config.publicBaseUrl, waitForPosition };
  const queryApp = createQueryApi({
    deps: queryDeps,
    log,
    baseUrl: config.apiBaseUrl,
    keys,
    rateLimits: config.rateLimits,
    routes: { ...catalogReadRoutes, ...jobsReadRoutes, ...commerceReadRoutes },
    publicDocuments: publicDocuments(config.apiBaseUrl),
    ...operations.doorHooks('query'),
  });
  const gateway = await listen(gatewayHandler(commandApp.callback(), queryApp.callback(), createRedirector(deps, log)), config.port, config.host);

  const covers = await startCoverChecks({
    config,
    deps,
    log,
    waitForPosition,
    onOutcome: operations.metrics.countCoverCheck,
    registerQueue: (depth) => operations.metrics.registerQueue('cover_check', depth),
  });
  operations.metrics.registerQueue('batch_jobs', () => batchRunner.depth);
  const adminToken = resolveAdminToken(config);
  const adminApp = createAdminApi({ deps, token: adminToken, log, clock, waitForPosition, onClockMoved: () => covers?.clockMoved(), extend: operations.adminRoutes });
  const admin = await listen(operations.adminHandler(adminApp.callback()), config.adminPort, config.adminHost);

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
      await batchRunner.stop();
      await covers?.stop();
      await operations.close();
      await runner.stop();
      await messaging.close();
      await events.close();
      await reads.close();
    },
  };
}
