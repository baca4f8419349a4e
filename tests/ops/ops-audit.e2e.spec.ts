import { expect } from 'chai';
import { Writable } from 'node:stream';
import { portOf } from '../../infra/http/gateway.js';
import { runOperationsCommand, type OpsIo } from '../../infra/ops/cli/operations-commands.js';
import { productBody, startTestService, storeBody, type Partner, type TestService } from '../support/service.js';

class Capture extends Writable {
  text = '';
  override _write(chunk: Buffer, _enc: BufferEncoding, done: () => void): void {
    this.text += chunk.toString('utf8');
    done();
  }
}

describe('ops commands of the operator surface', function () {
  let t: TestService;
  let hub: Partner;
  const run = async (...argv: string[]) => {
    const out = new Capture();
    const err = new Capture();
    const io: OpsIo = {
      adminUrl: `http://127.0.0.1:${portOf(t.service.admin)}`,
      token: t.service.adminToken,
      out,
      err,
      pollMs: 20,
      json: true,
    };
    const code = await runOperationsCommand(argv, io);
    return { code, out: out.text, err: err.text };
  };

  before(async () => {
    t = await startTestService();
    t.clock.set(new Date('2026-01-02T00:00:00Z'));
    hub = await t.partner({ type: 'hub' });
    expect((await hub.api.put('/stores/loja-o', storeBody())).status).to.equal(200);
    expect((await hub.api.put('/products/sku-o1', productBody('loja-o'))).status).to.equal(200);
    await t.service.operations.history.flush();
  });
  after(async () => t.close());

  it('leaves other commands to the rest of ops (null)', async () => {
    expect((await run('partners', 'create')).code).to.equal(null);
    expect((await run('streams', 'read', 'partner-x')).code).to.equal(null);
  });

  it('prints the history of a partner and refuses a missing --partner with the usage (2)', async () => {
    const r = await run('history', '--partner', hub.partnerId, '--env', 'live', '--limit', '5');
    expect(r.code).to.equal(0);
    const page = JSON.parse(r.out) as { entries: { route: string }[] };
    expect(page.entries.map((e) => e.route)).to.include.members(['/stores/:store_id', '/products/:sku']);
    const bad = await run('history');
    expect(bad.code).to.equal(2);
    expect(bad.err).to.contain('ops history --partner P');
    expect((await run('history', '--partner', hub.partnerId, '--bogus', 'x')).code).to.equal(2);
  });

  it('lists projections and rebuilds one, waiting until it has switched', async () => {
    const list = await run('projections');
    expect(list.code).to.equal(0);
    expect(JSON.parse(list.out).projections.map((p: { name: string }) => p.name)).to.include('stores');
    const r = await run('projections', 'rebuild', 'stores', '--wait');
    expect(r.code, r.err).to.equal(0);
    expect(r.err).to.match(/stores: done position \d+\/\d+/);
    const after = JSON.parse((await run('projections', 'list')).out).projections.find(
      (p: { name: string }) => p.name === 'stores',
    );
    expect(after.generation).to.equal(1);
    // An unknown name is a usage error that lists the names.
    const unknown = await run('projections', 'rebuild', 'nope');
    expect(unknown.code).to.equal(2);
    expect(unknown.err).to.contain('projections: ').and.contain('stores');
  });

  it('exports a partner’s streams as NDJSON', async () => {
    const r = await run('streams', 'export', '--partner', hub.partnerId);
    expect(r.code).to.equal(0);
    const lines = r.out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { stream: string; position: number });
    expect(lines.map((l) => l.stream)).to.include(`product-live:${hub.partnerId}:sku-o1`);
    expect((await run('streams', 'export')).code).to.equal(2);
  });

  it('verifies the read models: 0 when healthy, 1 with the differences otherwise', async () => {
    const healthy = await run('audit', 'verify');
    expect(healthy.code).to.equal(0);
    expect(healthy.err).to.match(/0 differences/);
    const id = `live:${hub.partnerId}:loja-o`;
    const store = (await t.service.reads.get('stores', id))!;
    await t.service.reads.transact((tx) => tx.put('stores', { ...store, status: 'active' }));
    try {
      const broken = await run('audit', 'verify');
      expect(broken.code).to.equal(1);
      expect(JSON.parse(broken.out).differences[0]).to.include({
        id,
        kind: 'different',
        stream: `store-live:${hub.partnerId}:loja-o`,
      });
    } finally {
      await t.service.reads.transact((tx) => tx.put('stores', store));
    }
  });

  it('shows health and metrics', async () => {
    const health = await run('health');
    expect(health.code).to.equal(0);
    expect(JSON.parse(health.out).status).to.equal('ready');
    const metrics = await run('metrics');
    expect(metrics.code).to.equal(0);
    expect(metrics.out).to.contain('pc_http_requests_total');
  });
});
