/** `make run`: the whole service on the embedded default, in one process. */
import { loadConfig, ConfigError } from './config.js';
import { startService } from './service.js';
import { portOf } from './gateway.js';
import { loadOperationsSettings } from './ops/settings.js';
import { exitGracefully } from './ops/shutdown.js';

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
  const service = await startService(config, { operations });
  service.log.info(
    { api: `http://${config.host}:${portOf(service.gateway)}/v1`, admin: `http://${config.adminHost}:${portOf(service.admin)}/admin/v1`, data_dir: config.dataDir, clock: config.clock },
    'partner commerce service started',
  );
  exitGracefully(service, { timeoutMs: service.operations.settings.shutdownTimeoutMs });
}

void main();
