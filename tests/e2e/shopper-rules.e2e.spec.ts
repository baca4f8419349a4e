/**
 * The rules of SHOPPER.md that the other shopper files do not reach over HTTP: which fields a word may match, the
 * order of products and of the offers inside a product, rule 5 at its boundaries, what is searchable judged with the
 * partner API's own `state` (a failed cover, a domain not approved, a removal, the test area, an ignored stale write
 * that refreshes nothing), the exact JSON shapes, and how `q` is measured.
 */
import { expect } from 'chai';
import { streams } from '../../shared-schema/domain/streams.js';
import {
  COUNTS_KEPT,
  PRODUCT_COUNTS,
  PRODUCTS,
  productDocId,
  type ProductDoc,
} from '../../shared-schema/read-models/products.js';
import { startTestService, storeBody, type Partner, type TestService } from '../support/service.js';
import { MINUTE } from '../support/order-fixtures.js';
import { HOUR, addressOf, publish, putProduct, redirectUrl, registerStore, visit } from './commerce-support.js';
import {
  expectCatalogInsights,
  expectVisibilityIsSearch,
  getFrom,
  offer as makeOffer,
  rootOf,
  settle as settleAll,
  shopperWorld,
} from './shopper-support.js';

type OfferJson = Record<string, unknown> & {
  store: { store_id: string; name: string };
  sku: string;
  title: string;
  image_url: string;
  offer_url: string;
  buy_url: string;
};
type ProductJson = Record<string, unknown> & {
  title: string;
  image_url: string;
  offers: OfferJson[];
  alternatives: OfferJson[];
};
type PageJson = { query: string; results: ProductJson[]; next_cursor: string | null };

describe('shopper rules over HTTP: matching fields, order, rule 5 boundaries, what is searchable, shapes', function () {
  let t: TestService;
  let hub: Partner;
  let other: Partner;
  const T0 = Date.parse('2026-07-06T10:00:00.000Z');
  // The brake counts 120 searches a minute per address and this clock stands still: each search from its own address.
  let nextAddress = 0;
  const from = (): string => `127.0.1.${(nextAddress++ % 250) + 1}`;
  const raw = (path: string, headers: Record<string, string> = {}) => getFrom(`${rootOf(t)}${path}`, from(), headers);
  const q = async (words: string): Promise<PageJson> => {
    const r = await raw(`/api/search?q=${encodeURIComponent(words)}`);
    expect(r.status, r.text).to.equal(200);
    return JSON.parse(r.text) as PageJson;
  };
  /** The first offer's SKU of each product (offers, else alternatives), in answer order. */
  const heads = async (words: string): Promise<string[]> =>
    (await q(words)).results.map((p) => (p.offers[0] ?? p.alternatives[0]).sku);
  const settle = () => settleAll(t);
  const offer = (p: Partner, store: string, sku: string, fields: Record<string, unknown>) =>
    makeOffer(t, p, store, sku, fields);
  const stateOf = async (p: Partner, sku: string): Promise<string> => {
    const r = await p.api.get(`/products/${sku}`);
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    return r.body.state as string;
  };

  before(async () => {
    t = await startTestService();
    ({ hub, other } = await shopperWorld(t, T0));
  });
  beforeEach(() => t.clock.set(new Date(T0)));
  after(async () => t.close());

  it('a word matches the title, brand, model, category, an attribute value or the gtin; every word must match; only the last word as a prefix', async () => {
    await offer(hub, 'Loja-A', 'vent-1', {
      title: 'Ventilador de mesa',
      brand: 'Arcticus',
      model: 'VX900',
      category: 'Climatização',
      attributes: { cor: 'Grafite', voltagem: 'Bivolt' },
      gtin: '7891000400401',
    });
    await offer(hub, 'Loja-B', 'vent-2', { title: 'Ventilador de teto', brand: 'Borealis' });
    await settle();
    for (const words of ['arcticus', 'VX900', 'climatizacao', 'grafite', 'bivolt', '7891000400401'])
      expect(await heads(words), words).to.deep.equal(['vent-1']);
    expect(await heads('voltagem'), 'an attribute name is not searched').to.deep.equal([]);
    expect(await heads('ventilador arcticus'), 'title and brand together').to.deep.equal(['vent-1']);
    expect(await heads('ventilador zeppelin'), 'every word must match').to.deep.equal([]);
    expect(await heads('mesa venti'), 'the last word as a prefix').to.deep.equal(['vent-1']);
    expect(await heads('venti mesa'), 'a word before the last is whole').to.deep.equal([]);
    expect(await heads('borealis'), 'another offer, its own brand').to.deep.equal(['vent-2']);
  });

  it('orders products by a title match above a match elsewhere, then best rating (average, then count), then lowest price, then a stable key', async () => {
    const persa = '7891000500508';
    const tapeteDuplo = '7891000500515';
    await offer(hub, 'Loja-A', 'tap-capacho', {
      title: 'Capacho de fibra',
      brand: 'Tapete Real', // "tapete" only outside the title, however well rated
      rating: { average: 5, count: 1000 },
    });
    // The count decides before the price and the key, which would put tap-sala first.
    await offer(hub, 'Loja-A', 'tap-sala', {
      title: 'Tapete sala',
      price_cents: 100,
      rating: { average: 4.8, count: 10 },
    });
    await offer(hub, 'Loja-B', 'tap-quarto', {
      title: 'Tapete quarto',
      price_cents: 50000,
      rating: { average: 4.8, count: 50 },
    });
    await offer(other, 'Loja-C', 'tap-banheiro', { title: 'Tapete banheiro', rating: { average: 4.9, count: 1 } });
    await offer(other, 'Loja-C', 'tap-cozinha', { title: 'Tapete cozinha', price_cents: 1000 });
    await offer(other, 'Loja-D', 'tap-varanda', { title: 'Tapete varanda', price_cents: 900 });
    // A product's best rating and lowest price are over all its offers.
    await offer(hub, 'Loja-A', 'tap-persa-1', { title: 'Tapete persa', gtin: persa, rating: { average: 2, count: 5 } });
    await offer(other, 'Loja-D', 'tap-persa-2', {
      title: 'Tapete persa',
      gtin: persa,
      rating: { average: 4.95, count: 2 },
    });
    await offer(hub, 'Loja-B', 'tap-duplo-1', { title: 'Tapete duplo', gtin: tapeteDuplo, price_cents: 5000 });
    await offer(other, 'Loja-C', 'tap-duplo-2', { title: 'Tapete duplo', gtin: tapeteDuplo, price_cents: 800 });
    // Two products alike in everything the order reads.
    await offer(hub, 'Loja-B', 'tap-igual-1', { title: 'Tapete porta', price_cents: 2000 });
    await offer(other, 'Loja-D', 'tap-igual-2', { title: 'Tapete porta', price_cents: 2000 });
    await settle();
    const order = await heads('tapete');
    const twins = order.filter((s) => s.startsWith('tap-igual-'));
    expect(order).to.deep.equal([
      'tap-persa-1', // its product's best rating is its other offer's 4.95
      'tap-banheiro', // 4.9
      'tap-quarto', // 4.8, 50 ratings
      'tap-sala', // 4.8, 10 ratings
      'tap-duplo-2', // unrated from here: lowest price 800
      'tap-varanda', // 900
      'tap-cozinha', // 1000
      ...twins, // 2000 both: the stable key
      'tap-capacho', // "tapete" in its brand only
    ]);
    // The key is stable: a new write of the first twin (same facts) does not swap them.
    const patch = await (twins[0] === 'tap-igual-1' ? hub : other).api.patch(`/products/${twins[0]}`, {
      price_cents: 2000,
      updated_at: new Date(T0 + 1000).toISOString(),
    });
    expect(patch.status, JSON.stringify(patch.body)).to.equal(200);
    await settle();
    expect((await heads('tapete')).filter((s) => s.startsWith('tap-igual-'))).to.deep.equal(twins);
    expect(await heads('tapete sala'), 'both words in a title above one').to.deep.equal(['tap-sala']);
  });

  it('orders the offers of a product by total known price (fixed shipping added, free adds 0, unknown after an equal known total), then store_id, sku; alternatives alike', async () => {
    const gtin = '7891000600604';
    const panela = (fields: Record<string, unknown>) => ({ title: 'Panela de pressão', gtin, ...fields });
    await offer(
      hub,
      'Loja-A',
      'panela-a1',
      panela({ price_cents: 10000, shipping: { type: 'fixed', cost_cents: 1500 } }),
    ); // 11500
    await offer(hub, 'Loja-A', 'panela-a3', panela({ price_cents: 11500 })); // 11500, unknown
    await offer(hub, 'Loja-A', 'panela-a2', panela({ price_cents: 11500 })); // 11500, unknown
    await offer(hub, 'Loja-B', 'panela-b', panela({ price_cents: 11000, shipping: { type: 'free' } })); // 11000
    await offer(
      other,
      'Loja-C',
      'panela-c',
      panela({ price_cents: 10500, shipping: { type: 'fixed', cost_cents: 500 } }),
    ); // 11000
    await offer(
      other,
      'Loja-D',
      'panela-d',
      panela({ price_cents: 11000, shipping: { type: 'fixed', cost_cents: 500 } }),
    ); // 11500
    await offer(other, 'Loja-D', 'panela-u1', panela({ price_cents: 8000, condition: 'used' })); // 8000, unknown
    await offer(
      other,
      'Loja-C',
      'panela-u2',
      panela({ price_cents: 7500, condition: 'used', shipping: { type: 'fixed', cost_cents: 500 } }),
    ); // 8000
    await settle();
    const [product, ...rest] = (await q('panela')).results;
    expect(rest).to.deep.equal([]);
    expect(product.offers.map((o) => o.sku)).to.deep.equal([
      'panela-b',
      'panela-c',
      'panela-a1',
      'panela-d',
      'panela-a2',
      'panela-a3',
    ]);
    expect(product.price_from_cents, 'the lowest price_cents, shipping aside').to.equal(10000);
    expect(product.alternatives.map((o) => o.sku)).to.deep.equal(['panela-u2', 'panela-u1']);
  });

  it('rule 5 at its boundaries: exactly half stays, one other offer is not enough, an even count takes the mean of its middle two, each condition on its own', async () => {
    const g = (n: number) => `78910007000${String(n).padStart(2, '0')}`;
    const put = (p: Partner, store: string, sku: string, gtin: string, price_cents: number, condition = 'new') =>
      offer(p, store, sku, { title: `Cadeira ${sku}`, gtin, price_cents, condition });
    // Three others (10000, 12000, 8000 → median 10000): exactly half (5000) stays, 4999 goes.
    await put(hub, 'Loja-A', 'cad-half-a', g(1), 10000);
    await put(hub, 'Loja-B', 'cad-half-b', g(1), 12000);
    await put(other, 'Loja-D', 'cad-half-d', g(1), 8000);
    await put(other, 'Loja-C', 'cad-half-c', g(1), 5000);
    await put(hub, 'Loja-A', 'cad-below-a', g(2), 10000);
    await put(hub, 'Loja-B', 'cad-below-b', g(2), 12000);
    await put(other, 'Loja-D', 'cad-below-d', g(2), 8000);
    await put(other, 'Loja-C', 'cad-below-c', g(2), 4999);
    // One other offer: nothing to compare with.
    await put(hub, 'Loja-A', 'cad-pair-a', g(3), 10000);
    await put(other, 'Loja-C', 'cad-pair-c', g(3), 100);
    // Two others (9000, 11000): the median is their mean, 10000; 5000 stays, 4999 goes.
    await put(hub, 'Loja-A', 'cad-even-a', g(4), 9000);
    await put(hub, 'Loja-B', 'cad-even-b', g(4), 11000);
    await put(other, 'Loja-C', 'cad-even-c', g(4), 5000);
    await put(hub, 'Loja-A', 'cad-odd-a', g(6), 9000);
    await put(hub, 'Loja-B', 'cad-odd-b', g(6), 11000);
    await put(other, 'Loja-C', 'cad-odd-c', g(6), 4999);
    // Conditions apart: the used offers are not compared with the new ones, and among themselves the 1000 goes.
    await put(hub, 'Loja-A', 'cad-mix-n1', g(5), 10000);
    await put(hub, 'Loja-B', 'cad-mix-n2', g(5), 10000);
    await put(other, 'Loja-C', 'cad-mix-u1', g(5), 3000, 'used');
    await put(other, 'Loja-D', 'cad-mix-u2', g(5), 3000, 'used');
    await put(other, 'Loja-D', 'cad-mix-u3', g(5), 1000, 'used');
    await settle();
    const byGtin = new Map((await q('cadeira')).results.map((p) => [p.gtin as string, p]));
    const skus = (n: number) => {
      const p = byGtin.get(g(n))!;
      return [...p.offers, ...p.alternatives].map((o) => o.sku);
    };
    expect(skus(1)).to.deep.equal(['cad-half-c', 'cad-half-d', 'cad-half-a', 'cad-half-b']);
    expect(skus(2)).to.deep.equal(['cad-below-d', 'cad-below-a', 'cad-below-b']);
    expect(skus(3)).to.deep.equal(['cad-pair-c', 'cad-pair-a']);
    expect(skus(4)).to.deep.equal(['cad-even-c', 'cad-even-a', 'cad-even-b']);
    expect(skus(6)).to.deep.equal(['cad-odd-a', 'cad-odd-b']);
    expect(skus(5)).to.deep.equal(['cad-mix-n1', 'cad-mix-n2', 'cad-mix-u1', 'cad-mix-u2']);
    // Left out of the answer, still searchable: the offer page answers and the state does not change.
    expect((await raw(`/p/${addressOf(other, 'loja-c')}/cad-below-c`)).status).to.equal(200);
    expect(await stateOf(other, 'cad-below-c')).to.equal('accepted');
  });

  it('what is searchable follows the state GET /v1/products/{sku} derives: a failed cover, a domain not approved, a removal leave search, the offer page and the redirector', async () => {
    const gone = async (sku: string, address: string) => {
      expect(await heads(sku.replace(/-/g, ' ')), sku).to.deep.equal([]);
      expect((await raw(`/p/${address}/${sku}`)).status, `/p/ ${sku}`).to.equal(404);
      expect((await visit(redirectUrl(t, address, sku))).status, `/r/ ${sku}`).to.equal(404);
    };
    // A cover check that failed: rejected.
    await offer(hub, 'Loja-A', 'jarra-rejeitada', { title: 'Jarra rejeitada' });
    const stream = streams.product({ partnerId: hub.partnerId, env: 'live' }, 'jarra-rejeitada');
    const now = t.clock.now().toISOString();
    await t.service.events.appendToStream(stream, [
      {
        type: 'CoverChecked',
        data: {
          sku: 'jarra-rejeitada',
          url: 'https://cdn.shop.test/1.jpg',
          ok: false,
          reasons: [{ code: 'image_too_small', field: 'image_urls', message: 'too small' }],
          checked_at: now,
        },
        metadata: { recorded_at: now, actor: 'test' },
      },
    ]);
    // A domain the store declares but the service has not approved: pending, until it is approved.
    const storeE = storeBody({ name: 'Loja E', domains: ['shop.test'] });
    expect((await hub.api.put('/stores/Loja-E', storeE)).status).to.equal(200);
    expect((await t.approveStore(hub, 'Loja-E', 'live')).status).to.equal(200);
    const replaced = await hub.api.put('/stores/Loja-E', { ...storeE, domains: ['shop.test', 'nova.test'] });
    expect(replaced.status, JSON.stringify(replaced.body)).to.equal(200);
    await offer(hub, 'Loja-E', 'jarra-dominio', { title: 'Jarra dominio', product_url: 'https://nova.test/jarra' });
    // Removed.
    await offer(hub, 'Loja-B', 'jarra-removida', { title: 'Jarra removida' });
    expect((await hub.api.delete('/products/jarra-removida')).status).to.equal(204);
    await settle();

    expect(await stateOf(hub, 'jarra-rejeitada')).to.equal('rejected');
    await gone('jarra-rejeitada', addressOf(hub, 'loja-a'));
    expect(await stateOf(hub, 'jarra-dominio')).to.equal('pending');
    await gone('jarra-dominio', addressOf(hub, 'loja-e'));
    expect(await stateOf(hub, 'jarra-removida')).to.equal('removed');
    await gone('jarra-removida', addressOf(hub, 'loja-b'));

    const approved = await t.admin.post(`/partners/${hub.partnerId}/live/stores/Loja-E/domains/nova.test/approve`, {});
    expect(approved.status, JSON.stringify(approved.body)).to.equal(200);
    await settle();
    expect(await stateOf(hub, 'jarra-dominio')).to.equal('accepted');
    expect(await heads('jarra dominio')).to.deep.equal(['jarra-dominio']);
    expect((await raw(`/p/${addressOf(hub, 'loja-e')}/jarra-dominio`)).status).to.equal(200);
  });

  it('rule 3: a write ignored as stale (older updated_at) refreshes nothing: 48 h after the last applied one the offer leaves search', async () => {
    await offer(other, 'Loja-D', 'moringa', { title: 'Moringa de barro' });
    await settle();
    t.clock.set(new Date(T0 + 47 * HOUR));
    const older = await other.api.put('/products/moringa', {
      store_id: 'Loja-D',
      title: 'Moringa de barro',
      product_url: 'https://shop.test/p/1',
      image_urls: ['https://cdn.shop.test/1.jpg'],
      price_cents: 29990,
      available: true,
      updated_at: new Date(T0 - HOUR).toISOString(),
    });
    expect(older.status, JSON.stringify(older.body)).to.equal(200);
    expect(older.body.ignored_stale).to.equal(true);
    await settle();
    t.clock.set(new Date(T0 + 48 * HOUR));
    expect(await heads('moringa'), 'exactly 48 h after the applied write').to.deep.equal(['moringa']);
    t.clock.set(new Date(T0 + 48 * HOUR + 1));
    expect(await stateOf(other, 'moringa')).to.equal('stale');
    expect(await heads('moringa'), 'the ignored write did not count').to.deep.equal([]);
    expect((await raw(`/p/${addressOf(other, 'loja-d')}/moringa`)).status).to.equal(404);
  });

  it('the test area is visible to nobody: an accepted test product is in no search, and its addresses answer 404 and record no click', async () => {
    const test = await t.key(hub.partnerId, 'test');
    await registerStore(test, 'Loja-T', { name: 'Loja T' });
    await putProduct(t, test, 'Loja-T', 'bule-teste', { title: 'Bule de teste' });
    await publish(t, test, 'test', 'Loja-T', 'bule-teste');
    const status = await test.api.get('/products/bule-teste');
    expect(status.body.state, 'accepted in its own area').to.equal('accepted');
    await settle();
    expect(await heads('bule')).to.deep.equal([]);
    for (const path of [
      `/test/p/${addressOf(hub, 'loja-t')}/bule-teste`,
      `/p/${addressOf(hub, 'loja-t')}/bule-teste`,
    ]) {
      expect((await raw(path)).status, path).to.equal(404);
    }
    for (const prefix of ['/test', '']) {
      expect(
        (await visit(redirectUrl(t, addressOf(hub, 'loja-t'), 'bule-teste', prefix))).status,
        `${prefix}/r/`,
      ).to.equal(404);
    }
    t.clock.advance(1);
    expect((await test.api.get('/clicks')).body.data).to.deep.equal([]);
  });

  it('rule 1 at the store level: a store default commission changes no answer, order included', async () => {
    const storeF = storeBody({ name: 'Loja F' });
    expect((await other.api.put('/stores/Loja-F', storeF)).status).to.equal(200);
    expect((await t.approveStore(other, 'Loja-F', 'live')).status).to.equal(200);
    const gtin = '7891000900905';
    await offer(other, 'Loja-F', 'fruteira-f', { title: 'Fruteira de bambu', gtin, price_cents: 7000 });
    await offer(hub, 'Loja-A', 'fruteira-a', { title: 'Fruteira de bambu', gtin, price_cents: 6500 });
    await offer(hub, 'Loja-B', 'fruteira-b', { title: 'Fruteira de metal', price_cents: 4000 });
    await settle();
    const before = await q('fruteira');
    expect(before.results).to.have.length(2);
    const changed = await other.api.put('/stores/Loja-F', {
      ...storeF,
      default_commission: { type: 'percentage', rate: 95 },
    });
    expect(changed.status, JSON.stringify(changed.body)).to.equal(200);
    await settle();
    expect((await other.api.get('/products/fruteira-f')).body.commission_source).to.equal('store');
    expect(await q('fruteira')).to.deep.equal(before);
  });

  it('the offer page and the redirector find a searchable offer whatever the number of partners using its SKU', async () => {
    // 101 partners send SKU "1"; the one whose offer comes last in the model's own order (its id) is made searchable.
    const partners: { p: Partner; offerId: string }[] = [];
    // Twenty partners at a time (each one's calls in order).
    for (let from = 0; from < 101; from += 20) {
      const group = Array.from({ length: Math.min(20, 101 - from) }, (_, k) => from + k);
      partners.push(
        ...(await Promise.all(
          group.map(async (i) => {
            const p = await t.partner({ type: 'hub', name: `Parceiro ${i}` });
            await registerStore(p, `Casa-${i}`, { name: `Casa ${i}` });
            await putProduct(t, p, `Casa-${i}`, '1', {
              title: `Cuia ${i}`,
              product_url: `https://shop.test/cuia/${i}`,
            });
            return { p, offerId: `live:${p.partnerId}:1` };
          }),
        )),
      );
    }
    const last = partners.reduce((a, b) => (b.offerId > a.offerId ? b : a));
    const i = partners.indexOf(last);
    expect((await t.approveStore(last.p, `Casa-${i}`, 'live')).status).to.equal(200);
    await publish(t, last.p, 'live', `Casa-${i}`, '1');
    await settle();
    expect(await stateOf(last.p, '1')).to.equal('accepted');
    expect(await heads(`cuia ${i}`)).to.deep.equal(['1']);
    expect((await raw(`/p/${addressOf(last.p, `casa-${i}`)}/1`)).status).to.equal(200);
    const r = await visit(redirectUrl(t, addressOf(last.p, `casa-${i}`), '1'));
    expect(r.status).to.equal(302);
    expect(r.headers.get('location')).to.match(new RegExp(`^https://shop\\.test/cuia/${i}\\?svc_click=ic_`));
    const j = i === 0 ? 1 : 0;
    expect(
      (await raw(`/p/${addressOf(partners[j].p, `casa-${j}`)}/1`)).status,
      'another partner, not searchable',
    ).to.equal(404);
  });

  it('answers exactly the fields of SearchPage, Product and Offer; image_url is the cover, offer_url the svc_url, buy_url the absolute /r/ address', async () => {
    const gtin = '7891000800807';
    const sentAt = t.clock.now().toISOString();
    await offer(hub, 'Loja-A', 'garrafa-1', {
      title: 'Garrafa térmica 1 L',
      brand: 'Termax',
      gtin,
      price_cents: 8990,
      original_price_cents: 9990,
      installments: { count: 3, value_cents: 2997, interest_free: true },
      rating: { average: 4.5, count: 12 },
      shipping: { type: 'fixed', cost_cents: 990, delivery_days_min: 1, delivery_days_max: 3 },
      image_urls: ['https://cdn.shop.test/garrafa-capa.jpg', 'https://cdn.shop.test/garrafa-lado.jpg'],
    });
    // A product of used offers only: title and image from its first alternative in order.
    const usedGtin = '7891000800814';
    await offer(other, 'Loja-C', 'garrafa-usada-cara', {
      title: 'Garrafa usada B',
      gtin: usedGtin,
      price_cents: 5000,
      condition: 'used',
      image_urls: ['https://cdn.shop.test/usada-b.jpg'],
    });
    await offer(other, 'Loja-D', 'garrafa-usada-barata', {
      title: 'Garrafa usada A',
      gtin: usedGtin,
      price_cents: 4000,
      condition: 'refurbished',
      image_urls: ['https://cdn.shop.test/usada-a.jpg'],
    });
    await settle();
    const page = await q('garrafa');
    expect(Object.keys(page).sort()).to.deep.equal(['next_cursor', 'query', 'results']);
    const product = page.results.find((p) => p.gtin === gtin)!;
    expect(Object.keys(product).sort()).to.deep.equal([
      'alternatives',
      'brand',
      'gtin',
      'image_url',
      'offers',
      'price_from_cents',
      'title',
    ]);
    expect(product).to.include({
      title: 'Garrafa térmica 1 L',
      brand: 'Termax',
      image_url: 'https://cdn.shop.test/garrafa-capa.jpg',
      price_from_cents: 8990,
    });
    const svcUrl = (await hub.api.get('/products/garrafa-1')).body.svc_url as string;
    expect(new URL(svcUrl).pathname).to.equal(`/p/${addressOf(hub, 'loja-a')}/garrafa-1`);
    expect(svcUrl).to.match(/^https?:\/\/[^/]+\/p\//); // absolute, so buy_url below is too
    expect(product.offers).to.deep.equal([
      {
        store: { store_id: 'Loja-A', name: 'Loja A' },
        sku: 'garrafa-1',
        title: 'Garrafa térmica 1 L',
        price_cents: 8990,
        original_price_cents: 9990,
        installments: { count: 3, value_cents: 2997, interest_free: true },
        shipping: { kind: 'fixed', cost_cents: 990, delivery_days_min: 1, delivery_days_max: 3 },
        condition: 'new',
        condition_label: null,
        rating: { average: 4.5, count: 12 },
        image_url: 'https://cdn.shop.test/garrafa-capa.jpg',
        offer_url: svcUrl,
        buy_url: svcUrl.replace(`/p/${addressOf(hub, 'loja-a')}/`, `/r/${addressOf(hub, 'loja-a')}/`),
        updated_at: sentAt,
      },
    ]);
    // The offer page's JSON is the same Offer.
    const json = await raw(`/p/${addressOf(hub, 'loja-a')}/garrafa-1`, { Accept: 'application/json' });
    expect(json.status).to.equal(200);
    expect(JSON.parse(json.text)).to.deep.equal(product.offers[0]);

    const used = page.results.find((p) => p.gtin === usedGtin)!;
    expect(used).to.include({
      title: 'Garrafa usada A',
      brand: null,
      image_url: 'https://cdn.shop.test/usada-a.jpg',
      price_from_cents: null,
    });
    expect(used.offers).to.deep.equal([]);
    expect(used.alternatives.map((o) => [o.sku, o.condition, o.condition_label, o.original_price_cents])).to.deep.equal(
      [
        ['garrafa-usada-barata', 'refurbished', 'Recondicionado', null],
        ['garrafa-usada-cara', 'used', 'Usado', null],
      ],
    );
    expect(used.alternatives[0]).to.include({ installments: null, rating: null });
  });

  it('takes a query of any number of words within 200 characters: every word must still match, the last as a prefix', async () => {
    // Fourteen distinct words: more than the text index takes in one query (MAX_QUERY_WORDS, 12).
    const title = 'Kit jardim regador pá ancinho luva tesoura vaso adubo semente mangueira esguicho balde rastelo';
    await offer(hub, 'Loja-A', 'jardim-1', { title, gtin: '7891000400418' });
    // The same gtin without every word: an offer of the product found (rule 5's set), brought by the gtin.
    await offer(other, 'Loja-C', 'jardim-2', { title: 'Kit jardim', gtin: '7891000400418' });
    // Every word but the shortest, the one a 12-word ask of the index leaves out (`pa`).
    await offer(hub, 'Loja-B', 'jardim-3', { title: title.replace(' pá ', ' ') });
    await settle();
    const all = 'kit jardim regador pa ancinho luva tesoura vaso adubo semente mangueira esguicho balde rastelo';
    expect(all.split(' ')).to.have.length(14);
    const found = await q(all);
    expect(found.results.map((p) => p.offers.map((o) => o.sku).sort())).to.deep.equal([['jardim-1', 'jardim-2']]);
    expect(await heads(all.replace('rastelo', 'rast')), 'the last word as a prefix').to.deep.equal(['jardim-1']);
    expect(await heads(all.replace('rastelo', 'ras')), 'three characters are a prefix too').to.deep.equal(['jardim-1']);
    expect(await heads(all.replace('kit', 'ki')), 'a word before the last is whole').to.deep.equal([]);
    expect(await heads(`${all} zeppelin`), 'a word no offer holds').to.deep.equal([]);
    expect(await heads(`${all} kit jardim kit`), 'words asked again change nothing').to.deep.equal(['jardim-1']);
    const page = await raw(`/busca?q=${encodeURIComponent(all)}`);
    expect(page.status).to.equal(200);
    expect(page.text).to.include('jardim-1');
  });

  it('measures q in characters (code points), not UTF-16 units: 200 characters are fine, 201 are too long', async () => {
    const emoji = '\u{1F375}'; // one character, two UTF-16 units
    expect((await raw(`/api/search?q=${encodeURIComponent(emoji.repeat(200))}`)).status).to.equal(200);
    expect((await raw(`/busca?q=${encodeURIComponent(`${emoji.repeat(150)} cha`)}`)).status).to.equal(200);
    const long = await raw(`/api/search?q=${encodeURIComponent(emoji.repeat(201))}`);
    expect(long.status).to.equal(422);
    expect((JSON.parse(long.text) as { errors: { field: string }[] }).errors.map((e) => e.field)).to.deep.equal(['q']);
  });

  it('GET /v1/products/{sku}/visibility says searchable exactly for the products the search finds (every product of this world)', async () => {
    await settle();
    const testKey = await t.key(hub.partnerId, 'test');
    expect(await expectVisibilityIsSearch(t, [hub, other, testKey], from)).to.be.greaterThan(20);
    const vent = await hub.api.get('/products/vent-1/visibility');
    expect(vent.body).to.include({ searchable: true, fresh_until: new Date(T0 + 48 * HOUR).toISOString() });
    expect((await other.api.get('/products/vent-1/visibility')).status, "another partner's SKU").to.equal(404);
    expect((await testKey.api.get('/products/vent-1/visibility')).status, 'another environment').to.equal(404);
    const bule = (await testKey.api.get('/products/bule-teste/visibility')).body as {
      checks: { check: string; ok: boolean }[];
    };
    expect(
      bule.checks.filter((c) => !c.ok).map((c) => c.check),
      'a test product: only live fails',
    ).to.deep.equal(['live']);
  });

  it('GET /v1/insights/catalog counts the states GET /v1/products?state= lists, the searchable offers and the reasons', async () => {
    await settle();
    const testKey = await t.key(hub.partnerId, 'test');
    for (const p of [hub, other, testKey]) await expectCatalogInsights(p);
    await expectCatalogInsights(hub, 'Loja-A');
    const test = (await testKey.api.get('/insights/catalog')).body as { searchable: number; environment: string };
    expect(test).to.include({ environment: 'test' });
    expect(test.searchable, 'a test product passing every check but live').to.be.greaterThan(0);
    const bad = await hub.api.get('/insights/catalog?store_id=a%20b&x=1');
    expect(bad.status).to.equal(422);
    expect(bad.body.errors.map((e: { field: string }) => e.field).sort()).to.deep.equal(['store_id', 'x']);
  });

  it('GET /v1/insights/catalog counts across the 48 h boundary by the clock: inside an hour of writes, at the instant, after the lapses', async () => {
    // Writes in three hours (one offer unavailable), then reads at instants around each one's 48 h: the counts kept
    // per hour of last write must split the hour the boundary falls in exactly as `?state=` and Visibility do.
    const writes = [T0 + 20 * MINUTE, T0 + 50 * MINUTE, T0 + 70 * MINUTE, T0 + 50 * MINUTE];
    for (const [i, at] of writes.entries()) {
      t.clock.set(new Date(at));
      await offer(other, 'Loja-D', `fronteira-${i}`, { title: `Fronteira ${i}`, available: i !== 3 });
    }
    await settle();
    const instants = [0, 1, 20 * MINUTE, 20 * MINUTE + 1, 50 * MINUTE, 50 * MINUTE + 1, 60 * MINUTE, 70 * MINUTE + 1];
    for (const after of instants) {
      t.clock.set(new Date(T0 + 48 * HOUR + after));
      await expectCatalogInsights(other);
      await expectCatalogInsights(other, 'Loja-D');
    }
    expect(await stateOf(other, 'fronteira-2')).to.equal('stale');
    // The lapses recorded (the freshness reactor, by the clock) move the products out of their hours: same counts.
    expect((await t.admin.post('/clock', { advance_ms: 48 * HOUR })).status).to.equal(200);
    await settle();
    const lapsed = await t.service.reads.get<ProductDoc>(
      PRODUCTS,
      productDocId({ partnerId: other.partnerId, env: 'live' }, 'fronteira-2'),
    );
    expect(lapsed?.lapse_due_at, 'the lapse is recorded').to.equal(null);
    await expectCatalogInsights(other);
    await expectCatalogInsights(other, 'Loja-D');
  });

  it('GET /v1/insights/catalog counts products projected before their counted fields were kept the same way', async () => {
    await settle();
    // Every other product as a document of an older build: no page host, availability or reason codes of its own.
    const docs = await t.service.reads.find<ProductDoc>(PRODUCTS, { orderBy: [{ field: 'sku' }] });
    expect(docs.length).to.be.greaterThan(10);
    await t.service.reads.transact(async (tx) => {
      for (const [i, doc] of docs.entries()) {
        if (i % 2 === 1) continue;
        const older: Partial<ProductDoc> = { ...doc };
        delete older.page_host;
        delete older.available;
        delete older.reason_codes;
        await tx.put(PRODUCTS, older as ProductDoc);
      }
      // A projection of an older build keeps no counts: the readers count the products themselves.
      await tx.delete(PRODUCT_COUNTS, COUNTS_KEPT);
    });
    const testKey = await t.key(hub.partnerId, 'test');
    for (const p of [hub, other, testKey]) await expectCatalogInsights(p);
    await expectCatalogInsights(hub, 'Loja-A');
  });
});
