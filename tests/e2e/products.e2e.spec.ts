import { expect } from 'chai';
import { productBody, startTestService, storeBody, type Partner, type TestService } from '../support/service.js';
import { expectInvalid, expectProblem, productEvents, shuffled } from '../support/e2e.js';

const NOW = '2026-01-02T00:00:00.000Z';
const HOUR = 60 * 60 * 1000;
/** A product rule that makes expected_commission_cents equal the price, so tests can read the price back. */
const MIRROR = { type: 'percentage', rate: 100 } as const;
const at = (minutes: number) => new Date(Date.parse('2026-01-01T00:00:00Z') + minutes * 60_000).toISOString();

describe('products (HTTP)', function () {
  let t: TestService;
  let hub: Partner;
  let n = 0;
  const fresh = () => `sku-${++n}`;

  before(async () => {
    t = await startTestService();
    t.clock.set(new Date(NOW));
    hub = await t.partner();
    expect((await hub.api.put('/stores/loja', storeBody())).status).to.equal(200);
  });
  after(async () => t.close());
  afterEach(() => t.clock.set(new Date(NOW)));

  const priceOf = async (sku: string, api = hub.api) => {
    const r = await api.get(`/products/${sku}`);
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    return r.body.expected_commission_cents as number;
  };

  describe('not_higher', () => {
    it('PUT refuses an original price equal to or below the price, takes one above', async () => {
      expectInvalid(
        await hub.api.put(
          `/products/${fresh()}`,
          productBody('loja', { price_cents: 1000, original_price_cents: 1000 }),
        ),
        ['original_price_cents:not_higher'],
      );
      expectInvalid(
        await hub.api.put(
          `/products/${fresh()}`,
          productBody('loja', { price_cents: 1000, original_price_cents: 999 }),
        ),
        ['original_price_cents:not_higher'],
      );
      expect(
        (
          await hub.api.put(
            `/products/${fresh()}`,
            productBody('loja', { price_cents: 1000, original_price_cents: 1001 }),
          )
        ).status,
      ).to.equal(200);
    });

    it('PATCH refuses it whether both prices come in the patch or one of them meets the stored other, and writes nothing', async () => {
      const sku = fresh();
      await hub.api.put(
        `/products/${sku}`,
        productBody('loja', { price_cents: 1000, original_price_cents: 1500, commission: MIRROR }),
      );
      expectInvalid(
        await hub.api.patch(`/products/${sku}`, { price_cents: 800, original_price_cents: 800, updated_at: at(1) }),
        ['original_price_cents:not_higher'],
      );
      expectInvalid(await hub.api.patch(`/products/${sku}`, { price_cents: 1500, updated_at: at(1) }), [
        'original_price_cents:not_higher',
      ]);
      expectInvalid(await hub.api.patch(`/products/${sku}`, { price_cents: 1600, updated_at: at(1) }), [
        'original_price_cents:not_higher',
      ]);
      expectInvalid(await hub.api.patch(`/products/${sku}`, { original_price_cents: 1000, updated_at: at(1) }), [
        'original_price_cents:not_higher',
      ]);
      expect((await productEvents(t, hub, sku)).length).to.equal(1);
      expect(await priceOf(sku)).to.equal(1000);
      // Removing the 'from' price lets the price rise; raising both together is fine too.
      expect(
        (await hub.api.patch(`/products/${sku}`, { price_cents: 1600, original_price_cents: null, updated_at: at(2) }))
          .status,
      ).to.equal(200);
      expect(
        (await hub.api.patch(`/products/${sku}`, { price_cents: 1700, original_price_cents: 2000, updated_at: at(3) }))
          .status,
      ).to.equal(200);
      expect(await priceOf(sku)).to.equal(1700);
    });
  });

  describe('future', () => {
    it('takes updated_at exactly 24 h ahead of the clock and refuses anything later (PUT and PATCH)', async () => {
      const sku = fresh();
      const limit = new Date(Date.parse(NOW) + 24 * HOUR).toISOString();
      expect((await hub.api.put(`/products/${sku}`, productBody('loja', { updated_at: limit }))).status).to.equal(200);
      const later = new Date(Date.parse(NOW) + 24 * HOUR + 1).toISOString();
      expectInvalid(await hub.api.put(`/products/${fresh()}`, productBody('loja', { updated_at: later })), [
        'updated_at:future',
      ]);
      expectInvalid(
        await hub.api.put(`/products/${fresh()}`, productBody('loja', { updated_at: '2026-01-02T21:00:01-03:00' })),
        ['updated_at:future'],
      );
      expectInvalid(await hub.api.patch(`/products/${sku}`, { price_cents: 5, updated_at: later }), [
        'updated_at:future',
      ]);
      expect((await hub.api.patch(`/products/${sku}`, { price_cents: 5, updated_at: limit })).status).to.equal(200);
    });

    it('reads the injected clock: what was too far ahead is taken once the clock moves', async () => {
      const ahead = new Date(Date.parse(NOW) + 25 * HOUR).toISOString();
      const sku = fresh();
      expectInvalid(await hub.api.put(`/products/${sku}`, productBody('loja', { updated_at: ahead })), [
        'updated_at:future',
      ]);
      t.clock.advance(HOUR);
      expect((await hub.api.put(`/products/${sku}`, productBody('loja', { updated_at: ahead }))).status).to.equal(200);
    });
  });

  describe('updated_at ordering', () => {
    it('keeps the greatest updated_at under 20 concurrent PUTs sent in shuffled order', async () => {
      const sku = fresh();
      const order = shuffled(
        Array.from({ length: 20 }, (_, i) => i),
        7,
      );
      const answers = await Promise.all(
        order.map((i) =>
          hub.api.put(
            `/products/${sku}`,
            productBody('loja', { price_cents: 1000 + i, updated_at: at(i), commission: MIRROR }),
          ),
        ),
      );
      for (const a of answers) expect(a.status, JSON.stringify(a.body)).to.equal(200);
      expect(await priceOf(sku)).to.equal(1019);
      // Every applied write carried an updated_at not older than the one before it.
      const applied = (await productEvents(t, hub, sku)).map((e) => Date.parse(e.data.product.updated_at));
      expect(applied).to.deep.equal([...applied].sort((a, b) => a - b));
      expect(answers.filter((a) => a.body.ignored_stale === false).length).to.equal(applied.length);
    });

    it('applies every one of 20 concurrent PUTs that tie on updated_at (none fails on the write race)', async () => {
      const sku = fresh();
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          hub.api.put(
            `/products/${sku}`,
            productBody('loja', { price_cents: 3000 + i, updated_at: at(0), commission: MIRROR }),
          ),
        ),
      );
      for (const a of answers) expect(a.status, JSON.stringify(a.body)).to.equal(200);
      expect(answers.every((a) => a.body.ignored_stale === false)).to.equal(true);
      const events = await productEvents(t, hub, sku);
      expect(events).to.have.length(20);
      // The last applied is the one a read shows.
      expect(await priceOf(sku)).to.equal(events[19].data.product.price_cents);
    });

    it('keeps the greatest updated_at under concurrent PATCHes and PUTs mixed', async () => {
      const sku = fresh();
      await hub.api.put(
        `/products/${sku}`,
        productBody('loja', { price_cents: 1, updated_at: at(0), commission: MIRROR }),
      );
      const order = shuffled(
        Array.from({ length: 20 }, (_, i) => i + 1),
        11,
      );
      const answers = await Promise.all(
        order.map((i) =>
          i % 2
            ? hub.api.patch(`/products/${sku}`, { price_cents: 2000 + i, updated_at: at(i) })
            : hub.api.put(
                `/products/${sku}`,
                productBody('loja', { price_cents: 2000 + i, updated_at: at(i), commission: MIRROR }),
              ),
        ),
      );
      for (const a of answers) expect(a.status, JSON.stringify(a.body)).to.equal(200);
      expect(await priceOf(sku)).to.equal(2020);
    });

    it('applies ties in arrival order; an older one is answered 200 ignored_stale and changes nothing', async () => {
      const sku = fresh();
      await hub.api.put(
        `/products/${sku}`,
        productBody('loja', { price_cents: 100, updated_at: at(10), commission: MIRROR }),
      );
      const tie = await hub.api.put(
        `/products/${sku}`,
        productBody('loja', { price_cents: 200, updated_at: at(10), commission: MIRROR }),
      );
      expect(tie.body.ignored_stale).to.equal(false);
      expect(await priceOf(sku)).to.equal(200);
      const tiePatch = await hub.api.patch(`/products/${sku}`, { price_cents: 300, updated_at: at(10) });
      expect(tiePatch.body.ignored_stale).to.equal(false);
      expect(await priceOf(sku)).to.equal(300);
      const older = await hub.api.put(
        `/products/${sku}`,
        productBody('loja', { price_cents: 400, updated_at: at(9), commission: MIRROR }),
      );
      expect(older.status).to.equal(200);
      expect(older.body).to.include({ ignored_stale: true, expected_commission_cents: 300 });
      const olderPatch = await hub.api.patch(`/products/${sku}`, { price_cents: 500, updated_at: at(9) });
      expect(olderPatch.body).to.include({ ignored_stale: true, expected_commission_cents: 300 });
      expect((await productEvents(t, hub, sku)).length).to.equal(3);
      expect(await priceOf(sku)).to.equal(300);
    });
  });

  describe('PUT replaces, PATCH changes, DELETE removes', () => {
    it('PUT replaces the whole registration: omitting commission removes the product rule, omitting the from price removes it', async () => {
      await hub.api.put('/stores/loja-pct', storeBody({ default_commission: { type: 'percentage', rate: 10 } }));
      const sku = fresh();
      const first = await hub.api.put(
        `/products/${sku}`,
        productBody('loja-pct', {
          price_cents: 1000,
          original_price_cents: 2000,
          commission: { type: 'fixed', amount_cents: 77 },
          updated_at: at(1),
        }),
      );
      expect(first.body).to.include({ commission_source: 'product', expected_commission_cents: 77 });
      const second = await hub.api.put(
        `/products/${sku}`,
        productBody('loja-pct', { price_cents: 1000, updated_at: at(2) }),
      );
      expect(second.body).to.include({ commission_source: 'store', expected_commission_cents: 100 });
      expect(second.body.commission).to.deep.equal({ type: 'percentage', rate: 10 });
      // With the from price gone, a higher price is fine.
      expect((await hub.api.patch(`/products/${sku}`, { price_cents: 5000, updated_at: at(3) })).status).to.equal(200);
      const read = await hub.api.get(`/products/${sku}`);
      expect(read.body).to.include({ commission_source: 'store', expected_commission_cents: 500 });
    });

    it('PATCH answers 404 for a SKU never sent and for a removed one; nothing is written', async () => {
      expectProblem(await hub.api.patch('/products/never', { price_cents: 5, updated_at: at(1) }), 404);
      expect(await productEvents(t, hub, 'never')).to.deep.equal([]);
      const sku = fresh();
      await hub.api.put(`/products/${sku}`, productBody('loja'));
      expect((await hub.api.delete(`/products/${sku}`)).status).to.equal(204);
      expectProblem(await hub.api.patch(`/products/${sku}`, { price_cents: 5, updated_at: at(100) }), 404);
      expect((await productEvents(t, hub, sku)).map((e) => e.type)).to.deep.equal([
        'ProductUpserted',
        'ProductRemoved',
      ]);
    });

    it('DELETE answers 204 for a SKU never sent (GET stays 404) and twice for one sent (GET answers 200 removed)', async () => {
      const never = await hub.api.delete('/products/ghost');
      expect(never.status).to.equal(204);
      expect(never.body).to.equal('');
      expectProblem(await hub.api.get('/products/ghost'), 404);
      expect(await productEvents(t, hub, 'ghost')).to.deep.equal([]);

      const sku = fresh();
      await hub.api.put(`/products/${sku}`, productBody('loja'));
      expect((await hub.api.delete(`/products/${sku}`)).status).to.equal(204);
      expect((await hub.api.delete(`/products/${sku}`)).status).to.equal(204);
      const gone = await hub.api.get(`/products/${sku}`);
      expect(gone.status).to.equal(200);
      expect(gone.body).to.include({ sku, store_id: 'loja', state: 'removed' });
      expect(gone.body.svc_url).to.equal(undefined);
      expect((await productEvents(t, hub, sku)).filter((e) => e.type === 'ProductRemoved')).to.have.length(1);
      // A PUT brings it back.
      const back = await hub.api.put(`/products/${sku}`, productBody('loja', { updated_at: at(5) }));
      expect(back.body.state).to.equal('pending');
      expect((await hub.api.get(`/products/${sku}`)).body.state).to.equal('pending');
    });

    it('lists removed products with ?state=removed and filters by ?store_id=', async () => {
      const lister = await t.partner();
      await lister.api.put('/stores/s1', storeBody());
      await lister.api.put('/stores/s2', storeBody());
      for (const [sku, store] of [
        ['a', 's1'],
        ['b', 's2'],
        ['c', 's1'],
        ['d', 's2'],
      ] as const) {
        expect((await lister.api.put(`/products/${sku}`, productBody(store))).status).to.equal(200);
      }
      await lister.api.delete('/products/b');
      await lister.api.delete('/products/c');
      const skus = async (q: string) =>
        (await lister.api.get(`/products${q}`)).body.data.map(
          (p: { sku: string; state: string }) => `${p.sku}:${p.state}`,
        );
      expect(await skus('')).to.deep.equal(['a:pending', 'b:removed', 'c:removed', 'd:pending']);
      expect(await skus('?state=removed')).to.deep.equal(['b:removed', 'c:removed']);
      expect(await skus('?state=pending')).to.deep.equal(['a:pending', 'd:pending']);
      expect(await skus('?state=accepted')).to.deep.equal([]);
      expect(await skus('?store_id=s1')).to.deep.equal(['a:pending', 'c:removed']);
      expect(await skus('?store_id=s2&state=removed')).to.deep.equal(['b:removed']);
      expect(await skus('?store_id=none')).to.deep.equal([]);
    });
  });

  describe('expected commission', () => {
    const cases: [string, unknown, number, number | null][] = [
      ['12.5 % of 999 (124.875)', { type: 'percentage', rate: 12.5 }, 999, 125],
      ['0.01 % of 50 (0.005 of a cent)', { type: 'percentage', rate: 0.01 }, 50, 0],
      ['0.01 % of 4999 (0.4999)', { type: 'percentage', rate: 0.01 }, 4999, 0],
      ['0.01 % of 5000 (exactly half a cent)', { type: 'percentage', rate: 0.01 }, 5000, 1],
      ['1 % of 50 (half a cent)', { type: 'percentage', rate: 1 }, 50, 1],
      ['1 % of 49', { type: 'percentage', rate: 1 }, 49, 0],
      ['10 % of 5 (half a cent)', { type: 'percentage', rate: 10 }, 5, 1],
      ['0.07 % of 100000', { type: 'percentage', rate: 0.07 }, 100000, 70],
      ['33.33 % of 3 (0.9999)', { type: 'percentage', rate: 33.33 }, 3, 1],
      [
        '99.99 % of 2^53 - 1',
        { type: 'percentage', rate: 99.99 },
        9007199254740991,
        Number((9007199254740991n * 9999n * 2n + 10000n) / 20000n),
      ],
      ['zero percentage', { type: 'percentage', rate: 0 }, 999, 0],
      ['fixed', { type: 'fixed', amount_cents: 300 }, 999, 300],
      ['zero fixed', { type: 'fixed', amount_cents: 0 }, 999, 0],
      ['no rule anywhere', undefined, 999, null],
    ];
    cases.forEach(([what, rule, price, expected]) => {
      it(`${what} → ${expected}`, async () => {
        const sku = fresh();
        const body = productBody('loja', { price_cents: price, ...(rule === undefined ? {} : { commission: rule }) });
        const put = await hub.api.put(`/products/${sku}`, body);
        expect(put.status, JSON.stringify(put.body)).to.equal(200);
        const read = await hub.api.get(`/products/${sku}`);
        for (const view of [put.body, read.body]) {
          expect(view.expected_commission_cents).to.equal(expected);
          expect(view.commission).to.deep.equal(rule ?? null);
          expect(view.commission_source).to.equal(rule === undefined ? null : 'product');
        }
      });
    });

    it("follows a change of the store's default to every product that inherits it, and to no product with its own rule", async () => {
      const cnpj = storeBody().cnpj;
      await hub.api.put('/stores/loja-def', storeBody({ cnpj, default_commission: { type: 'percentage', rate: 10 } }));
      await hub.api.put('/products/inh-1', productBody('loja-def', { price_cents: 1000 }));
      await hub.api.put('/products/inh-2', productBody('loja-def', { price_cents: 2005, commission: null }));
      await hub.api.put(
        '/products/own',
        productBody('loja-def', { price_cents: 1000, commission: { type: 'fixed', amount_cents: 9 } }),
      );
      await hub.api.put(
        '/products/own-zero',
        productBody('loja-def', { price_cents: 1000, commission: { type: 'percentage', rate: 0 } }),
      );
      const view = async (sku: string) => {
        const r = await hub.api.get(`/products/${sku}`);
        return `${r.body.commission_source}:${r.body.expected_commission_cents}`;
      };
      expect([await view('inh-1'), await view('inh-2'), await view('own'), await view('own-zero')]).to.deep.equal([
        'store:100',
        'store:201',
        'product:9',
        'product:0',
      ]);

      await hub.api.put(
        '/stores/loja-def',
        storeBody({ cnpj, default_commission: { type: 'fixed', amount_cents: 50 } }),
      );
      expect([await view('inh-1'), await view('inh-2'), await view('own'), await view('own-zero')]).to.deep.equal([
        'store:50',
        'store:50',
        'product:9',
        'product:0',
      ]);
      const listed = (await hub.api.get('/products?store_id=loja-def')).body.data.map(
        (p: any) => `${p.sku}=${p.expected_commission_cents}`,
      );
      expect(listed).to.deep.equal(['inh-1=50', 'inh-2=50', 'own=9', 'own-zero=0']);

      await hub.api.put('/stores/loja-def', storeBody({ cnpj })); // no default any more
      expect([await view('inh-1'), await view('inh-2'), await view('own')]).to.deep.equal([
        'null:null',
        'null:null',
        'product:9',
      ]);
      const written = await hub.api.put(
        '/products/inh-1',
        productBody('loja-def', { price_cents: 1000, updated_at: at(1) }),
      );
      expect(written.body).to.include({ commission_source: null, expected_commission_cents: null });

      // PATCH commission null returns a product to the store rule.
      await hub.api.put('/stores/loja-def', storeBody({ cnpj, default_commission: { type: 'percentage', rate: 1 } }));
      const back = await hub.api.patch('/products/own', { commission: null, updated_at: at(2) });
      expect(back.body).to.include({ commission_source: 'store', expected_commission_cents: 10 });
      expect(await view('own')).to.equal('store:10');
    });
  });

  it('answers a write with the same status a read gives right after it', async () => {
    const sku = fresh();
    const put = await hub.api.put(`/products/${sku}`, productBody('loja', { commission: MIRROR, price_cents: 777 }));
    const read = await hub.api.get(`/products/${sku}`);
    const { ignored_stale: _, ...written } = put.body;
    expect(read.body).to.deep.equal(written);
    expect(put.body.received_at).to.equal(NOW);
  });
});
