/**
 * Parked projection events through the operator surface of the embedded service: the admin routes
 * (GET /admin/v1/projections/parked, POST /admin/v1/projections/parked/retry), `ops projections parked` and
 * `ops projections retry-parked`, readiness (200, degraded) and the gauge. The products projector of the running
 * service is made to throw on one product's events (in this process: embedded only, with the projections on the
 * event loop, PROJECTION_THREAD=off), then "fixed".
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { portOf } from '../../infra/http/gateway.js';
import { productsProjector } from '../../projections/projectors/products.js';
import { productBody, startTestService, storeBody, type Partner, type TestService } from '../support/service.js';
import { parsePrometheus } from '../support/prometheus.js';

const OPS = fileURLToPath(new URL('../../infra/ops/cli/ops.js', import.meta.url));
const FAILURE = 'cannot store field "a.b" (test fault)';

describe('parked projection events: admin API and ops command', function () {
  this.timeout(30_000);
  let t: TestService;
  let hub: Partner;
  // eslint-disable-next-line @typescript-eslint/unbound-method -- kept to be put back as it was; called as a plain function
  const original = productsProjector.apply;
  let poisoned = '';

  before(async function () {
    if (process.env.TOPOLOGY === 'multi') this.skip();
    productsProjector.apply = async (event, tx) => {
      if (poisoned !== '' && event.stream.endsWith(poisoned)) throw new Error(FAILURE);
      return original(event, tx);
    };
    t = await startTestService({ PROJECTION_THREAD: 'off' }); // the patched projector must be the one that runs
    t.clock.set(new Date('2026-01-02T00:00:00Z'));
    hub = await t.partner({ type: 'hub' });
    expect((await hub.api.put('/stores/s', storeBody())).status).to.equal(200);
  });
  after(async () => {
    productsProjector.apply = original;
    await t?.close();
  });

  const adminUrl = () => `http://127.0.0.1:${portOf(t.service.admin)}`;
  const ops = (args: string[]): Promise<{ code: number; json: any; out: string; err: string }> =>
    new Promise((resolve) => {
      const env = { PATH: process.env.PATH, ADMIN_URL: adminUrl(), ADMIN_TOKEN: t.service.adminToken };
      execFile(process.execPath, [OPS, ...args, '--json'], { env, timeout: 15_000 }, (err, stdout, stderr) => {
        let json: unknown;
        try {
          json = JSON.parse(stdout);
        } catch {
          json = undefined;
        }
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, json, out: stdout, err: stderr });
      });
    });
  const ready = async () => {
    const r = await fetch(`${adminUrl()}/admin/v1/health/ready`);
    return {
      status: r.status,
      body: (await r.json()) as {
        status: string;
        checks: { parked_events: number; projections: Record<string, string> };
      },
    };
  };
  const gauge = async () =>
    parsePrometheus(await (await fetch(`${adminUrl()}/metrics`)).text()).value('pc_projection_parked_events', {
      projection: 'products',
    });
  let parkedId = '';

  it('parks the event, answers the write, and lists it (admin API and ops)', async () => {
    poisoned = ':sku-bad';
    expect((await hub.api.put('/products/sku-bad', productBody('s'))).status).to.equal(200);
    expect((await hub.api.put('/products/sku-good', productBody('s'))).status).to.equal(200);
    expect((await hub.api.get('/products/sku-good')).status).to.equal(200);
    expect((await hub.api.get('/products/sku-bad')).status).to.equal(404);
    const [event] = await t.service.events.readStream(`product-live:${hub.partnerId}:sku-bad`);
    parkedId = `products:${event.position}`;
    const listed = await t.admin.get('/projections/parked');
    expect(listed.status).to.equal(200);
    expect(listed.body).to.deep.equal({
      total: 1,
      parked: [
        {
          id: parkedId,
          projection: 'products',
          event_id: event.id,
          stream: event.stream,
          position: event.position,
          type: 'ProductUpserted',
          error: FAILURE,
          parked_at: t.clock.now().toISOString(),
          retries: 0,
          last_retry_at: null,
        },
      ],
    });
    expect((await t.admin.get('/projections/parked?projection=stores')).body).to.deep.equal({ total: 0, parked: [] });
    expect((await t.admin.get('/projections/parked?projection=nope')).status).to.equal(404);
    const cli = await ops(['projections', 'parked', '--projection', 'products']);
    expect(cli.code, cli.err).to.equal(0);
    expect(cli.json).to.deep.equal(listed.body);
    const status = (await t.admin.get('/projections')).body.projections.find(
      (p: { name: string }) => p.name === 'products',
    );
    expect(status).to.include({ parked_events: 1, state: 'live' });
  });

  it('reports readiness 200 degraded and the gauge', async () => {
    const r = await ready();
    expect(r.status).to.equal(200);
    expect(r.body.status).to.equal('degraded');
    expect(r.body.checks.parked_events).to.equal(1);
    expect(r.body.checks.projections.products).to.equal('degraded: 1 parked event(s)');
    expect(await gauge()).to.equal(1);
  });

  it('refuses a retry body that is neither ids nor all; ops retry-parked needs ids or --all', async () => {
    for (const body of [{}, { ids: [] }, { all: false }, { ids: ['x'], all: true }, { what: 1 }]) {
      expect((await t.admin.post('/projections/parked/retry', body)).status, JSON.stringify(body)).to.equal(422);
    }
    expect((await ops(['projections', 'retry-parked'])).code).to.equal(2);
    expect((await ops(['projections', 'retry-parked', parkedId, '--all'])).code).to.equal(2);
  });

  it('a retry that fails again exits 1 and keeps it parked; after the fix ops retry-parked applies it', async () => {
    const again = await ops(['projections', 'retry-parked', parkedId]);
    expect(again.code).to.equal(1);
    expect(again.json.still_failing.map((p: { id: string; retries: number }) => [p.id, p.retries])).to.deep.equal([
      [parkedId, 1],
    ]);
    poisoned = '';
    const fixed = await ops(['projections', 'retry-parked', '--all']);
    expect(fixed.code, fixed.err).to.equal(0);
    expect(
      fixed.json.retried.map((p: { id: string; rebuild_advised: boolean }) => [p.id, p.rebuild_advised]),
    ).to.deep.equal([[parkedId, false]]);
    expect(fixed.err).to.contain('1 applied, 0 still failing, 0 not found');
    expect((await hub.api.get('/products/sku-bad')).status).to.equal(200);
    expect((await t.admin.get('/projections/parked')).body).to.deep.equal({ total: 0, parked: [] });
    const r = await ready();
    expect([r.status, r.body.status]).to.deep.equal([200, 'ready']);
    expect(await gauge()).to.equal(0);
    const unknown = await t.admin.post('/projections/parked/retry', { ids: [parkedId] });
    expect(unknown.body).to.deep.equal({ retried: [], still_failing: [], not_found: [parkedId] });
  });
});
