/**
 * The command-api process: the command door (every method but GET/HEAD, behind the gateway) and the operator's
 * admin API on ADMIN_PORT. Any number of replicas: decisions are guarded by expected revisions, the rate brake
 * and read-your-writes numbers are shared through NATS, and each commit to the SQLite event store is announced
 * (`appended`) so the projections process picks it up at once. The admin API waits for the projections process
 * through `PositionWatcher`.
 */
import { PROJECTORS, WRITE_ROUTES, ALL_COLLECTIONS, resolveAdminToken } from '../service.js';
import { closeServer, listen } from '../gateway.js';
import { openStores, requireSharedMessaging } from '../wiring/stores.js';
import { PositionWatcher, announceAppends, clockMovedElsewhere } from '../wiring/cross-process.js';
import { buildAdminApp, buildCommandApp, commandDeps, type DoorParts } from '../wiring/doors.js';
import { processClock } from '../wiring/shared-clock.js';
import { runProcess } from './process.js';

runProcess('command-api', async ({ config, log }) => {
  requireSharedMessaging(config);
  const clock = processClock(config);
  const stores = await openStores(config, 'configured', clock);
  const { events, reads, messaging } = stores;
  await reads.ensureCollections(ALL_COLLECTIONS());
  const stopAnnouncing = announceAppends(events, messaging);
  const watcher = await PositionWatcher.start({ reads, messaging, checkpointNames: PROJECTORS.map((p) => p.name) });
  const parts: DoorParts = { config, log, clock, events, reads, messaging, waitForPosition: (p, t) => watcher.waitFor(p, t) };
  const deps = commandDeps(parts);
  const port = await listen(buildCommandApp(parts, deps, WRITE_ROUTES).callback(), config.port, config.host);
  const adminApp = buildAdminApp(parts, deps, resolveAdminToken(config), { onClockMoved: () => clockMovedElsewhere(messaging) });
  const admin = await listen(adminApp.callback(), config.adminPort, config.adminHost);
  return {
    servers: { port, admin },
    async close() {
      await Promise.all([closeServer(port), closeServer(admin)]);
      await watcher.close();
      stopAnnouncing();
      await stores.close();
    },
  };
});
