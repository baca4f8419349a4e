/**
 * The distributed topology for real: a nats-server, two command-api replicas, two query-api replicas and one
 * projections process (child processes sharing the SQLite files of one DATA_DIR), nginx as the gateway. Core
 * flows through nginx; read-your-writes across doors and replicas; one rate brake per key across both command
 * replicas; the projections process killed mid-load loses nothing and applies nothing twice.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { ProjectionRunner } from '../../projections/runner.js';
import { PROJECTORS } from '../../infra/wiring/service.js';
import { SqliteReadStore } from '../../infra/adapters/sqlite/read-store.js';
import type { Doc } from '../../shared-schema/ports/read-store.js';
import { client, productBody, storeBody, type Client, type Partner, type TestService } from '../support/service.js';
import { startMultiTestService } from '../support/topology-service.js';
import { topologyAvailable, type Child, type Topology } from '../support/topology.js';
import { until } from '../support/deadline.js';

const available = topologyAvailable();

const direct = (child: Child, key: string): Client => client(`http://127.0.0.1:${child.port}/v1`, key);

async function projectedPosition(child: Child): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${child.port}/health`).catch(() => undefined);
  if (!res || res.status !== 200) return -1;
  return ((await res.json()) as { position: number }).position;
}

if (!available.ok) {
  const line = `distributed topology e2e NOT RUN: ${available.why}`;
  process.stderr.write(`${line}\n`);
  describe('distributed topology', () => it(line));
} else {
  describe('distributed topology: 2 command-api, 2 query-api, 1 projections, NATS, nginx', function () {
    this.timeout(60_000);
    let t: TestService & { topology: Topology };
    let hub: Partner;

    before(async () => {
      t = await startMultiTestService();
      t.clock.set(new Date('2026-01-02T00:00:00Z'));
      hub = await t.partner({ type: 'hub' }); // admin on a command replica, then the key works on a query replica
    });
    after(async () => t?.close());

    it('runs every process it says: two of each door, one projections, all answering', () => {
      expect(t.topology.replicas('command-api')).to.have.length(2);
      expect(t.topology.replicas('query-api')).to.have.length(2);
      expect(t.topology.replicas('projections')).to.have.length(1);
      expect(new Set(t.topology.children.map((c) => c.port)).size).to.equal(5);
    });

    it('serves the core flows through nginx: key by admin, store and product PUT + GET, list pages', async () => {
      expect((await hub.api.get('/me')).body.partner_id).to.equal(hub.partnerId);
      const store = await hub.api.put('/stores/loja-t', storeBody());
      expect(store.status, JSON.stringify(store.body)).to.equal(200);
      expect((await hub.api.get('/stores/loja-t')).body).to.deep.equal(store.body);
      expect((await t.approveStore(hub, 'loja-t')).body.status).to.equal('active');
      const skus = ['a-1', 'a-2', 'a-3', 'a-4', 'a-5'];
      for (const sku of skus) {
        const put = await hub.api.put(`/products/${sku}`, productBody('loja-t'));
        expect(put.status, JSON.stringify(put.body)).to.equal(200);
        const got = await hub.api.get(`/products/${sku}`);
        expect(got.status).to.equal(200);
        expect(got.body).to.include({ sku, store_id: 'loja-t' });
      }
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const page: { body: { data: { sku: string }[]; next_cursor: string | null } } = await hub.api.get(
          `/products?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        );
        seen.push(...page.body.data.map((p) => p.sku));
        cursor = page.body.next_cursor;
        pages++;
      } while (cursor && pages < 10);
      expect(seen).to.deep.equal(skus);
      expect(pages).to.equal(3);
    });

    it('keeps read-your-writes across the two doors and across replicas', async () => {
      await hub.api.put('/stores/loja-ryw', storeBody());
      const commands = t.topology.replicas('command-api');
      const queries = t.topology.replicas('query-api');
      const expectRead = async (api: Client, sku: string, amount: number, via: string) => {
        const got = await api.get(`/products/${sku}`);
        expect(got.status, `${via}: ${JSON.stringify(got.body)}`).to.equal(200);
        expect(got.body.expected_commission_cents, via).to.equal(amount);
      };
      for (let i = 1; i <= 30; i++) {
        // Through nginx: the GET lands on either query replica.
        const body = productBody('loja-ryw', {
          price_cents: 100_000,
          commission: { type: 'fixed', amount_cents: i },
          updated_at: `2026-01-01T00:00:${String(i).padStart(2, '0')}Z`,
        });
        expect((await hub.api.put('/products/ryw-gw', body)).status).to.equal(200);
        await expectRead(hub.api, 'ryw-gw', i, `gateway #${i}`);
        // Straight to the replicas: written on one command replica, read at once on the other query replica.
        const from = commands[i % 2];
        const to = queries[(i + 1) % 2];
        expect((await direct(from, hub.key).put('/products/ryw-x', body)).status).to.equal(200);
        await expectRead(direct(to, hub.key), 'ryw-x', i, `command #${from.index} → query #${to.index}, write ${i}`);
      }
    });

    it('shares the rate brake of one key between both command-api replicas', async () => {
      const p = await t.partner({ type: 'hub' });
      const [a, b] = t.topology.replicas('command-api') as [Child, Child];
      const invalid = { title: '' }; // refused with 422 after the brake: cheap, and it counts
      const burst = async (replica: Child, count: number) => {
        const api = direct(replica, p.key);
        const statuses: number[] = [];
        await Promise.all(
          Array.from({ length: 10 }, async (_, worker) => {
            for (let n = worker; n < count; n += 10)
              statuses.push((await api.put(`/products/rb-${n}`, invalid)).status);
          }),
        );
        return statuses;
      };
      const statuses = [...(await burst(a, 300)), ...(await burst(b, 300))];
      expect(statuses.filter((s) => s === 429)).to.have.length(0);
      expect(new Set(statuses)).to.deep.equal(new Set([422]));
      for (const replica of [a, b]) {
        const refused = await direct(replica, p.key).put('/products/rb-x', invalid);
        expect(refused.status, `replica ${replica.index}`).to.equal(429);
        expect(Number(refused.headers.get('retry-after'))).to.be.within(1, 60);
      }
      expect((await p.api.put('/products/rb-y', invalid)).status).to.equal(429);
      // The brake is per key: another key of the same partner still writes.
      const other = await t.key(p.partnerId, 'live');
      expect((await other.api.put('/products/rb-z', invalid)).status).to.equal(422);
    });

    it('keeps the data and the addresses when every process restarts (t.restart with TOPOLOGY=multi)', async () => {
      const ports = t.topology.children.map((c) => c.port).sort();
      const pids = t.topology.children.map((c) => c.proc.pid);
      expect((await hub.api.put('/stores/loja-r', storeBody())).status).to.equal(200);
      await t.restart();
      expect(t.topology.children.map((c) => c.port).sort()).to.deep.equal(ports);
      expect(t.topology.children.map((c) => c.proc.pid)).not.to.include.members(pids.filter((p) => p !== undefined));
      const read = await hub.api.get('/stores/loja-r');
      expect(read.status).to.equal(200);
      expect(read.body.store_id).to.equal('loja-r');
      expect((await hub.api.put('/stores/loja-r2', storeBody())).status).to.equal(200);
      expect((await hub.api.get('/stores/loja-r2')).status).to.equal(200);
    });

    it('loses nothing and applies nothing twice when the projections process is killed mid-load', async () => {
      const p = await t.partner({ type: 'hub' });
      expect((await p.api.put('/stores/loja-k', storeBody())).status).to.equal(200);
      const lastPrice = new Map<string, number>();
      const stores = ['loja-k'];
      let acked = 0;
      const WRITERS = 8;
      const WRITES = 40;
      const writer = async (w: number) => {
        for (let n = 1; n <= WRITES; n++) {
          const sku = `k-${w}-${n % 5}`;
          const price = 1000 + w * 1000 + n;
          const at = new Date(Date.UTC(2026, 0, 1, 0, 0, 0) + n * 1000).toISOString();
          const put = await p.api.put(
            `/products/${sku}`,
            productBody('loja-k', { price_cents: price, updated_at: at }),
          );
          expect(put.status, JSON.stringify(put.body)).to.equal(200);
          lastPrice.set(sku, price);
          if (w === 0 && n % 8 === 0) {
            const storeId = `loja-k${n}`;
            expect((await p.api.put(`/stores/${storeId}`, storeBody())).status).to.equal(200);
            stores.push(storeId);
          }
          acked++;
        }
      };
      const crashes = (async () => {
        for (const [killAt, restartAt] of [
          [60, 120],
          [150, 160], // the second kill falls while the new process is still catching up
        ] as const) {
          await until(() => acked >= killAt, 30_000, `${killAt} writes acknowledged`);
          const [projections] = t.topology.replicas('projections');
          await t.topology.kill(projections, 'SIGKILL');
          await until(() => acked >= restartAt, 30_000, `${restartAt} writes acknowledged`);
          await t.topology.start('projections', projections); // on its ports again (it serves the admin API)
        }
      })();
      await Promise.all([...Array.from({ length: WRITERS }, (_, w) => writer(w)), crashes]);
      expect(acked).to.equal(WRITERS * WRITES);

      const events = t.service.events;
      const head = await events.headPosition();
      const [projections] = t.topology.replicas('projections');
      await until(
        async () => (await projectedPosition(projections)) >= head,
        20_000,
        'projections caught up with the log',
      );

      // Every acknowledged write is in the read model, with the log's last position of its stream.
      const reads = t.service.reads;
      for (const [sku, price] of lastPrice) {
        const doc = await reads.get<Doc & { product: { price_cents: number }; position: number }>(
          'products',
          `live:${p.partnerId}:${sku}`,
        );
        expect(doc?.product.price_cents, sku).to.equal(price);
        const stream = await events.readStream(`product-live:${p.partnerId}:${sku}`);
        expect(doc?.position, sku).to.equal(stream[stream.length - 1].position);
      }
      const registered = (await events.readAll({ categories: ['store'] })).filter(
        (e) => e.type === 'StoreRegistered' && e.stream.startsWith(`store-live:${p.partnerId}:`),
      );
      expect(registered).to.have.length(stores.length);
      expect(await reads.count('stores', { partner_id: p.partnerId, env: 'live' })).to.equal(stores.length);
      const listed = await p.api.get('/stores?limit=100');
      expect(listed.body.data.map((s: { store_id: string }) => s.store_id).sort()).to.deep.equal([...stores].sort());

      // The read models equal a rebuild from the log by a fresh runner: nothing lost, nothing applied twice.
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-rebuild-'));
      const fresh = SqliteReadStore.open({ path: path.join(dir, 'read.db') });
      const runner = new ProjectionRunner(events, fresh, PROJECTORS);
      try {
        await runner.start();
        expect(await runner.waitFor(head, 20_000)).to.equal(true);
        for (const collection of PROJECTORS.flatMap((pr) => pr.collections.map((c) => c.name))) {
          const all = { limit: 1_000_000 };
          expect(await reads.find(collection, all), collection).to.deep.equal(await fresh.find(collection, all));
        }
      } finally {
        await runner.stop();
        await fresh.close();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}
