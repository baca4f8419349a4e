/**
 * Crash safety of the embedded default, seen from outside: the service runs as a child process, takes concurrent
 * PUT/PATCH load, is killed (SIGKILL) or stopped (SIGTERM) mid-load, and is started again on the same DATA_DIR.
 * Each SKU is written by one worker in sequence, with price = 1000 + n and updated_at increasing with n, so the n of
 * the price read back says which write the service holds.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { client, productBody, storeBody } from '../support/service.js';
import { spawnService, type ChildService } from '../support/child-service.js';
import { keepAliveAgent, send } from '../support/keep-alive.js';
import { compareWithReplay, projectionProgress } from '../support/replay.js';
import { until, within } from '../support/deadline.js';

const ADMIN_TOKEN = 'crash-test-admin-token-0123456789';
const STORE = 'loja-crash';
const SKUS = Array.from({ length: 24 }, (_, i) => `sku-${i}`);
const BASE_MS = Date.now() - 6 * 3600_000;

interface Tenant {
  partnerId: string;
  key: string;
}

/** What the parent knows of each SKU: every n sent, every n acknowledged with a 2xx. */
interface Ledger {
  sent: Map<string, number[]>;
  acked: Map<string, number[]>;
  unexpected: string[];
}

const price = (n: number) => 1000 + n;
const nOfPrice = (cents: number) => cents - 1000;
const updatedAt = (n: number) => new Date(BASE_MS + n * 1000).toISOString();

async function setUp(service: ChildService): Promise<Tenant> {
  const admin = client(service.admin, ADMIN_TOKEN);
  const partner = await admin.post('/partners', { name: 'Hub Crash', partner_type: 'hub' });
  const key = await admin.post(`/partners/${partner.body.partner_id}/keys`, { environment: 'live' });
  expect(key.status).to.equal(201);
  const api = client(service.api, key.body.api_key);
  // A 100 % commission makes expected_commission_cents equal to the price: the read-back shows which write won.
  const store = await api.put(`/stores/${STORE}`, storeBody({ default_commission: { type: 'percentage', rate: 100 } }));
  expect(store.status, JSON.stringify(store.body)).to.equal(200);
  expect((await admin.post(`/partners/${partner.body.partner_id}/live/stores/${STORE}/approve`, {})).status).to.equal(
    200,
  );
  return { partnerId: partner.body.partner_id, key: key.body.api_key };
}

/** One worker per SKU writes n = 1, 2, … (a PUT first and every third write, PATCHes between) until it is stopped or cut off. */
function startLoad(
  service: ChildService,
  tenant: Tenant,
  shouldStop: () => boolean,
): { ledger: Ledger; done: Promise<void> } {
  const agent = keepAliveAgent(SKUS.length);
  const ledger: Ledger = { sent: new Map(), acked: new Map(), unexpected: [] };
  const headers = { Authorization: `Bearer ${tenant.key}` };
  const worker = async (sku: string) => {
    const sent: number[] = [];
    const acked: number[] = [];
    ledger.sent.set(sku, sent);
    ledger.acked.set(sku, acked);
    const url = new URL(`${service.api}/products/${sku}`);
    for (let n = 1; !shouldStop(); n++) {
      const put = n === 1 || n % 3 === 0;
      const body = put
        ? productBody(STORE, {
            price_cents: price(n),
            updated_at: updatedAt(n),
            product_url: `https://shop.test/p/${sku}`,
          })
        : { price_cents: price(n), updated_at: updatedAt(n) };
      sent.push(n);
      try {
        const reply = await send(agent, url, put ? 'PUT' : 'PATCH', JSON.stringify(body), headers);
        if (reply.status >= 200 && reply.status < 300) acked.push(n);
        else {
          ledger.unexpected.push(`${sku} #${n}: ${reply.status} ${reply.text.slice(0, 200)}`);
          return;
        }
      } catch {
        return; // the connection was cut: this write is unacknowledged
      }
    }
  };
  const done = Promise.all(SKUS.map(worker)).then(() => agent.destroy());
  return { ledger, done };
}

const totalAcked = (ledger: Ledger) => [...ledger.acked.values()].reduce((sum, a) => sum + a.length, 0);

/** Every acknowledged write is there, nothing else than what was sent, as whole events; GET shows the last one. */
async function checkSurvivors(service: ChildService, dataDir: string, tenant: Tenant, ledger: Ledger): Promise<void> {
  await until(
    async () => (await projectionProgress(dataDir)).caughtUp,
    60_000,
    'projections catching up after restart',
  );
  const api = client(service.api, tenant.key);
  const admin = client(service.admin, ADMIN_TOKEN);
  for (const sku of SKUS) {
    const sent = ledger.sent.get(sku) ?? [];
    const acked = ledger.acked.get(sku) ?? [];
    const lastAcked = acked.length > 0 ? acked[acked.length - 1] : 0;
    const stream = await admin.get(`/streams/${encodeURIComponent(`product-live:${tenant.partnerId}:${sku}`)}`);
    const read = await api.get(`/products/${sku}`);
    if (stream.status === 404) {
      expect(lastAcked, `${sku}: acknowledged writes but no stream`).to.equal(0);
      expect(read.status).to.equal(404);
      continue;
    }
    expect(stream.status).to.equal(200);
    const events = stream.body.events as { revision: number; type: string; data: any }[];
    expect(
      events.map((e) => e.revision),
      sku,
    ).to.deep.equal(events.map((_, i) => i));
    const ns = events.map((e) => {
      expect(['ProductUpserted', 'ProductPatched'], sku).to.include(e.type);
      return nOfPrice(e.type === 'ProductUpserted' ? e.data.product.price_cents : e.data.patch.price_cents);
    });
    for (const n of acked) expect(ns, `${sku}: acknowledged write #${n} is missing`).to.include(n);
    for (const n of ns) expect(sent, `${sku}: write #${n} was never sent`).to.include(n);
    expect(ns, `${sku}: writes out of order`).to.deep.equal([...ns].sort((a, b) => a - b));
    expect(read.status, `${sku}: ${JSON.stringify(read.body)}`).to.equal(200);
    const shown = nOfPrice(read.body.expected_commission_cents);
    expect(shown, `${sku}: GET shows #${shown}, acknowledged up to #${lastAcked}`).to.be.at.least(lastAcked);
    expect(shown, `${sku}: GET differs from the log`).to.equal(ns[ns.length - 1]);
  }
  const report = await compareWithReplay(dataDir);
  expect(report.differences, JSON.stringify(report.differences.slice(0, 2), null, 1)).to.deep.equal([]);
  expect(report.collections.products).to.be.at.least(SKUS.length);
  for (const [name, checkpoint] of Object.entries(report.liveCheckpoints))
    expect(checkpoint, name).to.be.at.least(report.head);
}

describe('crash safety: the service as a child process, killed under load and restarted', function () {
  this.timeout(180_000);
  let dataDir: string;
  let children: ChildService[] = [];
  const env = () => ({ DATA_DIR: dataDir, ADMIN_TOKEN, CLOCK: 'manual', RATE_LIMIT_WRITES: '1000000' });
  const start = async () => {
    const child = await spawnService(env());
    children.push(child);
    return child;
  };

  beforeEach(() => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-crash-'));
  });
  afterEach(async () => {
    for (const c of children)
      if (c.process.exitCode === null && c.process.signalCode === null) c.process.kill('SIGKILL');
    await Promise.all(children.map((c) => c.exited));
    children = [];
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('after SIGKILL mid-load: every acknowledged write is there, nothing half-written, read models equal a replay', async () => {
    const first = await start();
    const tenant = await setUp(first);
    let killed = false;
    const { ledger, done } = startLoad(first, tenant, () => killed);
    const killAt = 300 + Math.floor(Math.random() * 200);
    await until(() => totalAcked(ledger) >= killAt || ledger.unexpected.length > 0, 30_000, 'load acknowledged');
    expect(ledger.unexpected).to.deep.equal([]);
    const inFlight = SKUS.filter((s) => ledger.sent.get(s)!.length > ledger.acked.get(s)!.length).length;
    first.process.kill('SIGKILL');
    killed = true;
    expect((await first.exited).signal).to.equal('SIGKILL');
    await within(done, 30_000, 'the load generator');
    expect(inFlight, 'writes in flight when the service was killed').to.be.greaterThan(0);
    expect(ledger.unexpected).to.deep.equal([]);

    const second = await start();
    await checkSurvivors(second, dataDir, tenant, ledger);
    // And the restarted service takes writes again on the same streams.
    const api = client(second.api, tenant.key);
    const next = Math.max(...ledger.sent.get(SKUS[0])!) + 1;
    const again = await api.patch(`/products/${SKUS[0]}`, { price_cents: price(next), updated_at: updatedAt(next) });
    expect(again.status, JSON.stringify(again.body)).to.equal(200);
    expect((await api.get(`/products/${SKUS[0]}`)).body.expected_commission_cents).to.equal(price(next));
  });

  it('on SIGTERM under load: exits 0 within its shutdown bound, and after a restart every acknowledged write is there', async () => {
    const first = await start();
    const tenant = await setUp(first);
    let stopping = false;
    const { ledger, done } = startLoad(first, tenant, () => stopping);
    await until(() => totalAcked(ledger) >= 200 || ledger.unexpected.length > 0, 30_000, 'load acknowledged');
    first.process.kill('SIGTERM');
    // The process measures its own bound (SHUTDOWN_TIMEOUT_MS, 10 s by default) and exits 1 past it: code 0 is the
    // proof it stopped in time. The test's wall clock would measure the machine's load as well.
    const exit = await within(first.exited, 60_000, 'exit after SIGTERM');
    stopping = true;
    await within(done, 30_000, 'the load generator');
    expect(exit, first.tail()).to.deep.equal({ code: 0, signal: null });
    expect(ledger.unexpected.filter((u) => !/ 503 /.test(u))).to.deep.equal([]);

    const second = await start();
    await checkSurvivors(second, dataDir, tenant, ledger);
  });
});
