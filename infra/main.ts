/** `make run`: the whole service on the embedded default, in one process. */
import { loadConfig, ConfigError } from './config.js';
import { startService } from './service.js';
import { portOf } from './gateway.js';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const service = await startService(config);
  service.log.info(
    { api: `http://${config.host}:${portOf(service.gateway)}/v1`, admin: `http://${config.adminHost}:${portOf(service.admin)}/admin/v1`, data_dir: config.dataDir, clock: config.clock },
    'partner commerce service started',
  );
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    service.log.info({ signal }, 'shutting down');
    const timer = setTimeout(() => process.exit(1), 10_000);
    timer.unref();
    await service.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

void main();
