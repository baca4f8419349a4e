import { expect } from 'chai';
import {
  nextCnpj,
  productBody,
  startTestService,
  storeBody,
  type Client,
  type Partner,
  type TestService,
} from '../support/service.js';
import { expectInvalid, expectProblem, productEvents } from '../support/e2e.js';

const MIRROR = { type: 'percentage', rate: 100 } as const;
const at = (minutes: number) => new Date(Date.parse('2026-01-01T00:00:00Z') + minutes * 60_000).toISOString();

describe('isolation between partners and environments, read-your-writes, restart (HTTP)', function () {
  let t: TestService;
  let a: Partner; // partner A, live
  let aTest: Partner; // partner A, test
  let b: Partner; // partner B, live
  let bTest: Partner; // partner B, test
  const cnpjA = nextCnpj();

  before(async () => {
    t = await startTestService();
    t.clock.set(new Date('2026-01-02T00:00:00Z'));
    a = await t.partner({ name: 'Parceiro A' });
    aTest = await t.key(a.partnerId, 'test');
    b = await t.partner({ name: 'Parceiro B' });
    bTest = await t.key(b.partnerId, 'test');
    expect(
      (
        await a.api.put(
          '/stores/loja',
          storeBody({ cnpj: cnpjA, default_commission: { type: 'fixed', amount_cents: 11 } }),
        )
      ).status,
    ).to.equal(200);
    expect(
      (await a.api.put('/products/sku-1', productBody('loja', { price_cents: 1000, commission: MIRROR }))).status,
    ).to.equal(200);
  });
  after(async () => t.close());

  const others = () =>
    [
      ['partner B live', b.api],
      ['partner B test', bTest.api],
      ['partner A test', aTest.api],
    ] as [string, Client][];

  it('answers /me with each key its own partner and environment', async () => {
    for (const [p, env, name] of [
      [a, 'live', 'Parceiro A'],
      [aTest, 'test', 'Parceiro A'],
      [b, 'live', 'Parceiro B'],
      [bTest, 'test', 'Parceiro B'],
    ] as const) {
      const me = await p.api.get('/me');
      expect(me.body).to.include({ partner_id: p.partnerId, environment: env, name });
    }
  });

  it("hints at the key's environment on a 404 only when the same partner has the id in its other environment", async () => {
    for (const path of ['/stores/loja', '/products/sku-1']) {
      const own = await aTest.api.get(path); // partner A's test key, the store and product are live
      expectProblem(own, 404);
      expect(own.body.detail, path).to.match(/exists in the live environment: the API key decides the environment/);
      for (const api of [b.api, bTest.api]) {
        const foreign = await api.get(path); // another partner learns nothing
        expectProblem(foreign, 404);
        expect(foreign.body.detail, path).not.to.match(/exists in/);
      }
    }
  });

  it("never shows another tenant's stores or products: 404 and empty lists", async () => {
    for (const [who, api] of others()) {
      expectProblem(await api.get('/stores/loja'), 404);
      expectProblem(await api.get('/products/sku-1'), 404);
      expect((await api.get('/stores')).body.data, who).to.deep.equal([]);
      expect((await api.get('/products')).body.data, who).to.deep.equal([]);
      expect((await api.get('/products?store_id=loja')).body.data, who).to.deep.equal([]);
    }
  });

  it("never changes another tenant's products: PATCH 404, DELETE 204 that touches nothing", async () => {
    for (const [, api] of others()) {
      expectProblem(await api.patch('/products/sku-1', { price_cents: 1, updated_at: at(60) }), 404);
      expect((await api.delete('/products/sku-1')).status).to.equal(204);
    }
    const mine = await a.api.get('/products/sku-1');
    expect(mine.body).to.include({ state: 'pending', expected_commission_cents: 1000 });
    expect((await productEvents(t, a, 'sku-1')).length).to.equal(1);
  });

  it('lets another tenant PUT the same store_id and SKU as an independent resource', async () => {
    for (const [who, api] of others()) {
      const store = await api.put('/stores/loja', storeBody({ name: `Loja de ${who}` }));
      expect(store.status, JSON.stringify(store.body)).to.equal(200);
      expect(store.body.status).to.equal('pending_review');
      const product = await api.put(
        '/products/sku-1',
        productBody('loja', { price_cents: 5, commission: MIRROR, updated_at: at(30) }),
      );
      expect(product.status, JSON.stringify(product.body)).to.equal(200);
      expect(product.body.expected_commission_cents).to.equal(5);
    }
    // A's resources are untouched, and an operator action on A's store reaches A alone.
    expect((await a.api.get('/stores/loja')).body.name).to.equal('Loja Exemplo');
    expect((await a.api.get('/products/sku-1')).body.expected_commission_cents).to.equal(1000);
    expect((await t.approveStore(a, 'loja')).status).to.equal(200);
    expect((await a.api.get('/stores/loja')).body.status).to.equal('active');
    for (const [who, api] of others()) {
      const store = await api.get('/stores/loja');
      expect(store.body, who).to.include({ status: 'pending_review', name: `Loja de ${who}` });
      expect((await api.get('/products')).body.data.map((p: { sku: string }) => p.sku)).to.deep.equal(['sku-1']);
    }
    // Deleting B's copy leaves A's.
    expect((await b.api.delete('/products/sku-1')).status).to.equal(204);
    expect((await b.api.get('/products/sku-1')).body.state).to.equal('removed');
    expect((await a.api.get('/products/sku-1')).body.state).to.not.equal('removed');
  });

  it('keeps one CNPJ per environment: the test area of one partner and the live area of another may share it', async () => {
    const cnpj = nextCnpj();
    expect((await aTest.api.put('/stores/shared', storeBody({ cnpj }))).status).to.equal(200);
    expect((await b.api.put('/stores/shared', storeBody({ cnpj }))).status).to.equal(200);
    expectInvalid(await a.api.put('/stores/shared', storeBody({ cnpj })), ['cnpj:already_registered']);
    expectInvalid(await bTest.api.put('/stores/shared-2', storeBody({ cnpj })), ['cnpj:already_registered']);
    // A's live CNPJ is also free in the test environment.
    expect((await aTest.api.put('/stores/loja-a', storeBody({ cnpj: cnpjA }))).status).to.equal(200);
  });

  it('counts the single store of a direct-store account per environment', async () => {
    const direct = await t.partner({ type: 'store' });
    const directTest = await t.key(direct.partnerId, 'test');
    expect((await direct.api.put('/stores/one', storeBody())).status).to.equal(200);
    expect((await directTest.api.put('/stores/one-test', storeBody())).status).to.equal(200);
    expectInvalid(await directTest.api.put('/stores/two-test', storeBody()), ['store_id:single_store']);
  });

  it('refuses a product whose store belongs to another tenant (store_not_found)', async () => {
    const c = await t.partner();
    expectInvalid(await c.api.put('/products/x', productBody('loja')), ['store_id:store_not_found']);
  });

  it('revoking a key of one partner leaves the other partner (and its other environment) working', async () => {
    const extra = await t.key(b.partnerId, 'live');
    expect((await t.admin.delete(`/keys/${extra.keyId}`)).status).to.equal(204);
    expect((await extra.api.get('/me')).status).to.equal(401);
    expect((await b.api.get('/me')).status).to.equal(200);
    expect((await a.api.get('/me')).status).to.equal(200);
  });

  it('reads its own writes under load: 20 clients each PUT then GET their product 10 times', async () => {
    await a.api.put('/stores/ryw', storeBody());
    const failures: string[] = [];
    await Promise.all(
      Array.from({ length: 20 }, async (_, c) => {
        const api = t.as(a.key);
        for (let round = 0; round < 10; round++) {
          const price = 1000 * (c + 1) + round;
          const put = await api.put(
            `/products/ryw-${c}`,
            productBody('ryw', { price_cents: price, commission: MIRROR, updated_at: at(round) }),
          );
          if (put.status !== 200) failures.push(`PUT ${c}/${round}: ${put.status}`);
          const got = await api.get(`/products/ryw-${c}`);
          if (got.body.expected_commission_cents !== price)
            failures.push(`GET ${c}/${round}: ${got.body.expected_commission_cents} ≠ ${price}`);
        }
      }),
    );
    expect(failures).to.deep.equal([]);
    const listed = await a.api.get('/products?store_id=ryw&limit=200');
    expect(listed.body.data).to.have.length(20);
  });

  it('keeps stores, products, removals and keys across a normal restart', async () => {
    const before = {
      store: (await a.api.get('/stores/loja')).body,
      product: (await a.api.get('/products/sku-1')).body,
      removed: (await b.api.get('/products/sku-1')).body,
      list: (await a.api.get('/products?limit=200')).body,
    };
    await t.restart();
    const aApi = t.as(a.key);
    const bApi = t.as(b.key);
    expect((await aApi.get('/stores/loja')).body).to.deep.equal(before.store);
    expect((await aApi.get('/products/sku-1')).body).to.deep.equal(before.product);
    expect((await bApi.get('/products/sku-1')).body).to.deep.equal(before.removed);
    expect((await aApi.get('/products?limit=200')).body).to.deep.equal(before.list);
    expect((await t.as(aTest.key).get('/me')).body.environment).to.equal('test');
    // Writes go on where they left off: an older updated_at is still stale, the store index still holds.
    const stale = await aApi.put(
      '/products/sku-1',
      productBody('loja', { price_cents: 1, updated_at: '2025-12-31T00:00:00Z' }),
    );
    expect(stale.body.ignored_stale).to.equal(true);
    expectInvalid(await aApi.put('/stores/LOJA', storeBody()), ['store_id:conflict']);
    const patched = await aApi.patch('/products/sku-1', { price_cents: 4242, updated_at: at(90) });
    expect(patched.body.expected_commission_cents).to.equal(4242);
    expect((await aApi.get('/products/sku-1')).body.expected_commission_cents).to.equal(4242);
  });
});
