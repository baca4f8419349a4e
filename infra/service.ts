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
import { SqliteEventStore } from './sqlite/event-store.js';
import { SqliteReadStore } from './sqlite/read-store.js';
import { InProcessMessaging } from './messaging/in-process.js';
import { createAdminApi } from './admin/app.js';
import { closeServer, gatewayHandler, listen } from './gateway.js';
import { publicDocuments } from './public-documents.js';
import type { Config } from './config.js';

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
  close(): Promise<void>;
}

export const PROJECTORS = [partnersProjector, storesProjector, productsProjector];

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

export async function startService(config: Config, options: { log?: Logger } = {}): Promise<Service> {
  fs.mkdirSync(config.dataDir, { recursive: true });
  const log = options.log ?? pino({ level: config.logLevel, redact: ['req.headers.authorization', 'api_key', 'token'] });
  const clock: Clock = config.clock === 'manual' ? new ManualClock() : systemClock;
  const events = SqliteEventStore.open({ path: path.join(config.dataDir, 'events.db'), synchronous: config.sqliteSynchronous, writerThread: config.sqliteWriterThread });
  // The read store commits without fsync (WAL, synchronous NORMAL): its documents and checkpoints commit together, so
  // a power loss can only take it back to an earlier checkpoint, from which the log replays. The log keeps FULL.
  const reads = SqliteReadStore.open({ path: path.join(config.dataDir, 'read.db'), synchronous: 'NORMAL' });
  const messaging = new InProcessMessaging(clock);
  await reads.ensureCollections([IDEMPOTENCY_COLLECTION, ...PROJECTORS.flatMap((p) => p.collections)]);

  const runner = new ProjectionRunner(events, reads, PROJECTORS, { onError: (err) => log.error({ err }, 'projection stopped') });
  await runner.start();
  const waitForPosition = (position: number, timeoutMs: number) => runner.waitFor(position, timeoutMs);

  const deps: CommandDeps = { events, reads, messaging, clock, repo: new AggregateRepository(events), publicBaseUrl: config.publicBaseUrl };
  const keys = keyLookup(reads);
  const commandApp = createCommandApi({ deps, log, baseUrl: config.apiBaseUrl, keys, routes: coreWriteRoutes, rateLimits: config.rateLimits });
  const queryDeps: QueryDeps = { reads, messaging, clock, publicBaseUrl: config.publicBaseUrl, waitForPosition };
  const queryApp = createQueryApi({
    deps: queryDeps,
    log,
    baseUrl: config.apiBaseUrl,
    keys,
    rateLimits: config.rateLimits,
    routes: catalogReadRoutes,
    publicDocuments: publicDocuments(config.apiBaseUrl),
  });
  const gateway = await listen(gatewayHandler(commandApp.callback(), queryApp.callback()), config.port, config.host);

  const adminToken = resolveAdminToken(config);
  const adminApp = createAdminApi({ deps, token: adminToken, log, clock, waitForPosition });
  const admin = await listen(adminApp.callback(), config.adminPort, config.adminHost);

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
    async close() {
      if (closed) return;
      closed = true;
      await Promise.all([closeServer(gateway), closeServer(admin)]);
      await runner.stop();
      await messaging.close();
      await events.close();
      await reads.close();
    },
  };
}
