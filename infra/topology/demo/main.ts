/**
 * `make demo`: the service on the embedded default with a partner, a live store and searchable products, in about a
 * minute, for someone who has just cloned the repository. It keeps its data in DEMO_DATA_DIR (default ./data-demo,
 * never DATA_DIR: `make run`'s ./data is not touched), listens where `make run` does (PORT 8080, ADMIN_PORT 8081),
 * starts a local HTTPS cover server with a throw-away certificate authority that the cover check is told to trust
 * (the test-only COVER_FETCH_* settings), seeds through the admin and partner APIs (infra/topology/demo/seed.ts), waits until
 * the products are searchable, prints where to look, and runs until Ctrl-C (SIGINT or SIGTERM stop both servers).
 */
import fs from 'node:fs';
import path from 'node:path';
import { ConfigError, loadConfig, type Config } from '../../wiring/config.js';
import { portOf } from '../../http/gateway.js';
import { adminTokenFile, startService, type Service } from '../../wiring/service.js';
import { loadOperationsSettings } from '../../ops/settings.js';
import { exitGracefully } from '../../ops/shutdown.js';
import { listenFailureLine, warnTestOnlyCoverSettings } from '../../wiring/startup-notices.js';
import { startCoverServer, type CoverServer } from './cover-server.js';
import { DEMO_DOMAIN, DEMO_PRODUCTS, DEMO_QUERY, seedDemo } from './seed.js';

function fail(line: string, code: number): never {
  process.stderr.write(`demo: ${line}\n`);
  process.exit(code);
}

async function main(): Promise<void> {
  const dataDir = path.resolve(process.env.DEMO_DATA_DIR || 'data-demo');
  fs.mkdirSync(dataDir, { recursive: true });
  const covers = await startCoverServer(
    [DEMO_DOMAIN],
    Object.fromEntries(Object.entries(DEMO_PRODUCTS).map(([sku, p]) => [sku, p.colour])),
  );
  // The authority is made anew at every run: nothing outlives the demo's cover server but this file.
  const caFile = path.join(dataDir, 'demo-cover-ca.pem');
  fs.writeFileSync(caFile, covers.ca);

  let config: Config;
  try {
    config = loadConfig({
      ...process.env,
      DATA_DIR: dataDir,
      LOG_LEVEL: process.env.LOG_LEVEL || 'warn', // the demo's own lines below are what a newcomer reads
      COVER_CHECK: 'on',
      COVER_FETCH_HOSTS: `${DEMO_DOMAIN}=127.0.0.1`,
      COVER_FETCH_ALLOW_PRIVATE: '1',
      COVER_FETCH_CA_FILE: caFile,
    });
  } catch (err) {
    await covers.close();
    if (err instanceof ConfigError) fail(err.message, 2);
    throw err;
  }
  let service: Service;
  try {
    service = await startService(config, { operations: loadOperationsSettings() });
  } catch (err) {
    await covers.close();
    const line = listenFailureLine(err, config);
    if (line !== undefined) fail(line, 1);
    throw err;
  }
  warnTestOnlyCoverSettings(service.log, config);
  const both = stopsBoth(service, covers);
  exitGracefully(both, { timeoutMs: service.operations.settings.shutdownTimeoutMs });

  // The service's own calls go to loopback, whatever HOST it listens on; what is printed is what shoppers are given.
  const serviceUrl = `http://127.0.0.1:${portOf(service.gateway)}`;
  const adminApi = `http://127.0.0.1:${portOf(service.admin)}/admin/v1`;
  process.stdout.write(`demo: service up (data in ${dataDir}); seeding a partner, a store and products…\n`);
  let seeded;
  try {
    seeded = await seedDemo({
      serviceUrl,
      adminApi,
      adminToken: service.adminToken,
      coverUrl: (sku) => covers.url(DEMO_DOMAIN, sku),
      keysFile: path.join(dataDir, 'demo-keys.json'),
      waitMs: 120_000,
    });
  } catch (err) {
    process.stderr.write(`demo: the seed failed: ${err instanceof Error ? err.message : String(err)}\n`);
    await both.close();
    process.exit(1);
  }
  const [firstOffer] = Object.values(seeded.offers);
  process.stdout.write(
    [
      'demo ready:',
      `  search      ${config.publicBaseUrl}/busca?q=${DEMO_QUERY}`,
      `  offer page  ${firstOffer}`,
      `  sandbox key ${seeded.testKey}   (partner ${seeded.partnerId}, test area)`,
      `  live key    ${seeded.liveKey}`,
      `  partner API ${config.apiBaseUrl} · admin API ${adminApi} · admin token in ${config.adminToken ? 'ADMIN_TOKEN' : adminTokenFile(config)}`,
      '  stop        Ctrl-C (the data stays in the data directory; `make demo` again reuses it)',
      '',
    ].join('\n'),
  );
}

/** One stop for the service and the cover server. */
function stopsBoth(service: Service, covers: CoverServer): { log: Service['log']; close(): Promise<void> } {
  return {
    log: service.log,
    close: async () => {
      await service.close();
      await covers.close();
    },
  };
}

main().catch((err: unknown) => fail(err instanceof Error ? err.message : String(err), 1));
