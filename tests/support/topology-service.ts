/**
 * `TestService` over the distributed topology (tests/support/topology.ts): what `startTestService()` returns when
 * `TOPOLOGY=multi` is set, so the HTTP end-to-end files run unchanged against two command-api replicas, two
 * query-api replicas, one projections process, NATS and nginx.
 *
 * `t.api` is the nginx gateway, `t.admin` the admin API (in the projections process), `t.clock` the manual
 * clock shared by every process through `DATA_DIR/clock`. `t.service` gives the shared stores (the SQLite files,
 * a NATS connection) and the clock; `runner` only has `waitFor` and `position` (the projections process's, as the
 * doors see it), `gateway` and `admin` only `address()`; `operations` exists only in the embedded service.
 */
import { engineEnv } from './engines.js';
import path from 'node:path';
import fs from 'node:fs';
import { removeDir } from './deadline.js';
import os from 'node:os';
import pino from 'pino';
import { loadConfig } from '../../infra/wiring/config.js';
import { PROJECTORS, type Service } from '../../infra/wiring/service.js';
import type { OperationsSettings } from '../../infra/ops/settings.js';
import { GenerationalReadStore } from '../../projections/generations.js';
import { openStores } from '../../infra/wiring/stores.js';
import { PositionWatcher, announceAppends } from '../../infra/wiring/cross-process.js';
import { CLOCK_FILE, SharedFileClock } from '../../infra/wiring/shared-clock.js';
import { client, partnerHelpers, type TestService } from './service.js';
import { TOPOLOGY_ADMIN_TOKEN, startTopology, type Topology, type TopologyOptions } from './topology.js';

/** The environment variables of the operations settings (infra/ops/settings.ts), for the processes (a test hook has none). */
const SETTING_ENV: Record<Exclude<keyof OperationsSettings, 'rebuildBeforeSwitch'>, string> = {
  readyMaxLagEvents: 'READY_MAX_LAG_EVENTS',
  rebuildPageSize: 'REBUILD_PAGE_SIZE',
  rebuildMaxEventsPerSecond: 'REBUILD_MAX_EVENTS_PER_SECOND',
  generationDropGraceMs: 'GENERATION_DROP_GRACE_MS',
  generationRefreshMs: 'GENERATION_REFRESH_MS',
  metricsToken: 'METRICS_TOKEN',
  shutdownTimeoutMs: 'SHUTDOWN_TIMEOUT_MS',
};

export async function startMultiTestService(
  env: Record<string, string> = {},
  keepDir?: string,
  options: Pick<TopologyOptions, 'nginxWorkers' | 'commandReplicas' | 'queryReplicas'> & {
    operations?: Partial<OperationsSettings>;
  } = {},
): Promise<TestService & { topology: Topology }> {
  const dataDir = keepDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'pc-test-'));
  const clock = new SharedFileClock(path.join(dataDir, CLOCK_FILE)); // before the processes: they all read this one
  const settingsEnv: Record<string, string> = {};
  for (const [name, value] of Object.entries(options.operations ?? {})) {
    if (value === undefined || typeof value === 'function') continue; // a test hook stays in this process
    settingsEnv[SETTING_ENV[name as keyof typeof SETTING_ENV]] = String(value);
  }
  // As in the embedded test service: the cover check is off unless a test turns it on (tests never leave loopback).
  const processEnv = { CLOCK: 'manual', COVER_CHECK: 'off', ...settingsEnv, ...env };
  let topology: Topology;
  try {
    topology = await startTopology({ ...options, dataDir, env: processEnv });
  } catch (err) {
    if (!keepDir) await removeDir(dataDir);
    throw err;
  }
  // The same servers and namespace as the processes (startTopology adds them for this DATA_DIR).
  const config = loadConfig({
    DATA_DIR: dataDir,
    ADMIN_TOKEN: TOPOLOGY_ADMIN_TOKEN,
    NATS_URL: topology.nats.url,
    ...engineEnv(process.env, dataDir),
    ...processEnv,
  });
  const stores = await openStores(config, 'configured', clock);
  // Tests read the read models by their logical names, in the generation the projections process serves.
  const reads = new GenerationalReadStore(stores.reads, PROJECTORS);
  await reads.load();
  await reads.follow({ messaging: stores.messaging, refreshMs: 1000 });
  // Stand-ins for what e2e files use of the embedded service's objects: the runner's committed position (seen as
  // the doors see it) and the listening addresses (`portOf(t.service.admin)`).
  const stopAnnouncing = announceAppends(stores.events, stores.messaging); // events tests append straight to the log
  const watcher = await PositionWatcher.start({
    reads,
    messaging: stores.messaging,
    checkpointNames: PROJECTORS.map((p) => p.name),
  });
  const runner = {
    waitFor: (position: number, timeoutMs: number) => watcher.waitFor(position, timeoutMs),
    get position() {
      return watcher.position;
    },
  };
  const listening = (url: () => string) => ({
    address: () => ({ address: '127.0.0.1', family: 'IPv4', port: Number(new URL(url()).port) }),
  });
  const unavailable = (what: string) => () => {
    throw new Error(`t.service.${what} exists only in the embedded service, not with TOPOLOGY=multi`);
  };
  const service = {
    config,
    clock,
    log: pino({ level: 'silent' }),
    events: stores.events,
    reads,
    messaging: stores.messaging,
    adminToken: TOPOLOGY_ADMIN_TOKEN,
    runner,
    gateway: listening(() => topology.gateway),
    admin: listening(() => topology.adminUrl()),
    async close() {
      stopAnnouncing();
      await watcher.close();
      await reads.stopFollowing();
      await stores.close();
    },
  };
  Object.defineProperty(service, 'operations', { get: unavailable('operations') });

  const t: TestService & { topology: Topology } = {
    topology,
    service: service as unknown as Service,
    api: `${topology.gateway}/v1`,
    clock,
    admin: client(topology.adminUrl(), TOPOLOGY_ADMIN_TOKEN),
    dataDir,
    ...partnerHelpers(() => t),
    async restart(at) {
      await topology.restartServices(() => {
        if (at) clock.set(at);
      });
      t.admin = client(topology.adminUrl(), TOPOLOGY_ADMIN_TOKEN);
    },
    async close() {
      await service.close();
      await topology.stop();
      if (!keepDir) await removeDir(dataDir);
    },
  };
  return t;
}
