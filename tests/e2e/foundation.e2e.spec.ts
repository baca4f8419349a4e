import { expect } from 'chai';
import { productBody, startTestService, storeBody, type Partner, type TestService } from '../support/service.js';

describe('foundation over HTTP (embedded default)', function () {
  let t: TestService;
  let hub: Partner;

  before(async () => {
    t = await startTestService();
    t.clock.set(new Date('2026-01-02T00:00:00Z'));
    hub = await t.partner({ type: 'hub' });
  });
  after(async () => t.close());

  describe('keys and identity', () => {
    it('answers GET /me with the identity of the key', async () => {
      const me = await hub.api.get('/me');
      expect(me.status).to.equal(200);
      expect(me.body).to.deep.equal({
        partner_id: hub.partnerId,
        name: 'Loja Teste',
        partner_type: 'hub',
        environment: 'live',
        // A key issued without scopes holds the four the guide names; `promotions` only when asked (docs/adr/0028-default-key-scopes.md).
        scopes: ['catalog', 'clicks', 'conversions', 'reports'],
      });
      expect(me.headers.get('x-request-id')).to.match(/^req_/);
    });

    it('refuses a missing, unknown or revoked key with 401 and a request id', async () => {
      const missing = await t.as('').get('/me');
      expect(missing.status).to.equal(401);
      expect(missing.headers.get('content-type')).to.contain('application/problem+json');
      expect(missing.body.request_id).to.equal(missing.headers.get('x-request-id'));
      expect(missing.body.detail).to.contain('Bearer');
      expect((await t.as('ik_live_nope').get('/me')).status).to.equal(401);
      const second = await t.key(hub.partnerId, 'live');
      expect((await second.api.get('/me')).status).to.equal(200);
      expect((await hub.api.get('/me')).status).to.equal(200); // two keys valid during a rotation
      expect((await t.admin.delete(`/keys/${second.keyId}`)).status).to.equal(204);
      expect((await second.api.get('/me')).status).to.equal(401);
    });

    it('answers Phase 3 paths with 404 after authentication, 405 with Allow for a known path', async () => {
      expect((await hub.api.get('/promotions/x')).status).to.equal(404);
      expect((await hub.api.put('/coupons/x', {})).status).to.equal(404);
      expect((await t.as('bad').get('/campaigns/x')).status).to.equal(401);
      const wrong = await hub.api.post('/me', {});
      expect(wrong.status).to.equal(405);
      expect(wrong.headers.get('allow')).to.contain('GET');
    });

    it('answers 403 when the key lacks the scope of the route', async () => {
      const limited = await t.key(hub.partnerId, 'live', ['reports']);
      const r = await limited.api.get('/stores');
      expect(r.status).to.equal(403);
      expect((await limited.api.get('/me')).status).to.equal(200);
    });
  });

  describe('stores', () => {
    it('registers a store pending review with the CNPJ without punctuation', async () => {
      const r = await hub.api.put('/stores/loja-1', storeBody({ cnpj: '11.222.333/0001-81' }));
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      expect(r.body).to.include({ store_id: 'loja-1', status: 'pending_review', cnpj: '11222333000181' });
      expect(r.body.domains_approved).to.deep.equal([]);
      const read = await hub.api.get('/stores/loja-1');
      expect(read.status).to.equal(200);
      expect(read.body).to.deep.equal(r.body);
    });

    it('lists every invalid field at once and writes nothing', async () => {
      const r = await hub.api.put('/stores/loja-bad', {
        name: 'X',
        cnpj: '11.222.333/0001-82',
        website_url: 'http://x.com',
        domains: [],
        extra: 1,
      });
      expect(r.status).to.equal(422);
      const codes = r.body.errors.map((e: { field: string; code: string }) => `${e.field}:${e.code}`).sort();
      expect(codes).to.deep.equal([
        'cnpj:invalid',
        'domains:min_items',
        'extra:unknown_field',
        'name:min_length',
        'website_url:https',
      ]);
      expect((await hub.api.get('/stores/loja-bad')).status).to.equal(404);
    });

    it('refuses a CNPJ already registered to another store', async () => {
      const r = await hub.api.put('/stores/loja-2', storeBody({ cnpj: '11222333000181' }));
      expect(r.status).to.equal(422);
      expect(r.body.errors).to.deep.include({
        field: 'cnpj',
        code: 'already_registered',
        message: r.body.errors[0].message,
      });
    });

    it('refuses a second store of a direct-store partner, and ids that lower-case alike', async () => {
      const direct = await t.partner({ type: 'store' });
      expect((await direct.api.put('/stores/only', storeBody())).status).to.equal(200);
      const second = await direct.api.put('/stores/other', storeBody());
      expect(second.status).to.equal(422);
      expect(second.body.errors[0]).to.include({ field: 'store_id', code: 'single_store' });
      const clash = await hub.api.put('/stores/LOJA-1', storeBody());
      expect(clash.status).to.equal(422);
      expect(clash.body.errors[0]).to.include({ field: 'store_id', code: 'conflict' });
    });

    it('moves status only by the operator: approve, suspend, reinstate', async () => {
      expect((await t.approveStore(hub, 'loja-1')).status).to.equal(200);
      let s = await hub.api.get('/stores/loja-1');
      expect(s.body.status).to.equal('active');
      expect(s.body.domains_approved).to.deep.equal(['shop.test']);
      await t.admin.post(`/partners/${hub.partnerId}/live/stores/loja-1/suspend`, {});
      expect((await hub.api.get('/stores/loja-1')).body.status).to.equal('suspended');
      await t.admin.post(`/partners/${hub.partnerId}/live/stores/loja-1/reinstate`, {});
      s = await hub.api.get('/stores/loja-1');
      expect(s.body.status).to.equal('active');
    });
  });

  describe('products', () => {
    it('accepts a product pending, reads it back with the inherited store commission', async () => {
      await hub.api.put('/stores/loja-c', storeBody({ default_commission: { type: 'percentage', rate: 12.5 } }));
      const r = await hub.api.put('/products/sku-1', productBody('loja-c', { price_cents: 999 }));
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      expect(r.body).to.include({
        sku: 'sku-1',
        store_id: 'loja-c',
        state: 'pending',
        commission_source: 'store',
        expected_commission_cents: 125,
      });
      const read = await hub.api.get('/products/sku-1');
      expect(read.status).to.equal(200);
      expect(read.body).to.include({ state: 'pending', commission_source: 'store', expected_commission_cents: 125 });
    });

    it('ignores an older updated_at with 200 and ignored_stale, and changes nothing', async () => {
      await hub.api.put(
        '/products/sku-2',
        productBody('loja-c', { price_cents: 1000, updated_at: '2026-01-01T10:00:00Z' }),
      );
      const old = await hub.api.put(
        '/products/sku-2',
        productBody('loja-c', { price_cents: 500, updated_at: '2026-01-01T09:00:00Z' }),
      );
      expect(old.status).to.equal(200);
      expect(old.body.ignored_stale).to.equal(true);
      const read = await hub.api.get('/products/sku-2');
      expect(read.body.expected_commission_cents).to.equal(125); // 12.5 % of 1000
    });

    it('refuses a product whose store changes, even after a delete (sku_store_conflict)', async () => {
      await hub.api.put('/stores/loja-d', storeBody());
      expect((await hub.api.delete('/products/sku-1')).status).to.equal(204);
      const r = await hub.api.put('/products/sku-1', productBody('loja-d'));
      expect(r.status).to.equal(409);
      expect(r.body.errors[0]).to.include({ field: 'store_id', code: 'sku_store_conflict' });
      const removed = await hub.api.get('/products/sku-1');
      expect(removed.body.state).to.equal('removed');
    });

    it('checks the product against its store: store_not_found, domain_not_declared, image_host_not_declared', async () => {
      const r = await hub.api.put('/products/sku-x', productBody('nope'));
      expect(r.status).to.equal(422);
      expect(r.body.errors[0]).to.include({ field: 'store_id', code: 'store_not_found' });
      const hosts = await hub.api.put(
        '/products/sku-y',
        productBody('loja-c', {
          product_url: 'https://other.test/p',
          image_urls: ['https://cdn.shop.test/a.jpg', 'https://evil.test/b.jpg'],
        }),
      );
      expect(hosts.status).to.equal(422);
      expect(hosts.body.errors.map((e: { field: string; code: string }) => `${e.field}:${e.code}`)).to.deep.equal([
        'product_url:domain_not_declared',
        'image_urls[1]:image_host_not_declared',
      ]);
      expect((await hub.api.get('/products/sku-y')).status).to.equal(404);
    });

    it('PATCH changes only what it sends; commission null returns to the store rule', async () => {
      await hub.api.put(
        '/products/sku-p',
        productBody('loja-c', { price_cents: 2000, commission: { type: 'fixed', amount_cents: 300 } }),
      );
      let r = await hub.api.patch('/products/sku-p', { price_cents: 1000, updated_at: '2026-01-01T01:00:00Z' });
      expect(r.status).to.equal(200);
      expect(r.body).to.include({ commission_source: 'product', expected_commission_cents: 300 });
      r = await hub.api.patch('/products/sku-p', { commission: null, updated_at: '2026-01-01T02:00:00Z' });
      expect(r.body).to.include({ commission_source: 'store', expected_commission_cents: 125 });
      const only = await hub.api.patch('/products/sku-p', { updated_at: '2026-01-01T03:00:00Z' });
      expect(only.status).to.equal(422);
    });

    it('isolates partners and environments: another partner reads 404', async () => {
      const other = await t.partner();
      expect((await other.api.get('/products/sku-2')).status).to.equal(404);
      expect((await other.api.get('/stores/loja-c')).status).to.equal(404);
      const test = await t.key(hub.partnerId, 'test');
      expect((await test.api.get('/products/sku-2')).status).to.equal(404);
      expect((await other.api.get('/stores')).body.data).to.deep.equal([]);
    });
  });
});
