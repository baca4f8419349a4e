/**
 * The query-api process: the query door (GET/HEAD behind the gateway), reading the read models only. Any number
 * of replicas. Read-your-writes: the door reads the position the caller last wrote (shared through NATS) and
 * waits, bounded, until the projections process has committed it (`PositionWatcher`).
 */
import { ALL_COLLECTIONS, PROJECTORS, READ_ROUTES } from '../service.js';
import { listen } from '../gateway.js';
import { drainServer } from '../ops/shutdown.js';
import { openStores, requireSharedMessaging } from '../wiring/stores.js';
import { PositionWatcher } from '../wiring/cross-process.js';
import { buildQueryApp, type DoorParts } from '../wiring/doors.js';
import { startDoorOperations } from '../wiring/door-operations.js';
import { processClock } from '../wiring/shared-clock.js';
import { runProcess } from './process.js';

runProcess('query-api', async ({ config, settings, log }) => {
  requireSharedMessaging(config);
  const clock = processClock(config);
  const stores = await openStores(config, 'configured', clock);
  const { events, messaging } = stores;
  const ops = await startDoorOperations({ log, clock, reads: stores.reads, history: stores.history, messaging, projectors: PROJECTORS, settings });
  const reads = ops.reads;
  await reads.ensureCollections(ALL_COLLECTIONS());
  const watcher = await PositionWatcher.start({ reads, messaging, checkpointNames: PROJECTORS.map((p) => p.name) });
  const parts: DoorParts = { config, log, clock, events, reads, messaging, waitForPosition: (p, t) => watcher.waitFor(p, t) };
  const port = await listen(buildQueryApp(parts, READ_ROUTES, ops.hooks).callback(), config.port, config.host);
  return {
    servers: { port },
    async close() {
      await drainServer(port, Math.floor(settings.shutdownTimeoutMs * 0.6));
      await ops.close();
      await watcher.close();
      await stores.close();
    },
  };
});
