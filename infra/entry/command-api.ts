/**
 * The command-api process: the command door (every method but GET/HEAD, behind the gateway) and the public
 * redirector (`/p/…`, a GET that records clicks; the gateway sends it here). Any number of replicas: decisions are
 * guarded by expected revisions, the rate brake and read-your-writes numbers are shared through NATS, and each
 * commit to the SQLite event store is announced (`appended`) so the projections process picks it up at once.
 *
 * With `COVER_CHECK_WORKER=on` (and the cover check on) it also consumes the cover-check work queue on NATS beside
 * the projections process, spreading the checks; the reactor that fills the queue stays in the projections process.
 */
import { ALL_COLLECTIONS, PROJECTORS, WRITE_ROUTES } from '../service.js';
import { gatewayHandler, listen } from '../gateway.js';
import { drainServer } from '../ops/shutdown.js';
import { createRedirector } from '../../command-api/redirector.js';
import { openStores, requireSharedMessaging } from '../wiring/stores.js';
import { PositionWatcher, announceAppends } from '../wiring/cross-process.js';
import { buildCommandApp, commandDeps, type DoorParts } from '../wiring/doors.js';
import { startDoorOperations } from '../wiring/door-operations.js';
import { processClock } from '../wiring/shared-clock.js';
import { startCoverWorker } from '../cover/cover-checks.js';
import { runProcess } from './process.js';

runProcess('command-api', async ({ config, settings, log }) => {
  requireSharedMessaging(config);
  const clock = processClock(config);
  const stores = await openStores(config, 'configured', clock);
  const { events, messaging } = stores;
  const ops = await startDoorOperations({ log, clock, reads: stores.reads, history: stores.history, messaging, projectors: PROJECTORS, settings });
  const reads = ops.reads;
  await reads.ensureCollections(ALL_COLLECTIONS());
  const stopAnnouncing = announceAppends(events, messaging);
  const watcher = await PositionWatcher.start({ reads, messaging, checkpointNames: PROJECTORS.map((p) => p.name) });
  const parts: DoorParts = { config, log, clock, events, reads, messaging, waitForPosition: (p, t) => watcher.waitFor(p, t) };
  const deps = commandDeps(parts);
  const command = buildCommandApp(parts, deps, WRITE_ROUTES, ops.hooks).callback();
  const port = await listen(gatewayHandler(command, command, createRedirector(deps, log)), config.port, config.host);
  const coverWorker = config.coverCheckWorker ? await startCoverWorker({ config, deps, log }) : null;
  return {
    servers: { port },
    async close() {
      await drainServer(port, Math.floor(settings.shutdownTimeoutMs * 0.6));
      await coverWorker?.stop();
      await ops.close();
      await watcher.close();
      stopAnnouncing();
      await stores.close();
    },
  };
});
