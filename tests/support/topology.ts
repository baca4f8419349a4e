/**
 * Starts the distributed topology on loopback as child processes: a real nats-server, N command-api replicas,
 * M query-api replicas, one projections process (`node dist/infra/entry/*.js`, sharing the SQLite files of one
 * temp DATA_DIR and the manual clock file in it), and nginx rendered from infra/deploy/nginx.conf.template as
 * the gateway. Every child is stopped by `stop()` (and SIGKILLed if the test process exits first).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderNginxConf } from '../../infra/deploy/render-nginx.js';
import { startNatsServer, type NatsServer } from './nats-server.js';

export type Role = 'command-api' | 'query-api' | 'projections';

export const TOPOLOGY_ADMIN_TOKEN = 'test-admin-token-0123456789';

export interface Child {
  role: Role;
  index: number;
  proc: ChildProcess;
  port: number;
  adminPort?: number;
  /** Resolves when the process has exited. */
  exited: Promise<void>;
  /** The last lines it wrote (for failure messages). */
  output(): string;
}

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

export interface Topology {
  dataDir: string;
  nats: NatsServer;
  /** `http://127.0.0.1:<nginx port>`. */
  gateway: string;
  children: Child[];
  replicas(role: Role): Child[];
  /** The admin API, served by the projections process: `http://127.0.0.1:<port>/admin/v1`. */
  adminUrl(): string;
  /** Starts one more process of `role`; with `like`, on the ports of that (stopped) one: a restart. */
  start(role: Role, like?: Child): Promise<Child>;
  /** Stops one process: SIGTERM (graceful) or SIGKILL (crash). */
  kill(child: Child, signal?: 'SIGTERM' | 'SIGKILL'): Promise<void>;
  /** Stops every service process (gracefully), nginx and nats; removes the temp dirs. */
  stop(): Promise<void>;
  /** Stops and starts every service process again (same DATA_DIR, NATS and gateway). */
  restartServices(): Promise<void>;
}

const START_DEADLINE_MS = 20_000;
const STOP_DEADLINE_MS = 10_000;
const ROOT = fileURLToPath(new URL('../../../', import.meta.url)); // dist/tests/support → repository root
const ENTRY = (role: Role) => path.join(ROOT, 'dist', 'infra', 'entry', `${role}.js`);

export function findNginx(): string | undefined {
  const which = spawnSync('sh', ['-c', 'command -v nginx'], { encoding: 'utf8' });
  if (which.status === 0 && which.stdout.trim()) return which.stdout.trim();
  return ['/usr/sbin/nginx', '/usr/local/sbin/nginx'].find((p) => fs.existsSync(p));
}

export function topologyAvailable(): { ok: true } | { ok: false; why: string } {
  if (!findNginx()) return { ok: false, why: 'nginx is not installed (make deps-system installs it)' };
  const nats = spawnSync('sh', ['-c', 'command -v nats-server || test -x /usr/sbin/nats-server'], { encoding: 'utf8' });
  if (nats.status !== 0) return { ok: false, why: 'nats-server is not installed (make deps-system installs it)' };
  return { ok: true };
}

export async function startTopology(options: TopologyOptions = {}): Promise<Topology> {
  const nginxBinary = findNginx();
  if (!nginxBinary) throw new Error('nginx is not installed (make deps-system installs it)');
  const dataDir = options.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'pc-topology-'));
  const runDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-nginx-'));
  fs.chmodSync(runDir, 0o755); // nginx workers may run as another user than the master
  const children: Child[] = [];
  const killAll = () => {
    for (const c of children) c.proc.kill('SIGKILL');
    nginx?.kill('SIGKILL');
  };
  process.once('exit', killAll);
  let nginx: ChildProcess | undefined;
  let nats: NatsServer | undefined;
  const env: Record<string, string> = {
    DATA_DIR: dataDir,
    PORT: '0',
    ADMIN_PORT: '0',
    HOST: '127.0.0.1',
    ADMIN_HOST: '127.0.0.1',
    ADMIN_TOKEN: TOPOLOGY_ADMIN_TOKEN,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'warn',
    ...(options.env ?? {}),
  };

  const spawned: Partial<Record<Role, number>> = {};
  /** Starts a process of `role`; `like` gives the ports of a previous one to take over. */
  const spawnChild = async (role: Role, like?: Child): Promise<Child> => {
    const index = like?.index ?? (spawned[role] = (spawned[role] ?? 0) + 1) - 1;
    const ports: Record<string, string> = like ? { PORT: String(like.port), ADMIN_PORT: String(like.adminPort ?? 0) } : {};
    const proc = spawn(process.execPath, [ENTRY(role)], {
      env: { PATH: process.env.PATH ?? '', ...env, NATS_URL: nats!.url, ...ports },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let tail = '';
    const keep = (chunk: Buffer) => {
      tail = (tail + chunk.toString()).slice(-8000);
    };
    const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    const ready = new Promise<{ port: number; admin_port?: number }>((resolve, reject) => {
      let buffer = '';
      proc.stdout!.on('data', (chunk: Buffer) => {
        keep(chunk);
        buffer += chunk.toString();
        let nl: number;
        while ((nl = buffer.indexOf('\n')) >= 0) {
          const line = buffer.slice(0, nl);
          buffer = buffer.slice(nl + 1);
          if (!line.startsWith('{"ready"')) continue;
          resolve(JSON.parse(line) as { port: number; admin_port?: number });
        }
      });
      proc.stderr!.on('data', keep);
      void exited.then(() => reject(new Error(`${role} exited with ${proc.exitCode ?? proc.signalCode} before it was ready:\n${tail}`)));
    });
    let timer: NodeJS.Timeout | undefined;
    try {
      const line = await Promise.race([
        ready,
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`${role} not ready within ${START_DEADLINE_MS} ms:\n${tail}`)), START_DEADLINE_MS);
        }),
      ]);
      const child: Child = { role, index, proc, port: line.port, exited, output: () => tail };
      if (line.admin_port !== undefined) child.adminPort = line.admin_port;
      children.push(child);
      return child;
    } catch (err) {
      proc.kill('SIGKILL');
      throw err;
    } finally {
      clearTimeout(timer);
    }
  };

  const stopChild = async (child: Child, signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM') => {
    const i = children.indexOf(child);
    if (i >= 0) children.splice(i, 1);
    if (child.proc.exitCode !== null || child.proc.signalCode !== null) return;
    child.proc.kill(signal);
    const timer = setTimeout(() => child.proc.kill('SIGKILL'), STOP_DEADLINE_MS);
    await child.exited;
    clearTimeout(timer);
  };

  const startServices = async (commandReplicas: number, queryReplicas: number) => {
    // The projections process first: it creates the read models the doors read.
    await spawnChild('projections');
    const doors: Role[] = [...Array<Role>(commandReplicas).fill('command-api'), ...Array<Role>(queryReplicas).fill('query-api')];
    await Promise.all(doors.map((role) => spawnChild(role)));
  };

  const commandReplicas = options.commandReplicas ?? 2;
  const queryReplicas = options.queryReplicas ?? 2;
  try {
    const port = await freePort();
    env.API_BASE_URL ??= `http://127.0.0.1:${port}/v1`; // what partners see: the gateway
    env.PUBLIC_BASE_URL ??= `http://127.0.0.1:${port}`;
    nats = await startNatsServer();
    await startServices(commandReplicas, queryReplicas);
    const conf = path.join(runDir, 'nginx.conf');
    const upstreams = (role: Role) => children.filter((c) => c.role === role).map((c) => `127.0.0.1:${c.port}`);
    fs.writeFileSync(
      conf,
      renderNginxConf({
        LISTEN: `127.0.0.1:${port}`,
        COMMAND_UPSTREAMS: upstreams('command-api'),
        QUERY_UPSTREAMS: upstreams('query-api'),
        RUN_DIR: runDir,
        // The gateway's own problems (413, 503) carry `${PUBLIC_BASE_URL}/v1/problemas/…`: the services' API base.
        PUBLIC_BASE_URL: env.API_BASE_URL.replace(/\/v1\/?$/, ''),
      }).replace('worker_processes auto;', `worker_processes ${options.nginxWorkers ?? 1};`),
    );
    nginx = spawn(nginxBinary, ['-e', 'stderr', '-p', runDir, '-c', conf, '-g', 'daemon off;'], { stdio: ['ignore', 'ignore', 'pipe'] });
    nginx.stderr?.resume();
    await waitForPort(port, 5000);

    let stopped: Promise<void> | undefined;
    const topology: Topology = {
      dataDir,
      nats,
      gateway: `http://127.0.0.1:${port}`,
      children,
      replicas: (role) => children.filter((c) => c.role === role),
      adminUrl() {
        const projections = children.find((c) => c.role === 'projections' && c.adminPort !== undefined);
        if (!projections) throw new Error('the projections process (which serves the admin API) is not running');
        return `http://127.0.0.1:${projections.adminPort}/admin/v1`;
      },
      start: (role, like) => spawnChild(role, like),
      kill: stopChild,
      async restartServices() {
        // Doors first, then the projections process; each comes back on its old ports, so nginx needs no reload.
        const running = [...children];
        await Promise.all(running.filter((c) => c.role !== 'projections').map((c) => stopChild(c)));
        await Promise.all(running.filter((c) => c.role === 'projections').map((c) => stopChild(c)));
        const projections = running.filter((c) => c.role === 'projections');
        await Promise.all(projections.map((c) => spawnChild(c.role, c)));
        await Promise.all(running.filter((c) => c.role !== 'projections').map((c) => spawnChild(c.role, c)));
      },
      stop() {
        stopped ??= (async () => {
          await Promise.all([...children].filter((c) => c.role !== 'projections').map((c) => stopChild(c)));
          await Promise.all([...children].map((c) => stopChild(c)));
          await stopProcess(nginx);
          await nats?.stop();
          process.removeListener('exit', killAll);
          fs.rmSync(runDir, { recursive: true, force: true });
          if (!options.dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
        })();
        return stopped;
      },
    };
    return topology;
  } catch (err) {
    killAll();
    await Promise.all(children.map((c) => c.exited));
    await nats?.stop();
    process.removeListener('exit', killAll);
    fs.rmSync(runDir, { recursive: true, force: true });
    if (!options.dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
}

async function stopProcess(proc: ChildProcess | undefined): Promise<void> {
  if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise((resolve) => proc.once('exit', resolve));
  proc.kill('SIGTERM');
  const timer = setTimeout(() => proc.kill('SIGKILL'), STOP_DEADLINE_MS);
  await exited;
  clearTimeout(timer);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const address = s.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      s.close(() => resolve(port));
    });
  });
}

async function waitForPort(port: number, deadlineMs: number): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`nginx did not listen on ${port}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
