/**
 * The projections process: the projectors (one runner, one subscription to the log), the reactors, and the
 * operator's admin API with the rest of the operator surface (generations and rebuilds, whose gate stands in front
 * of this runner; operation history; audit; health and metrics on the admin port). Exactly ONE replica: each
 * projector is the single writer of its read model. It resumes from the checkpoints saved with each batch, so a
 * crash (even SIGKILL) loses nothing and applies nothing twice. After each committed batch it announces the
 * position (`projected`) for the doors' read-your-writes.
 *
 * On PORT it serves `GET /health`: `{"role":"projections","position":<committed position>,"ok":true}` (503 once
 * stopping); the admin API is on ADMIN_PORT, as in the embedded service.
 */
import http from 'node:http';
import { resolveAdminToken } from '../data-dir-secret.js';
import { PROJECTORS } from '../registry.js';
import { listen } from '../../http/gateway.js';
import { drainServer } from '../../ops/shutdown.js';
import { ProjectionRunner } from '../../../projections/runner.js';
import { openStores, requireSharedMessaging } from '../stores.js';
import { announceProjected, followAppends } from '../cross-process.js';
import { commandDeps, type DoorParts } from '../doors.js';
import { openOperations, serveAdmin, startAllReactors } from '../operator.js';
import { processClock } from '../shared-clock.js';
import { runProcess } from './process.js';

runProcess('projections', async ({ config, settings, log }) => {
  requireSharedMessaging(config);
  const clock = processClock(config);
  const stores = await openStores(config, 'configured', clock, log);
  const { events, messaging } = stores;
  const operations = await openOperations({
    log,
    clock,
    events,
    reads: stores.reads,
    history: stores.history,
    messaging,
    settings,
  });
  const reads = operations.reads;
  let failed = false;
  const runner = new ProjectionRunner(events, operations.runnerReads, PROJECTORS, {
    ...operations.runnerHooks(),
    onAdvanced: (position) => announceProjected(messaging, position),
    onError: (err) => {
      failed = true;
      log.fatal({ err }, 'projection stopped; exiting so that the supervisor restarts it from the checkpoints');
      setImmediate(() => process.exit(1)); // every committed batch holds its checkpoints: nothing to flush
    },
  });
  const stopFollowing = await followAppends(events, messaging);
  await runner.start();
  announceProjected(messaging, runner.position);
  const waitForPosition = (position: number, timeoutMs: number) => runner.waitFor(position, timeoutMs);
  const parts: DoorParts = { config, log, clock, events, reads, messaging, waitForPosition };
  const deps = commandDeps(parts);
  const reactors = await startAllReactors(parts, deps, operations);
  const admin = await serveAdmin(parts, deps, operations, reactors, resolveAdminToken(config));
  let stopping = false;
  const health = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const ok = !stopping && !failed;
    res.writeHead(req.url === '/health' ? (ok ? 200 : 503) : 404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ role: 'projections', position: runner.position, ok }));
  };
  const port = await listen(health, config.port, config.host);
  return {
    servers: { port, admin },
    async close() {
      stopping = true;
      operations.beginShutdown();
      const drainMs = Math.floor(settings.shutdownTimeoutMs * 0.6);
      await Promise.all([drainServer(admin, drainMs), drainServer(port, drainMs)]);
      await reactors.stop();
      await operations.close();
      await stopFollowing();
      await runner.stop();
      await stores.close();
    },
  };
});
