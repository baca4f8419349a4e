/**
 * Starts the distributed topology on one machine, as child processes on loopback: a nats-server with JetStream
 * (unless NATS_URL names one), N command-api replicas, M query-api replicas, one projections process
 * (`node dist/infra/wiring/entry/*.js`) and nginx rendered from infra/topology/deploy/nginx.conf.template as the gateway.
 *
 * Used by `make run-topology` (infra/wiring/entry/topology.ts) and by the test harness (tests/support/topology.ts), so the
 * e2e suite runs against exactly what an operator starts. The environment is the one `make run` reads: PORT and
 * HOST are the gateway's (nginx), ADMIN_PORT / ADMIN_HOST the admin API's (served by the projections process),
 * DATA_DIR holds the SQLite files shared by the processes (unless EVENTSTORE_URL / MONGO_URL are set), NATS's
 * JetStream store (`DATA_DIR/nats`) and nginx's run directory (`DATA_DIR/nginx`). The service processes listen on
 * free loopback ports; a process started again (restart, supervisor) takes the ports of the one it replaces, so
 * nginx needs no reload.
 *
 * Stopping (`stop()`): nginx first (SIGQUIT: it finishes the requests in flight and takes no more), then the doors
 * (SIGTERM, graceful), the projections process, and the nats-server it started; each is SIGKILLed if it outlives
 * its bound (nginx gets SIGTERM first, so that its workers go with it).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig, type Config } from '../wiring/config.js';
import { renderNginxConf } from './deploy/render-nginx.js';
import { freePort, holdsListener } from './ports.js';

export type Role = 'command-api' | 'query-api' | 'projections';

export interface ServiceProcess {
  role: Role;
  /** 0-based, per role; kept by a restart. */
  index: number;
  /** `command-api.1`…: the prefix of its forwarded lines. */
  label: string;
  proc: ChildProcess;
  port: number;
  /** The admin API's port (projections only). */
  adminPort?: number;
  /** Resolves when the process has exited. */
  exited: Promise<void>;
  /** The last lines it wrote (for failure messages). */
  output(): string;
}

export type OutputStream = 'stdout' | 'stderr';

export interface RestartPolicy {
  /** A role whose processes exited unexpectedly this many times within `windowMs` stops the topology. */
  maxRestarts: number;
  windowMs: number;
  /** Pause before starting the replacement. */
  delayMs: number;
}

export const DEFAULT_RESTART_POLICY: RestartPolicy = { maxRestarts: 5, windowMs: 60_000, delayMs: 500 };

export interface LaunchOptions {
  /** The environment of every service process, read like `make run` reads it (PORT: the gateway's; 0 = free port). */
  env: Readonly<Record<string, string | undefined>>;
  commandReplicas?: number;
  queryReplicas?: number;
  /** nginx `worker_processes` (the template's own value is `auto`). */
  nginxWorkers?: number | 'auto';
  /** JetStream's store directory. Default `DATA_DIR/nats`. */
  natsStoreDir?: string;
  /** nginx's pid file and temp directories. Default `DATA_DIR/nginx`. */
  nginxRunDir?: string;
  /** Start every child in its own process group (a terminal's Ctrl-C then reaches only the launcher, which stops them in order). */
  detached?: boolean;
  /** Start a service process again, on its ports, when it exits without being asked to. Default: no restart. */
  restart?: RestartPolicy;
  /** Every line a child writes (`source`: `command-api.1`, `projections.1`, `nginx`, `nats`). */
  onLine?: (source: string, stream: OutputStream, line: string) => void;
  /** A service process exited without being asked to (before any restart). */
  onUnexpectedExit?: (source: string, code: number | null, signal: NodeJS.Signals | null) => void;
  /** The topology cannot go on (nginx or nats-server died, a role exhausted its restarts). It is already stopping. */
  onFatal?: (reason: string) => void;
}

export interface Topology {
  dataDir: string;
  nats: { url: string; /** Absent when NATS_URL named an outside server. */ pid?: number };
  /** The gateway: `http://<HOST>:<PORT>` (nginx). */
  gateway: string;
  /** The service processes running now. */
  children: ServiceProcess[];
  replicas(role: Role): ServiceProcess[];
  /** The admin API, served by the projections process: `http://<ADMIN_HOST>:<port>/admin/v1`. */
  adminUrl(): string;
  /** The pid of nginx's master process. */
  nginxPid(): number | undefined;
  /** Every process the launcher started that is running: nats-server, nginx's master, the service processes. */
  pids(): number[];
  /** Starts one more process of `role`; with `like`, on the ports of that (stopped) one: a restart. */
  start(role: Role, like?: ServiceProcess): Promise<ServiceProcess>;
  /** Stops one process: SIGTERM (graceful) or SIGKILL (crash). Not restarted by the supervisor. */
  kill(child: ServiceProcess, signal?: 'SIGTERM' | 'SIGKILL'): Promise<void>;
  /**
   * Stops and starts every service process again, on the same ports (same DATA_DIR, NATS and gateway); `whileStopped`
   * runs when all are down (a test moves the manual clock there: time that passed while the service was down).
   */
  restartServices(whileStopped?: () => unknown): Promise<void>;
  /** Stops everything it started (see the module comment). Idempotent. */
  stop(): Promise<void>;
}

const START_DEADLINE_MS = 20_000;
const STOP_DEADLINE_MS = 10_000;
const LOOPBACK = '127.0.0.1';
/** dist/infra/topology → dist/infra/wiring/entry/<role>.js */
const ENTRY = (role: Role) => fileURLToPath(new URL(`../wiring/entry/${role}.js`, import.meta.url));

export function findNginx(): string | undefined {
  const which = spawnSync('sh', ['-c', 'command -v nginx'], { encoding: 'utf8' });
  if (which.status === 0 && which.stdout.trim()) return which.stdout.trim();
  return ['/usr/sbin/nginx', '/usr/local/sbin/nginx'].find((p) => fs.existsSync(p));
}

export function findNatsServer(): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(path.delimiter), '/usr/sbin', '/usr/bin', '/usr/local/bin'];
  return dirs
    .filter(Boolean)
    .map((d) => path.join(d, 'nats-server'))
    .find((p) => fs.existsSync(p));
}

export async function launchTopology(options: LaunchOptions): Promise<Topology> {
  const nginxBinary = findNginx();
  if (!nginxBinary) throw new Error('nginx is not installed (make deps-system installs it)');
  const config = loadConfig(options.env); // throws ConfigError, as make run does
  const launch = new Launch(options, config, await planTopology(options, config));
  try {
    await launch.startNats();
    await launch.startServices();
    await launch.startGateway(nginxBinary);
  } catch (err) {
    await launch.stopAll();
    throw err;
  }
  return launch.topology();
}

/** Where everything goes: folders, the gateway's address, the environment of the service processes. */
interface Plan {
  dataDir: string;
  runDir: string;
  gatewayPort: number;
  /** The gateway's host as nginx listens on it (an IPv6 address in brackets). */
  listenHost: string;
  /** The gateway's host in its URL (loopback for a wildcard address). */
  urlHost: string;
  /** The environment of every service process (their own ports and NATS_URL are added per process). */
  env: Record<string, string>;
}

async function planTopology(options: LaunchOptions, config: Config): Promise<Plan> {
  const dataDir = config.dataDir;
  fs.mkdirSync(dataDir, { recursive: true });
  const runDir = options.nginxRunDir ?? path.join(dataDir, 'nginx');
  fs.mkdirSync(runDir, { recursive: true });
  const gatewayPort = config.port === 0 ? await freePort(config.host) : config.port;
  const urlHost = hostInUrl(config.host);
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(options.env)) if (v !== undefined) env[k] = v;
  env.DATA_DIR = dataDir;
  env.HOST = LOOPBACK; // the services listen on loopback only; partners come through nginx
  env.PORT = '0';
  env.TRUSTED_PROXY_HOPS = '1'; // nginx, the only way in: its X-Forwarded-For entry is the client's address
  env.ADMIN_HOST = config.adminHost;
  // What partners see is the gateway: the services' default base addresses are nginx's, not their own.
  env.API_BASE_URL = options.env.API_BASE_URL || `http://${urlHost}:${gatewayPort}/v1`;
  env.PUBLIC_BASE_URL = options.env.PUBLIC_BASE_URL || `http://${urlHost}:${gatewayPort}`;
  return { dataDir, runDir, gatewayPort, listenHost: bracketed(config.host), urlHost, env };
}

/** An address as a URL names it: in brackets when IPv6. */
const bracketed = (host: string) => (host.includes(':') ? `[${host}]` : host);
/** An address a client on this machine reaches a listener on: loopback for a wildcard address. */
const hostInUrl = (host: string) => (host === '0.0.0.0' || host === '::' ? LOOPBACK : bracketed(host));

/** The processes of one topology and what it takes to start, supervise and stop them. */
class Launch {
  private readonly children: ServiceProcess[] = [];
  private nginx: ChildProcess | undefined;
  private nats: ChildProcess | undefined;
  private natsUrl: string;
  private stopping = false;
  /** Processes stopped on purpose. */
  private readonly asked = new WeakSet<ChildProcess>();
  /** Processes started so far, per role (their labels' numbers). */
  private readonly spawned: Partial<Record<Role, number>> = {};
  /** When each role's processes exited unexpectedly (the restart policy's window). */
  private readonly restarts: Partial<Record<Role, number[]>> = {};
  /** Set once the topology is up: before, a failure is thrown by the start itself. */
  private fatal: ((reason: string) => void) | undefined;
  private readonly detached: boolean;
  private readonly onLine: NonNullable<LaunchOptions['onLine']>;

  constructor(
    private readonly options: LaunchOptions,
    private readonly config: Config,
    private readonly plan: Plan,
  ) {
    this.natsUrl = config.natsUrl ?? '';
    this.detached = options.detached ?? false;
    this.onLine = options.onLine ?? (() => undefined);
    process.once('exit', this.killAll);
  }

  /** The launcher itself exits: nothing it started may outlive it. */
  private readonly killAll = () => {
    for (const c of this.children) c.proc.kill('SIGKILL');
    this.nginx?.kill('SIGTERM'); // the master takes its workers with it; SIGKILL would orphan them
    this.nats?.kill('SIGKILL');
  };

  /** A nats-server of our own, unless NATS_URL names one. */
  async startNats(): Promise<void> {
    if (this.config.natsUrl) return;
    const started = await startNats(
      this.options.natsStoreDir ?? path.join(this.plan.dataDir, 'nats'),
      this.detached,
      (line, stream) => this.onLine('nats', stream, line),
    );
    this.nats = started.proc;
    this.natsUrl = started.url;
  }

  /** The projections process first (it creates the read models the doors read), then the doors of each role. */
  async startServices(): Promise<void> {
    await this.spawnService('projections');
    const doors: Role[] = [
      ...Array<Role>(this.options.commandReplicas ?? 2).fill('command-api'),
      ...Array<Role>(this.options.queryReplicas ?? 2).fill('query-api'),
    ];
    await Promise.all(doors.map((role) => this.spawnService(role)));
  }

  /** One service process of `role`, ready (its ready line read); with `like`, on that one's ports. */
  async spawnService(role: Role, like?: ServiceProcess): Promise<ServiceProcess> {
    const index = like?.index ?? (this.spawned[role] = (this.spawned[role] ?? 0) + 1) - 1;
    const label = `${role}.${index + 1}`;
    const ports: Record<string, string> = { PORT: String(like?.port ?? 0) };
    if (role === 'projections') ports.ADMIN_PORT = String(like?.adminPort ?? this.config.adminPort);
    const proc = spawn(process.execPath, [ENTRY(role)], {
      env: { ...this.plan.env, NATS_URL: this.natsUrl, ...ports },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: this.detached,
    });
    const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    let tail = '';
    const ready = new Promise<ReadyLine>((resolve, reject) => {
      pipeLines(
        proc,
        label,
        this.onLine,
        (text) => (tail = (tail + text).slice(-8000)),
        (line) => {
          if (line.startsWith('{"ready"')) resolve(JSON.parse(line) as ReadyLine);
        },
      );
      void exited.then(() =>
        reject(new Error(`${label} exited with ${proc.exitCode ?? proc.signalCode} before it was ready:\n${tail}`)),
      );
    });
    try {
      const line = await deadline(
        ready,
        START_DEADLINE_MS,
        () => `${label} not ready within ${START_DEADLINE_MS} ms:\n${tail}`,
      );
      const child: ServiceProcess = { role, index, label, proc, port: line.port, exited, output: () => tail };
      if (line.admin_port !== undefined) child.adminPort = line.admin_port;
      this.children.push(child);
      void exited.then(() => this.supervise(child));
      return child;
    } catch (err) {
      proc.kill('SIGKILL');
      await exited;
      throw err;
    }
  }

  /** A service process exited: asked to (nothing to do), or not (report; restart on its ports if so configured). */
  private supervise(child: ServiceProcess): void {
    if (this.asked.has(child.proc) || this.stopping) return;
    this.options.onUnexpectedExit?.(child.label, child.proc.exitCode, child.proc.signalCode);
    const policy = this.options.restart;
    if (!policy) return;
    const now = Date.now();
    const recent = (this.restarts[child.role] ?? []).filter((at) => now - at < policy.windowMs);
    if (recent.length >= policy.maxRestarts) {
      this.fatal?.(
        `${child.role} exited ${recent.length + 1} times within ${policy.windowMs} ms; stopping the topology`,
      );
      return;
    }
    this.restarts[child.role] = [...recent, now];
    this.forget(child);
    setTimeout(() => {
      if (this.stopping) return;
      this.onLine('launcher', 'stderr', `restarting ${child.label} on port ${child.port}`);
      this.spawnService(child.role, child).catch((err: unknown) =>
        this.fatal?.(`${child.label} could not be restarted: ${(err as Error).message}`),
      );
    }, policy.delayMs);
  }

  /** nginx from infra/topology/deploy/nginx.conf.template in front of the doors, ready once it listens. */
  async startGateway(nginxBinary: string): Promise<void> {
    const { runDir, urlHost, gatewayPort } = this.plan;
    const conf = path.join(runDir, 'nginx.conf');
    fs.writeFileSync(conf, this.renderGatewayConf());
    const gw = spawn(nginxBinary, ['-e', 'stderr', '-p', runDir, '-c', conf, '-g', 'daemon off;'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: this.detached,
    });
    this.nginx = gw;
    let nginxTail = '';
    pipeLines(gw, 'nginx', this.onLine, (text) => (nginxTail = (nginxTail + text).slice(-4000)));
    await waitForPort(urlHost.replace(/^\[|\]$/g, ''), gatewayPort, START_DEADLINE_MS, gw, () => nginxTail);
  }

  private renderGatewayConf(): string {
    const upstreams = (role: Role) => this.children.filter((c) => c.role === role).map((c) => `${LOOPBACK}:${c.port}`);
    let rendered = renderNginxConf({
      LISTEN: `${this.plan.listenHost}:${this.plan.gatewayPort}`,
      COMMAND_UPSTREAMS: upstreams('command-api'),
      QUERY_UPSTREAMS: upstreams('query-api'),
      RUN_DIR: this.plan.runDir,
      // The gateway's own problems (413, 503) carry `${PUBLIC_BASE_URL}/v1/problemas/…`: the services' API base.
      PUBLIC_BASE_URL: this.plan.env.API_BASE_URL.replace(/\/v1\/?$/, ''),
    });
    if (this.options.nginxWorkers !== undefined)
      rendered = rendered.replace('worker_processes auto;', `worker_processes ${this.options.nginxWorkers};`);
    // Started as root, nginx runs its workers as `nobody`, who may not enter DATA_DIR: they run as the launcher's user.
    if (process.getuid?.() === 0) rendered = `user root;\n${rendered}`;
    return rendered;
  }

  private forget(child: ServiceProcess): void {
    const i = this.children.indexOf(child);
    if (i >= 0) this.children.splice(i, 1);
  }

  async stopChild(child: ServiceProcess, signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM'): Promise<void> {
    this.forget(child);
    this.asked.add(child.proc);
    await stopProcess(child.proc, [signal, 'SIGKILL']);
  }

  /** nginx first (it finishes the requests in flight), then the doors, the projections process, nats-server. */
  async stopAll(): Promise<void> {
    this.stopping = true;
    await stopProcess(this.nginx, ['SIGQUIT', 'SIGTERM', 'SIGKILL']);
    await Promise.all(this.children.filter((c) => c.role !== 'projections').map((c) => this.stopChild(c)));
    await Promise.all([...this.children].map((c) => this.stopChild(c)));
    await stopProcess(this.nats, ['SIGTERM', 'SIGKILL']);
    process.removeListener('exit', this.killAll);
  }

  /** Doors first, then the projections process; each comes back on its old ports, so nginx needs no reload. */
  private async restartServices(whileStopped?: () => unknown): Promise<void> {
    const running = [...this.children];
    const doors = running.filter((c) => c.role !== 'projections');
    const projections = running.filter((c) => c.role === 'projections');
    await Promise.all(doors.map((c) => this.stopChild(c)));
    await Promise.all(projections.map((c) => this.stopChild(c)));
    await whileStopped?.();
    await Promise.all(projections.map((c) => this.spawnService(c.role, c)));
    await Promise.all(doors.map((c) => this.spawnService(c.role, c)));
  }

  /** The running topology's handle; from now on nginx or nats-server exiting, or a role out of restarts, stops it. */
  topology(): Topology {
    const { children, config, plan } = this;
    let stopped: Promise<void> | undefined;
    const running = (p: ChildProcess | undefined): p is ChildProcess =>
      p !== undefined && p.exitCode === null && p.signalCode === null;
    const topology: Topology = {
      dataDir: plan.dataDir,
      nats: this.nats?.pid !== undefined ? { url: this.natsUrl, pid: this.nats.pid } : { url: this.natsUrl },
      gateway: `http://${plan.urlHost}:${plan.gatewayPort}`,
      children,
      replicas: (role) => children.filter((c) => c.role === role),
      adminUrl() {
        const projections = children.find((c) => c.role === 'projections' && c.adminPort !== undefined);
        if (!projections) throw new Error('the projections process (which serves the admin API) is not running');
        return `http://${hostInUrl(config.adminHost)}:${projections.adminPort}/admin/v1`;
      },
      nginxPid: () => (running(this.nginx) ? this.nginx.pid : undefined),
      pids: () =>
        [this.nats, this.nginx, ...children.map((c) => c.proc)]
          .filter(running)
          .map((p) => p.pid)
          .filter((pid): pid is number => pid !== undefined),
      start: (role, like) => this.spawnService(role, like),
      kill: (child, signal) => this.stopChild(child, signal),
      restartServices: (whileStopped) => this.restartServices(whileStopped),
      stop: () => (stopped ??= this.stopAll()),
    };
    this.fatal = (reason) => {
      if (this.stopping) return;
      void topology.stop();
      this.options.onFatal?.(reason);
    };
    for (const [proc, name] of [
      [this.nginx, 'nginx'],
      [this.nats, 'nats-server'],
    ] as const) {
      proc?.once('exit', (code, signal) => {
        if (!this.stopping) this.fatal?.(`${name} exited (${code ?? signal}); stopping the topology`);
      });
    }
    return topology;
  }
}

/** The line a service process prints once it listens (infra/wiring/entry/process.ts). */
interface ReadyLine {
  port: number;
  admin_port?: number;
}

/**
 * Forwards every line `proc` writes to `onLine` as `source`, hands `keep` the raw text (a tail for failure
 * messages) and `onStdoutLine` each stdout line.
 */
function pipeLines(
  proc: ChildProcess,
  source: string,
  onLine: (source: string, stream: OutputStream, line: string) => void,
  keep: (text: string) => void,
  onStdoutLine?: (line: string) => void,
): void {
  for (const stream of ['stdout', 'stderr'] as const) {
    const readable = proc[stream];
    if (!readable) continue;
    let buffer = '';
    readable.on('data', (chunk: Buffer) => {
      const text = chunk.toString();
      keep(text);
      buffer += text;
      let nl: number;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        if (stream === 'stdout') onStdoutLine?.(line);
        onLine(source, stream, line);
      }
    });
    readable.once('end', () => {
      if (buffer) onLine(source, stream, buffer);
      buffer = '';
    });
  }
}

/** Sends each signal in turn, waiting up to STOP_DEADLINE_MS after each for the process to exit. */
export async function stopProcess(proc: ChildProcess | undefined, signals: NodeJS.Signals[]): Promise<void> {
  if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  for (const signal of signals) {
    proc.kill(signal);
    const done = await Promise.race([exited.then(() => true), sleep(STOP_DEADLINE_MS).then(() => false)]);
    if (done) return;
  }
  await exited;
}

/**
 * A nats-server with JetStream on a free loopback port (ports.ts), storing in `storeDir`, ready once a client gets
 * its INFO line; a few ports are tried if one was taken. The caller stops it (`stopProcess`).
 */
export async function startNats(
  storeDir: string,
  detached: boolean,
  onLine: (line: string, stream: OutputStream) => void,
): Promise<{ url: string; proc: ChildProcess }> {
  const binary = findNatsServer();
  if (!binary) throw new Error('nats-server is not installed (make deps-system installs it), and NATS_URL is not set');
  fs.mkdirSync(storeDir, { recursive: true });
  // A free port can be taken between our probe and the server's bind: try a few.
  for (let attempt = 1; ; attempt++) {
    const port = await freePort(LOOPBACK);
    const proc = spawn(binary, ['-a', LOOPBACK, '-p', String(port), '-js', '-sd', storeDir], {
      stdio: ['ignore', 'pipe', 'pipe'],
      detached,
    });
    let tail = '';
    pipeLines(
      proc,
      'nats',
      (_source, stream, line) => onLine(line, stream),
      (text) => (tail = (tail + text).slice(-4000)),
    );
    try {
      await waitUntil(async () => {
        if (proc.exitCode !== null || proc.signalCode !== null)
          throw new Error(`exited with ${proc.exitCode ?? proc.signalCode}`);
        return natsGreets(port);
      }, START_DEADLINE_MS);
      return { url: `nats://${LOOPBACK}:${port}`, proc };
    } catch (err) {
      await stopProcess(proc, ['SIGTERM', 'SIGKILL']);
      if (attempt < 3) continue;
      throw new Error(`nats-server did not start: ${(err as Error).message}\n${tail}`, { cause: err });
    }
  }
}

/** A nats-server is ready when a client connection on `port` gets its INFO line. */
function natsGreets(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.createConnection({ host: LOOPBACK, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once('error', () => done(false));
    socket.once('data', (chunk: Buffer) => done(chunk.toString().startsWith('INFO')));
  });
}

async function waitForPort(
  host: string,
  port: number,
  ms: number,
  proc: ChildProcess,
  tail: () => string,
): Promise<void> {
  try {
    await waitUntil(async () => {
      if (proc.exitCode !== null || proc.signalCode !== null)
        throw new Error(`nginx exited with ${proc.exitCode ?? proc.signalCode}`);
      // nginx itself, not whatever else answers on the port (nginx retries a bind that failed, then exits).
      const held = proc.pid === undefined ? undefined : holdsListener(proc.pid, port);
      if (held !== undefined) return held;
      return new Promise<boolean>((resolve) => {
        const socket = net.connect(port, host);
        socket.once('connect', () => {
          socket.destroy();
          resolve(true);
        });
        socket.once('error', () => resolve(false));
      });
    }, ms);
  } catch (err) {
    throw new Error(`nginx did not listen on ${host}:${port}: ${(err as Error).message}\n${tail()}`, { cause: err });
  }
}

async function waitUntil(condition: () => Promise<boolean>, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > end) throw new Error(`not ready after ${ms} ms`);
    await sleep(25);
  }
}

async function deadline<T>(promise: Promise<T>, ms: number, message: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(message())), ms))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
