/**
 * Starts the real `nats-server` binary (Debian package `nats-server`, installed by
 * infra/scripts/install-system-deps.sh) with JetStream on, bound to loopback, storing in a fresh temp dir.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { natsGreets } from '../../infra/topology/launcher.js';
import { freePort } from '../../infra/topology/ports.js';
import { delimiter, join } from 'node:path';

const HOST = '127.0.0.1';
const START_DEADLINE_MS = 15_000;
const STOP_DEADLINE_MS = 5_000;

export interface NatsServer {
  url: string;
  stop(): Promise<void>;
}

export async function startNatsServer(): Promise<NatsServer> {
  const binary = findBinary();
  const storeDir = mkdtempSync(join(tmpdir(), 'pc-nats-'));
  try {
    // A free port can be taken between our probe and the server's bind: try a few.
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      const child = spawn(binary, ['-a', HOST, '-p', String(port), '-js', '-sd', storeDir], {
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let log = '';
      child.stderr?.on('data', (chunk: Buffer) => {
        log = (log + chunk.toString()).slice(-4000);
      });
      const killOnExit = () => child.kill('SIGKILL');
      process.once('exit', killOnExit);
      try {
        await waitUntilReady(child, port);
      } catch (err) {
        process.removeListener('exit', killOnExit);
        await stopChild(child);
        if (attempt < 3) continue;
        throw new Error(`nats-server did not start: ${(err as Error).message}\n${log}`, { cause: err });
      }
      let stopped: Promise<void> | undefined;
      return {
        url: `nats://${HOST}:${port}`,
        stop: () => {
          stopped ??= (async () => {
            process.removeListener('exit', killOnExit);
            await stopChild(child);
            rmSync(storeDir, { recursive: true, force: true });
          })();
          return stopped;
        },
      };
    }
  } catch (err) {
    rmSync(storeDir, { recursive: true, force: true });
    throw err;
  }
}

function findBinary(): string {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/sbin', '/usr/bin', '/usr/local/bin'];
  for (const dir of dirs) {
    if (dir && existsSync(join(dir, 'nats-server'))) return join(dir, 'nats-server');
  }
  throw new Error('nats-server is not installed: run `make deps-system` (infra/scripts/install-system-deps.sh)');
}

/** Ready when a client connection gets the server's INFO line. Polls until a deadline. */
async function waitUntilReady(child: ChildProcess, port: number): Promise<void> {
  const deadline = Date.now() + START_DEADLINE_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`exited with ${child.exitCode ?? child.signalCode}`);
    if (await natsGreets(port)) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`not ready after ${START_DEADLINE_MS} ms`);
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_DEADLINE_MS);
  await exited;
  clearTimeout(timer);
}
