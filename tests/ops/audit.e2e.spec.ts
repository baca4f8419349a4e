import { expect } from 'chai';
import type { Difference } from '../../projections/verify.js';
import { portOf } from '../../infra/http/gateway.js';
import { productBody, startTestService, storeBody, type Partner, type TestService } from '../support/service.js';

type Line = {
  position: number;
  stream: string;
  revision: number;
  id: string;
  type: string;
  data: Record<string, unknown>;
  metadata: Record<string, unknown>;
};

describe('audit: export and verify', function () {
  let t: TestService;
  let hub: Partner;
  let other: Partner;

  before(async () => {
    t = await startTestService();
    t.clock.set(new Date('2026-01-02T00:00:00Z'));
    hub = await t.partner({ type: 'hub' });
    await t.key(hub.partnerId, 'test');
    other = await t.partner({ type: 'store' });
    expect((await hub.api.put('/stores/loja-a', storeBody())).status).to.equal(200);
    expect((await t.approveStore(hub, 'loja-a')).status).to.equal(200);
    for (const sku of ['sku-a1', 'sku-a2', 'sku-a3'])
      expect((await hub.api.put(`/products/${sku}`, productBody('loja-a'))).status).to.equal(200);
    expect((await other.api.put('/stores/loja-o', storeBody())).status).to.equal(200);
    expect(
      await t.service.runner.waitFor(await t.service.events.headPosition(), 30_000),
      'projections caught up',
    ).to.equal(true);
  });
  after(async () => t.close());

  const exportOf = async (partnerId: string, query = '') => {
    const r = await fetch(`http://127.0.0.1:${portOf(t.service.admin)}/admin/v1/partners/${partnerId}/export${query}`, {
      headers: { Authorization: `Bearer ${t.service.adminToken}` },
    });
    expect(r.status).to.equal(200);
    expect(r.headers.get('content-type')).to.contain('application/x-ndjson');
    return (await r.text())
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as Line);
  };
  const verify = async () => {
    const r = await t.admin.post('/audit/verify', {});
    expect(r.status).to.equal(200);
    return r.body as { ok: boolean; documents_compared: number; events_replayed: number; differences: Difference[] };
  };

  it('exports one partner’s events as NDJSON in log order, with positions and metadata, and no key hash', async () => {
    const lines = await exportOf(hub.partnerId);
    const positions = lines.map((l) => l.position);
    expect(positions).to.deep.equal([...positions].sort((a, b) => a - b));
    expect(new Set(positions).size).to.equal(positions.length);
    const streams = new Set(lines.map((l) => l.stream));
    expect([...streams]).to.include.members([
      `partner-${hub.partnerId}`,
      `store-live:${hub.partnerId}:loja-a`,
      `product-live:${hub.partnerId}:sku-a1`,
    ]);
    expect([...streams].some((s) => s.includes(other.partnerId))).to.equal(false);
    expect(lines.map((l) => l.type)).to.include.members([
      'PartnerCreated',
      'KeyIssued',
      'StoreRegistered',
      'StoreApproved',
      'ProductUpserted',
    ]);
    const cnpj = lines.find((l) => l.stream.startsWith('cnpj-'));
    expect(cnpj?.data.partner_id).to.equal(hub.partnerId);
    for (const l of lines) {
      expect(l.metadata).to.have.property('recorded_at');
      expect(JSON.stringify(l.data)).not.to.contain('key_hash');
    }
    expect(lines.find((l) => l.type === 'KeyIssued')!.data).to.have.property('key_id');
  });

  it('filters the export by environment and refuses an unknown partner', async () => {
    const test = await exportOf(hub.partnerId, '?env=test');
    expect(test.every((l) => l.stream === `partner-${hub.partnerId}` || l.stream.includes('-test:'))).to.equal(true);
    expect(test.filter((l) => l.type === 'KeyIssued').map((l) => l.data.environment)).to.deep.equal(['test']);
    expect((await t.admin.get('/partners/pt_NOPE/export')).status).to.equal(404);
    expect((await t.admin.get(`/partners/${hub.partnerId}/export?env=prod`)).status).to.equal(422);
  });

  it('finds nothing to report on a healthy system', async () => {
    const report = await verify();
    expect(report.differences).to.deep.equal([]);
    expect(report.ok).to.equal(true);
    expect(report.documents_compared).to.be.at.least(2 + 3 + 3);
    expect(report.events_replayed).to.be.greaterThan(0);
  });

  it('reports a corrupted, a missing and an unexpected document with the stream that explains each', async () => {
    const reads = t.service.reads;
    const storeId = `live:${hub.partnerId}:loja-a`;
    const productId = `live:${hub.partnerId}:sku-a2`;
    const store = (await reads.get('stores', storeId))!;
    await reads.transact(async (tx) => {
      await tx.put('stores', { ...store, status: 'suspended' });
      await tx.delete('products', productId);
      await tx.put('products', { _id: 'live:pt_GHOST:sku-x', sku: 'sku-x' });
    });
    try {
      const report = await verify();
      expect(report.ok).to.equal(false);
      const byId = Object.fromEntries(report.differences.map((d) => [d.id, d]));
      expect(Object.keys(byId)).to.have.members([storeId, productId, 'live:pt_GHOST:sku-x']);
      expect(byId[storeId]).to.deep.include({
        collection: 'stores',
        kind: 'different',
        fields: ['status'],
        stream: `store-live:${hub.partnerId}:loja-a`,
      });
      expect(byId[storeId].live!.status).to.equal('suspended');
      expect(byId[storeId].expected!.status).to.equal('active');
      expect(byId[storeId].event).to.include({ type: 'StoreApproved', op: 'put' });
      expect(byId[productId]).to.deep.include({
        collection: 'products',
        kind: 'missing',
        stream: `product-live:${hub.partnerId}:sku-a2`,
        live: null,
      });
      expect(byId['live:pt_GHOST:sku-x']).to.deep.include({
        collection: 'products',
        kind: 'unexpected',
        stream: null,
        expected: null,
      });
    } finally {
      await reads.transact(async (tx) => {
        await tx.put('stores', store);
        await tx.delete('products', 'live:pt_GHOST:sku-x');
      });
      await t.admin.post('/projections/products/rebuild', {});
      await t.service.operations.rebuilder.finished('products');
    }
    expect((await verify()).differences).to.deep.equal([]);
  });
});
