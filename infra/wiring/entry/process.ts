/**
 * What the three separate processes share: configuration from the environment (a bad value exits with status 2
 * and one line per problem), a pino logger tagged with the role, one JSON line on stdout once listening
 * (`{"ready":"<role>","pid":…,"port":…}`, so a supervisor or a test that started it with `PORT=0` learns the
 * port), and a graceful stop on SIGTERM/SIGINT (stop taking requests, finish what is in flight, close the stores;
 * exit 1 if that takes more than SHUTDOWN_TIMEOUT_MS, default 10 s).
 */
import type http from 'node:http';
import pino, { type Logger } from 'pino';
import { ConfigError, loadConfig, type Config } from '../config.js';
import { portOf } from '../../http/gateway.js';
import { loadOperationsSettings, type OperationsSettings } from '../../ops/settings.js';
import { listenFailureLine, warnTestOnlyCoverSettings } from '../startup-notices.js';

export type Role = 'command-api' | 'query-api' | 'projections';

export interface Running {
  /** Listening servers by name (`port` is the main one); their ports are printed on the ready line. */
  servers: { port: http.Server } & Record<string, http.Server>;
  close(): Promise<void>;
}

export interface ProcessContext {
  config: Config;
  /** Settings of the operator surface (infra/ops/settings.ts): shutdown bound, generation refresh… */
  settings: OperationsSettings;
  log: Logger;
}

export function runProcess(role: Role, start: (context: ProcessContext) => Promise<Running>): void {
  void main(role, start);
}

async function main(role: Role, start: (context: ProcessContext) => Promise<Running>): Promise<void> {
  let config: Config;
  let settings: OperationsSettings;
  try {
    config = loadConfig();
    settings = loadOperationsSettings();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${role}: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const log = pino({
    level: config.logLevel,
    base: { role, pid: process.pid },
    redact: ['req.headers.authorization', 'api_key', 'token'],
  });
  // Only a process that runs cover checks reads these settings: one warning for the topology, not one per door.
  if (role === 'projections' || (role === 'command-api' && config.coverCheckWorker))
    warnTestOnlyCoverSettings(log, config);
  let running: Running;
  try {
    running = await start({ config, settings, log });
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${role}: ${err.message}\n`);
      process.exit(2);
    }
    const line = listenFailureLine(err, config);
    if (line !== undefined) {
      process.stderr.write(`${role}: ${line}\n`);
      process.exit(1);
    }
    log.fatal({ err }, 'could not start');
    process.exit(1);
  }
  const ports: Record<string, number> = {};
  for (const [name, server] of Object.entries(running.servers))
    ports[name === 'port' ? 'port' : `${name}_port`] = portOf(server);
  process.stdout.write(`${JSON.stringify({ ready: role, pid: process.pid, ...ports })}\n`);
  log.info({ ...ports, data_dir: config.dataDir, clock: config.clock }, `${role} started`);

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    const timer = setTimeout(() => {
      log.error({ signal, timeout_ms: settings.shutdownTimeoutMs }, 'shutdown exceeded its bound; exiting');
      process.exit(1);
    }, settings.shutdownTimeoutMs);
    timer.unref();
    try {
      await running.close();
      process.exit(0);
    } catch (err) {
      log.error({ err }, 'unclean shutdown');
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}
