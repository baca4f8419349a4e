/** `make run`: the whole service on the embedded default, in one process. */
import { loadConfig, ConfigError } from '../config.js';
import { adminTokenFile, startService } from '../service.js';
import { portOf } from '../../http/gateway.js';
import { loadOperationsSettings } from '../../ops/settings.js';
import { exitGracefully } from '../../ops/shutdown.js';
import { listenFailureLine, warnTestOnlyCoverSettings } from '../startup-notices.js';

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
