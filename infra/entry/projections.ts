/**
 * The projections process: the projectors (one runner, one subscription to the log) and the reactors. Exactly
 * ONE replica: each projector is the single writer of its read model. It resumes from the checkpoints saved with
 * each batch, so a crash (even SIGKILL) loses nothing and applies nothing twice. After each committed batch it
 * announces the position (`projected`) for the doors' read-your-writes and the admin API.
 *
 * On PORT it serves `GET /health`: `{"role":"projections","position":<committed position>}` (503 once stopped).
 */
import http from 'node:http';
import { ALL_COLLECTIONS, PROJECTORS, REACTORS } from '../service.js';
import { closeServer, listen } from '../gateway.js';
import { ProjectionRunner } from '../../projections/runner.js';
import { openStores, requireSharedMessaging } from '../wiring/stores.js';
import { announceProjected, followAppends, serveClockMoved } from '../wiring/cross-process.js';
import { commandDeps } from '../wiring/doors.js';
import { startReactors } from '../wiring/reactors.js';
import { processClock } from '../wiring/shared-clock.js';
import { runProcess } from './process.js';

runProcess('projections', async ({ config, log }) => {
  requireSharedMessaging(config);
  const clock = processClock(config);
  const stores = await openStores(config, 'configured', clock);
  const { events, reads, messaging } = stores;
  let failed = false;
  const runner = new ProjectionRunner(events, reads, PROJECTORS, {
    onAdvanced: (position) => announceProjected(messaging, position),
    onError: (err) => {
      failed = true;
      log.fatal({ err }, 'projection stopped; exiting so that the supervisor restarts it from the checkpoints');
      setImmediate(() => process.exit(1)); // every committed batch holds its checkpoints: nothing to flush
    },
  });
  await reads.ensureCollections(ALL_COLLECTIONS()); // the reactors read what the doors read
  const stopFollowing = await followAppends(events, messaging);
  await runner.start();
  announceProjected(messaging, runner.position);
  const waitForPosition = (position: number, timeoutMs: number) => runner.waitFor(position, timeoutMs);
  const parts = { config, log, clock, events, reads, messaging, waitForPosition };
  const reactors = await startReactors(REACTORS, { ...parts, deps: commandDeps(parts) });
  const stopServingClock = await serveClockMoved(messaging, () => reactors.clockMoved(), (err) => log.error({ err }, 'clock move not handled'));
  let stopped = false;
  const health = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const ok = !stopped && !failed;
    res.writeHead(req.url === '/health' ? (ok ? 200 : 503) : 404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ role: 'projections', position: runner.position, ok }));
  };
  const port = await listen(health, config.port, config.host);
  return {
    servers: { port },
    async close() {
      stopped = true;
      await stopServingClock();
      await reactors.stop();
      await stopFollowing();
      await runner.stop();
      await closeServer(port);
      await stores.close();
    },
  };
});
