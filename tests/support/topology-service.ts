/**
 * `TestService` over the distributed topology (tests/support/topology.ts): what `startTestService()` returns when
 * `TOPOLOGY=multi` is set, so the HTTP end-to-end files run unchanged against two command-api replicas, two
 * query-api replicas, one projections process, NATS and nginx.
 *
 * `t.api` is the nginx gateway, `t.admin` the admin API of the first command-api replica, `t.clock` the manual
 * clock shared by every process through `DATA_DIR/clock`. `t.service` gives the shared stores (the SQLite files,
 * a NATS connection) and the clock; its `runner`, `gateway` and `admin` exist only in the embedded service and
 * throw here.
 */
import path from 'node:path';
import fs from 'node:fs';
import os from 'node:os';
import pino from 'pino';
import { loadConfig } from '../../infra/config.js';
import type { Service } from '../../infra/service.js';
import { openStores } from '../../infra/wiring/stores.js';
import { CLOCK_FILE, SharedFileClock } from '../../infra/wiring/shared-clock.js';
import { client, type TestService } from './service.js';
import { TOPOLOGY_ADMIN_TOKEN, startTopology, type Topology, type TopologyOptions } from './topology.js';

export async function startMultiTestService(
  env: Record<string, string> = {},
  keepDir?: string,
  options: Pick<TopologyOptions, 'nginxWorkers' | 'commandReplicas' | 'queryReplicas'> = {},
): Promise<TestService & { topology: Topology }> {
  const dataDir = keepDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'pc-test-'));
  const clock = new SharedFileClock(path.join(dataDir, CLOCK_FILE)); // before the processes: they all read this one
  // As in the embedded test service: the cover check is off unless a test turns it on (tests never leave loopback).
  const processEnv = { CLOCK: 'manual', COVER_CHECK: 'off', ...env };
  let topology: Topology;
  try {
    topology = await startTopology({ ...options, dataDir, env: processEnv });
  } catch (err) {
    if (!keepDir) fs.rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
  const config = loadConfig({ DATA_DIR: dataDir, ADMIN_TOKEN: TOPOLOGY_ADMIN_TOKEN, NATS_URL: topology.nats.url, ...processEnv });
  const stores = await openStores(config, 'configured', clock);
  const unavailable = (what: string) => () => {
    throw new Error(`t.service.${what} exists only in the embedded service, not with TOPOLOGY=multi`);
  };
  const service = {
    config,
    clock,
    log: pino({ level: 'silent' }),
    events: stores.events,
    reads: stores.reads,
    messaging: stores.messaging,
    adminToken: TOPOLOGY_ADMIN_TOKEN,
    close: () => stores.close(),
  };
  for (const what of ['runner', 'gateway', 'admin']) Object.defineProperty(service, what, { get: unavailable(what) });

  const t: TestService & { topology: Topology } = {
    topology,
    service: service as unknown as Service,
    api: `${topology.gateway}/v1`,
    clock,
    admin: client(topology.adminUrl(), TOPOLOGY_ADMIN_TOKEN),
    dataDir,
    async partner(options = {}) {
      const created = await t.admin.post('/partners', { name: options.name ?? 'Loja Teste', partner_type: options.type ?? 'hub' });
      if (created.status !== 201) throw new Error(`partner: ${created.status} ${JSON.stringify(created.body)}`);
      return t.key(created.body.partner_id, options.env ?? 'live', options.scopes);
    },
    async key(partnerId, environment, scopes) {
      const issued = await t.admin.post(`/partners/${partnerId}/keys`, scopes ? { environment, scopes } : { environment });
      if (issued.status !== 201) throw new Error(`key: ${issued.status} ${JSON.stringify(issued.body)}`);
      return { partnerId, key: issued.body.api_key, keyId: issued.body.key_id, api: client(t.api, issued.body.api_key) };
    },
    as: (key) => client(t.api, key),
    approveStore: (p, storeId, environment = 'live') => t.admin.post(`/partners/${p.partnerId}/${environment}/stores/${storeId}/approve`, {}),
    async restart() {
      await topology.restartServices();
      t.admin = client(topology.adminUrl(), TOPOLOGY_ADMIN_TOKEN);
    },
    async close() {
      await stores.close();
      await topology.stop();
      if (!keepDir) fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return t;
}
