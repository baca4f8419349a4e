/**
 * The command-api process: the command door (every method but GET/HEAD, behind the gateway) and the public
 * redirector (`/r/…`, a GET that records clicks; the gateway sends it here). Any number of replicas: decisions are
 * guarded by expected revisions, the rate brake and read-your-writes numbers are shared through NATS, and each
 * commit to the SQLite event store is announced (`appended`) so the projections process picks it up at once.
 *
 * With `COVER_CHECK_WORKER=on` (and the cover check on) it also consumes the cover-check work queue on NATS beside
 * the projections process, spreading the checks; the reactor that fills the queue stays in the projections process.
 */
import { gatewayHandler, listen } from '../../http/gateway.js';
import { drainServer } from '../../ops/shutdown.js';
import { announceAppends } from '../cross-process.js';
import { buildCommandApp, buildRedirector, commandDeps } from '../doors.js';
import { startCoverWorker } from '../../adapters/cover/cover-checks.js';
import { openDoorProcess } from './door-process.js';
import { runProcess } from './process.js';

runProcess('command-api', async ({ config, settings, log }) => {
  const door = await openDoorProcess(config, settings, log);
  const stopAnnouncing = announceAppends(door.stores.events, door.stores.messaging);
  const deps = commandDeps(door.parts);
  const command = buildCommandApp(door.parts, deps, door.ops.hooks).callback();
  const port = await listen(
    gatewayHandler(command, command, buildRedirector(door.parts, deps)),
    config.port,
    config.host,
    config.apiBaseUrl,
  );
  const coverWorker = config.coverCheckWorker ? await startCoverWorker({ config, deps, log }) : null;
  return {
    servers: { port },
    async close() {
      await drainServer(port, Math.floor(settings.shutdownTimeoutMs * 0.6));
      await coverWorker?.stop();
      stopAnnouncing();
      await door.close();
    },
  };
});
