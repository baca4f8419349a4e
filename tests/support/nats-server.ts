/**
 * Starts the real `nats-server` binary (Debian package `nats-server`, installed by
 * infra/topology/scripts/install-system-deps.sh) with JetStream on, bound to loopback, storing in a fresh temp dir: the
 * launcher's own start (infra/topology/launcher.ts `startNats`), for tests that need NATS without the topology.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startNats, stopProcess } from '../../infra/topology/launcher.js';

export interface NatsServer {
  url: string;
  stop(): Promise<void>;
}

export async function startNatsServer(): Promise<NatsServer> {
  const storeDir = mkdtempSync(join(tmpdir(), 'pc-nats-'));
  let started;
  try {
    started = await startNats(storeDir, false, () => undefined);
  } catch (err) {
    rmSync(storeDir, { recursive: true, force: true });
    throw err;
  }
  const { url, proc } = started;
  const killOnExit = () => proc.kill('SIGKILL');
  process.once('exit', killOnExit);
  let stopped: Promise<void> | undefined;
  return {
    url,
    stop: () => {
      stopped ??= (async () => {
        process.removeListener('exit', killOnExit);
        await stopProcess(proc, ['SIGTERM', 'SIGKILL']);
        rmSync(storeDir, { recursive: true, force: true });
      })();
      return stopped;
    },
  };
}
