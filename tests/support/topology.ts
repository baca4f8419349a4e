/**
 * The distributed topology for tests: the launcher of `make run-topology` (infra/topology/launcher.ts), started
 * in this process with a temp DATA_DIR, free loopback ports (the gateway's too), a fixed admin token and one nginx
 * worker. A real nats-server, N command-api replicas, M query-api replicas, one projections process (sharing the
 * SQLite files of DATA_DIR and the manual clock file in it), and nginx as the gateway. No supervisor restarts here:
 * a test that kills a process starts it again itself (`start(role, like)`). Every child is stopped by `stop()`
 * (and killed if the test process exits first).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { engineEnv } from './engines.js';
import {
  findNatsServer,
  findNginx,
  launchTopology,
  type Role,
  type ServiceProcess,
  type Topology as Launched,
} from '../../infra/topology/launcher.js';

export { findNginx };
export type { Role };
export type Child = ServiceProcess;

export const TOPOLOGY_ADMIN_TOKEN = 'test-admin-token-0123456789';

export interface TopologyOptions {
  commandReplicas?: number;
  queryReplicas?: number;
  /** Extra environment for every service process (CLOCK, LOG_LEVEL…). */
  env?: Record<string, string>;
  /** Reuse this DATA_DIR (not removed by `stop`). */
  dataDir?: string;
  /** nginx `worker_processes`. Default 1 (tests); the template's own value is `auto`. */
  nginxWorkers?: number | 'auto';
}

/** What the launcher returns; `stop()` also removes the temp dirs. */
export type Topology = Launched;

export function topologyAvailable(): { ok: true } | { ok: false; why: string } {
  if (!findNginx()) return { ok: false, why: 'nginx is not installed (make deps-system installs it)' };
  if (!findNatsServer()) return { ok: false, why: 'nats-server is not installed (make deps-system installs it)' };
  return { ok: true };
}

export async function startTopology(options: TopologyOptions = {}): Promise<Topology> {
  const dataDir = options.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'pc-topology-'));
  // Outside DATA_DIR: a reused DATA_DIR starts with a fresh NATS, and nginx's files are apart.
  const natsStoreDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-nats-'));
  const nginxRunDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-nginx-'));
  const cleanUp = () => {
    fs.rmSync(natsStoreDir, { recursive: true, force: true });
    fs.rmSync(nginxRunDir, { recursive: true, force: true });
    if (!options.dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  };
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    DATA_DIR: dataDir,
    PORT: '0',
    ADMIN_PORT: '0',
    HOST: '127.0.0.1',
    ADMIN_HOST: '127.0.0.1',
    ADMIN_TOKEN: TOPOLOGY_ADMIN_TOKEN,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'warn',
    ...engineEnv(process.env, dataDir), // EVENTSTORE_URL / MONGO_URL set: this topology's own namespace on them
    ...(options.env ?? {}),
  };
  let launched: Launched;
  try {
    launched = await launchTopology({
      env,
      natsStoreDir,
      nginxRunDir,
      nginxWorkers: options.nginxWorkers ?? 1,
      ...(options.commandReplicas !== undefined ? { commandReplicas: options.commandReplicas } : {}),
      ...(options.queryReplicas !== undefined ? { queryReplicas: options.queryReplicas } : {}),
      // Every line with TEST_TOPOLOGY_OUTPUT; else nginx's (its error log) and nats-server's errors, and why a
      // process went away, so that a run that failed because the topology did says so.
      onLine: (source: string, _stream: string, line: string) => {
        if (process.env.TEST_TOPOLOGY_OUTPUT || source === 'nginx' || (source === 'nats' && /\[(ERR|FTL)\]/.test(line)))
          process.stderr.write(`[${source}] ${line}\n`);
      },
      onUnexpectedExit: (source, code, signal) =>
        process.stderr.write(`[topology] ${source} exited by itself (${code ?? signal})\n`),
      onFatal: (reason) => process.stderr.write(`[topology] ${reason}\n`),
    });
  } catch (err) {
    cleanUp();
    throw err;
  }
  let stopped: Promise<void> | undefined;
  return {
    ...launched,
    children: launched.children, // the live list (the spread copies the reference)
    stop() {
      stopped ??= launched.stop().then(cleanUp);
      return stopped;
    },
  };
}
