/**
 * `make run-topology`: the distributed topology on one machine, in one command (infra/topology/launcher.ts):
 * nats-server with JetStream, two command-api, two query-api, one projections process and nginx as the gateway.
 * It reads the variables `make run` reads: PORT / HOST are the gateway's, ADMIN_PORT / ADMIN_HOST the admin API's
 * (the projections process serves it), DATA_DIR the shared SQLite files (unless EVENTSTORE_URL / MONGO_URL are
 * set), plus `NATS_URL` (then no nats-server is started), `COMMAND_REPLICAS` / `QUERY_REPLICAS` (default 2).
 *
 * Every child's lines are forwarded, prefixed by their source (`[command-api.1] …`, `[nginx] …`); once all are
 * ready it prints `ready: partner API … · admin API … · admin token in …` on stderr (as make run does) and one JSON
 * line `{"ready":"topology",…}` with every pid it started on stdout.
 *
 * Supervision: a service process that exits without being asked to is logged and started again on its ports
 * (0.5 s later); a role that exits 6 times within a minute, or nginx or nats-server exiting, stops everything and
 * the launcher exits 1. SIGTERM or SIGINT (Ctrl-C) stops every process it started — nginx, the doors, the
 * projections process, nats-server, in that order — and it exits 0. The children run in their own process groups,
 * so a terminal's Ctrl-C reaches only the launcher, which stops them in order.
 */
import { ConfigError, loadConfig } from '../config.js';
import { adminTokenFile } from '../data-dir-secret.js';
import { loadOperationsSettings } from '../../ops/settings.js';
import { DEFAULT_RESTART_POLICY, launchTopology, type Topology } from '../../topology/launcher.js';

function replicas(name: string): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return 2;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 16) {
    process.stderr.write(`invalid configuration:\n  - ${name} must be an integer from 1 to 16, got "${raw}"\n`);
    process.exit(2);
  }
  return n;
}

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
    loadOperationsSettings();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const commandReplicas = replicas('COMMAND_REPLICAS');
  const queryReplicas = replicas('QUERY_REPLICAS');
  const say = (line: string) => process.stderr.write(`[topology] ${line}\n`);

  let topology: Topology | undefined;
  let launching = true;
  let signalWhileLaunching: string | undefined;
  let exiting = false;
  const shutdown = async (code: number, why: string) => {
    if (launching) {
      signalWhileLaunching ??= why; // stopped once the launch has returned (or failed)
      return;
    }
    if (exiting) return;
    exiting = true;
    say(`stopping (${why})`);
    try {
      await topology?.stop();
    } catch (err) {
      say(`stop failed: ${(err as Error).message}`);
      code = 1;
    }
    say('stopped');
    process.exit(code);
  };
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => void shutdown(0, signal));

  try {
    topology = await launchTopology({
      env: process.env,
      commandReplicas,
      queryReplicas,
      detached: true,
      restart: DEFAULT_RESTART_POLICY,
      onLine: (source, stream, line) =>
        (stream === 'stdout' ? process.stdout : process.stderr).write(`[${source}] ${line}\n`),
      onUnexpectedExit: (source, code, signal) => say(`${source} exited unexpectedly (${code ?? signal})`),
      onFatal: (reason) => void shutdown(1, reason),
    });
  } catch (err) {
    say(`could not start: ${(err as Error).message}`);
    process.exit(signalWhileLaunching ? 0 : 1);
  } finally {
    launching = false;
  }
  if (signalWhileLaunching) return shutdown(0, signalWhileLaunching);
  const api = `${topology.gateway}/v1`;
  const admin = topology.adminUrl();
  const token = config.adminToken ? 'ADMIN_TOKEN' : adminTokenFile(config); // where it is, never the token
  const pids = {
    launcher: process.pid,
    nats: topology.nats.pid ?? null,
    nginx: topology.nginxPid() ?? null,
    services: Object.fromEntries(topology.children.map((c) => [c.label, c.proc.pid ?? null])),
  };
  process.stdout.write(
    `${JSON.stringify({ ready: 'topology', port: Number(new URL(topology.gateway).port), admin_port: Number(new URL(admin).port), nats_url: topology.nats.url, data_dir: topology.dataDir, pids })}\n`,
  );
  process.stderr.write(
    `ready: partner API ${api} · admin API ${admin} · admin token in ${token} · guide ${api}/guia.md · ` +
      `${commandReplicas} command-api, ${queryReplicas} query-api, 1 projections, nginx, ${topology.nats.pid ? 'nats-server' : `NATS at ${topology.nats.url}`}\n`,
  );
}

void main();
