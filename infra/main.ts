/** `make run`: the whole service on the embedded default, in one process. */
import fs from 'node:fs';
import os from 'node:os';
import { loadConfig, ConfigError } from './config.js';
import { adminTokenFile, startService } from './service.js';
import { portOf } from './gateway.js';
import { loadOperationsSettings } from './ops/settings.js';
import { exitGracefully } from './ops/shutdown.js';
import { niceFrom, setThreadNice } from './thread-priority.js';
import { listenFailureLine, warnTestOnlyCoverSettings } from './startup-notices.js';

async function main(): Promise<void> {
  let config;
  let operations;
  try {
    config = loadConfig();
    operations = loadOperationsSettings();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const processNice = os.getPriority(process.pid);
  let service;
  try {
    service = await startService(config, { operations });
  } catch (err) {
    const line = listenFailureLine(err, config);
    if (line === undefined) throw err;
    process.stderr.write(`${line}\n`);
    process.exit(1);
  }
  warnTestOnlyCoverSettings(service.log, config);
  // The event loop before the service's other threads, after the search threads (EVENT_LOOP_NICE). Threads take the
  // nice value of the thread that starts them: the service's own threads have started, and libuv's pool (file and
  // image work) starts with its first task, so one is run first.
  await fs.promises.access(config.dataDir);
  const refused = setThreadNice(niceFrom(processNice, config.eventLoopNice));
  if (refused)
    service.log.warn(
      { nice: config.eventLoopNice, reason: refused },
      'EVENT_LOOP_NICE could not be set: the event loop keeps the process priority',
    );
  const api = `http://${config.host}:${portOf(service.gateway)}/v1`;
  const admin = `http://${config.adminHost}:${portOf(service.admin)}/admin/v1`;
  const token = config.adminToken ? 'ADMIN_TOKEN' : adminTokenFile(config); // where it is, never the token
  service.log.info(
    { api, admin, admin_token: token, data_dir: config.dataDir, clock: config.clock },
    'partner commerce service started',
  );
  // One plain line for the person who typed `make run` (the log above is JSON for machines).
  process.stderr.write(
    `ready: partner API ${api} · admin API ${admin} · admin token in ${token} · guide ${api}/guia.md\n`,
  );
  exitGracefully(service, { timeoutMs: service.operations.settings.shutdownTimeoutMs });
}

void main();
