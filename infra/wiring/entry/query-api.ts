/**
 * The query-api process: the query door (GET/HEAD behind the gateway), reading the read models only. Any number
 * of replicas. Read-your-writes: the door reads the position the caller last wrote (shared through NATS) and
 * waits, bounded, until the projections process has committed it (`PositionWatcher`).
 */
import { listen } from '../../http/gateway.js';
import { drainServer } from '../../ops/shutdown.js';
import { buildQueryApp } from '../doors.js';
import { openDoorProcess } from './door-process.js';
import { runProcess } from './process.js';

runProcess('query-api', async ({ config, settings, log }) => {
  const door = await openDoorProcess(config, settings, log);
  const query = buildQueryApp(door.parts, door.ops.hooks).callback();
  const port = await listen(query, config.port, config.host, config.apiBaseUrl);
  return {
    servers: { port },
    async close() {
      await drainServer(port, Math.floor(settings.shutdownTimeoutMs * 0.6));
      await door.close();
    },
  };
});
