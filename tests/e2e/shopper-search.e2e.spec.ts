/**
 * `GET /api/search` over HTTP (SHOPPER.md): public (no key), what is searchable (rule 3 with the manual clock moved
 * past 48 h, to the millisecond), shipping (rule 2), commission (rule 1), price sanity (rule 5), the condition rule,
 * matching (accents, case, prefix of the last word), query bounds and the rate brake per address.
 */
import { expect } from 'chai';
import { startTestService, type Partner, type TestService } from '../support/service.js';
import { HOUR, putProduct, registerStore } from './commerce-support.js';
import {
  expectVisibilityIsSearch,
  getFrom,
  offer as makeOffer,
  rootOf,
  settle as settleAll,
  shopperWorld,
} from './shopper-support.js';

type OfferJson = {
  store: { store_id: string; name: string };
  sku: string;
  price_cents: number;
  shipping: {
    kind: string;
    cost_cents: number | null;
    delivery_days_min: number | null;
    delivery_days_max: number | null;
  };
  condition: string;
  condition_label: string | null;
  offer_url: string;
  buy_url: string;
};
type ProductJson = {
  title: string;
  gtin: string | null;
  image_url: string;
  price_from_cents: number | null;
  offers: OfferJson[];
  alternatives: OfferJson[];
};
type PageJson = { query: string; results: ProductJson[]; next_cursor: string | null };

describe('shopper search over HTTP: GET /api/search', function () {
  let t: TestService;
  let hub: Partner;
  let other: Partner;
  let address: (store: string) => string;
  const T0 = Date.parse('2026-03-01T12:00:00.000Z');
  const search = async (query: string, from = '127.0.0.1', headers: Record<string, string> = {}) => {
    const r = await getFrom(`${rootOf(t)}/api/search?${query}`, from, headers);
    return {
      status: r.status,
      headers: r.headers,
      body: JSON.parse(r.text) as PageJson & { errors?: { field: string; code: string }[] },
    };
  };
  const q = async (words: string) => {
    const r = await search(`q=${encodeURIComponent(words)}`);
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    return r.body;
  };
  const settle = () => settleAll(t);
  const offer = (p: Partner, store: string, sku: string, fields: Record<string, unknown>) =>
    makeOffer(t, p, store, sku, fields);

  before(async () => {
    t = await startTestService();
    ({ hub, other, address } = await shopperWorld(t, T0));
  });
  after(async () => t.close());

  it('is public, matches words ignoring case and accents and the last word as a prefix, and shows shipping as sent (rule 2)', async () => {
    await offer(hub, 'Loja-A', 'cafe-1', { title: 'Café Torrado Especial', price_cents: 3990 });
    await offer(hub, 'Loja-B', 'cafe-2', {
      title: 'Cafeteira Italiana',
      price_cents: 9990,
      shipping: { type: 'free' },
    });
    await offer(other, 'Loja-C', 'cafe-3', {
      title: 'CAFE moido',
      price_cents: 2990,
      shipping: { type: 'fixed', cost_cents: 1500, delivery_days_min: 2 },
    });
    await settle();
    const page = await q('cafe');
    expect(page.query).to.equal('cafe');
    const skus = page.results.flatMap((p) => p.offers.map((o) => o.sku)).sort();
    expect(skus).to.deep.equal(['cafe-1', 'cafe-2', 'cafe-3']); // the prefix 'cafe' reaches 'cafeteira'
    const bySku = new Map(page.results.flatMap((p) => p.offers).map((o) => [o.sku, o]));
    expect(bySku.get('cafe-1')!.shipping).to.deep.equal({
      kind: 'to_be_calculated',
      cost_cents: null,
      delivery_days_min: null,
      delivery_days_max: null,
    });
    expect(bySku.get('cafe-2')!.shipping).to.deep.equal({
      kind: 'free',
      cost_cents: 0,
      delivery_days_min: null,
      delivery_days_max: null,
    });
    expect(bySku.get('cafe-3')!.shipping).to.deep.equal({
      kind: 'fixed',
      cost_cents: 1500,
      delivery_days_min: 2,
      delivery_days_max: null,
    });
    expect(bySku.get('cafe-1')!.store).to.deep.equal({ store_id: 'Loja-A', name: 'Loja A' });
    expect(new URL(bySku.get('cafe-1')!.offer_url).pathname).to.equal(`/p/${address('loja-a')}/cafe-1`);
    expect(new URL(bySku.get('cafe-1')!.buy_url).pathname).to.equal(`/r/${address('loja-a')}/cafe-1`);
    expect((await q('café torr')).results.map((p) => p.offers[0].sku)).to.deep.equal(['cafe-1']);
    expect((await q('Torrado cafe')).results.map((p) => p.offers[0].sku)).to.deep.equal(['cafe-1']);
    expect((await q('ca')).results).to.deep.equal([]); // a prefix needs 3 characters
  });

  it('answers JSON that is not kept by caches, echoing the query as sent (quotes, backslashes, accents)', async () => {
    const query = '  café "moído" \\ 100% </script>  ';
    const r = await search(`q=${encodeURIComponent(query)}`);
    expect(r.status).to.equal(200);
    expect(r.headers.get('content-type')).to.equal('application/json; charset=utf-8');
    expect(r.headers.get('cache-control')).to.equal('no-store');
    expect(r.body.query).to.equal(query.trim());
    expect(r.body).to.have.all.keys('query', 'results', 'next_cursor');
  });

  it('leaves out what is not searchable: pending (no cover verdict), unavailable, the test area; stock 0 with available true stays', async () => {
    await putProduct(t, hub, 'Loja-A', 'kiwi-pending', { title: 'Kiwi pendente' }); // no cover check: pending
    await offer(hub, 'Loja-A', 'kiwi-off', { title: 'Kiwi esgotado', available: false });
    await offer(hub, 'Loja-A', 'kiwi-zero', { title: 'Kiwi estoque zero', stock_quantity: 0 });
    const test = await t.key(hub.partnerId, 'test');
    await registerStore(test, 'Loja-T');
    await putProduct(t, test, 'Loja-T', 'kiwi-test', { title: 'Kiwi de teste' });
    await settle();
    expect((await q('kiwi')).results.map((p) => p.offers[0].sku)).to.deep.equal(['kiwi-zero']);
  });

  it('rule 3: an offer leaves search when more than 48 h pass without a PUT or PATCH (to the millisecond), and comes back with a PATCH', async () => {
    t.clock.set(new Date(T0));
    await offer(hub, 'Loja-B', 'uva-1', { title: 'Uva passa' });
    await settle();
    expect((await q('uva')).results).to.have.length(1);
    t.clock.set(new Date(T0 + 48 * HOUR));
    expect((await q('uva')).results, 'exactly 48 h: still in').to.have.length(1);
    t.clock.set(new Date(T0 + 48 * HOUR + 1));
    expect((await q('uva')).results, '48 h and 1 ms: out').to.have.length(0);
    const patch = await hub.api.patch('/products/uva-1', {
      price_cents: 1000,
      updated_at: t.clock.now().toISOString(),
    });
    expect(patch.status, JSON.stringify(patch.body)).to.equal(200);
    await settle();
    expect((await q('uva')).results.map((p) => p.offers[0].price_cents)).to.deep.equal([1000]);
    t.clock.set(new Date(T0));
  });

  it('rule 5: an offer below half of the median of the other offers of its product is left out of that search, exactly half stays', async () => {
    t.clock.set(new Date(T0));
    const gtin = '7891234567895';
    await offer(hub, 'Loja-A', 'melao-a', { title: 'Melão amarelo', gtin, price_cents: 10000 });
    await offer(hub, 'Loja-B', 'melao-b', { title: 'Melão amarelo', gtin, price_cents: 12000 });
    await offer(other, 'Loja-C', 'melao-c', { title: 'Melão amarelo', gtin, price_cents: 5000 }); // others 4000, 10000, 12000: exactly half, stays
    await offer(other, 'Loja-D', 'melao-d', { title: 'Melão amarelo', gtin, price_cents: 4000 }); // others 5000, 10000, 12000: below half, out
    await settle();
    const [product, ...rest] = (await q('melao')).results;
    expect(rest).to.deep.equal([]);
    expect(product.gtin).to.equal(gtin);
    expect(product.offers.map((o) => o.sku)).to.deep.equal(['melao-c', 'melao-a', 'melao-b']);
    expect(product.price_from_cents).to.equal(5000);
    // The left-out product keeps its state for its partner.
    const status = await other.api.get('/products/melao-d');
    expect(status.body.state).to.equal('accepted');
  });

  it('condition: used and refurbished offers are labelled alternatives, never the new product asked; a product of used offers only has empty offers', async () => {
    t.clock.set(new Date(T0));
    const gtin = '7890000000017';
    await offer(hub, 'Loja-A', 'pera-new', { title: 'Pera portátil', gtin, price_cents: 20000 });
    await offer(hub, 'Loja-B', 'pera-used', { title: 'Pera portátil', gtin, price_cents: 9000, condition: 'used' });
    await offer(other, 'Loja-C', 'pera-ref', {
      title: 'Pera portátil',
      gtin,
      price_cents: 12000,
      condition: 'refurbished',
    });
    await offer(other, 'Loja-D', 'pera-only-used', { title: 'Pera antiga', price_cents: 100, condition: 'used' });
    await settle();
    const results = (await q('pera')).results;
    const withGtin = results.find((p) => p.gtin === gtin)!;
    expect(withGtin.offers.map((o) => o.sku)).to.deep.equal(['pera-new']);
    expect(withGtin.price_from_cents).to.equal(20000);
    expect(withGtin.alternatives.map((o) => [o.sku, o.condition, o.condition_label])).to.deep.equal([
      ['pera-used', 'used', 'Usado'],
      ['pera-ref', 'refurbished', 'Recondicionado'],
    ]);
    const usedOnly = results.find((p) => p.gtin === null)!;
    expect(usedOnly.offers).to.deep.equal([]);
    expect(usedOnly.price_from_cents).to.equal(null);
    expect(usedOnly.alternatives.map((o) => o.sku)).to.deep.equal(['pera-only-used']);
  });

  // Store-level commission and every other input are covered by tests/shopper/ranking.property.spec.ts.
  it('rule 1: changing a product commission changes no answer, order included', async () => {
    t.clock.set(new Date(T0));
    await offer(hub, 'Loja-A', 'limao-1', {
      title: 'Limão taiti',
      price_cents: 500,
      rating: { average: 4.5, count: 10 },
    });
    await offer(other, 'Loja-C', 'limao-2', { title: 'Limão siciliano', price_cents: 900 });
    await settle();
    const before = await q('limao');
    expect(before.results).to.have.length(2);
    const patch = await other.api.patch('/products/limao-2', {
      commission: { type: 'percentage', rate: 90 },
      updated_at: t.clock.now().toISOString(),
    });
    expect(patch.status, JSON.stringify(patch.body)).to.equal(200);
    await settle();
    expect(await q('limao')).to.deep.equal(before);
  });

  /** An offer sent with every field no shopper sees, then a PATCH of its price (each test sends its own). */
  const fullOffer = async (sku: string, origin: string) => {
    t.clock.set(new Date(T0));
    await offer(hub, 'Loja-A', sku, {
      title: 'Manga palmer',
      description: 'Doce e sem fiapos. '.repeat(200),
      attributes: { origem: origin },
      group_id: 'mangas',
      variant_attributes: { tamanho: 'G' },
      stock_quantity: 7,
      image_urls: [`https://cdn.shop.test/${sku}.jpg`, `https://cdn.shop.test/${sku}-2.jpg`],
      commission: { type: 'percentage', rate: 12 },
    });
    const patch = await hub.api.patch(`/products/${sku}`, {
      price_cents: 1990,
      updated_at: t.clock.now().toISOString(),
    });
    expect(patch.status, JSON.stringify(patch.body)).to.equal(200);
    await settle();
  };

  it('an offer sent with a description, stock, variant fields and several photos: found by its attributes after a PATCH, shown with its cover', async () => {
    await fullOffer('manga-1', 'Petrolina');
    const [found] = (await q('petrolina')).results;
    expect(found.offers.map((o) => [o.sku, o.price_cents])).to.deep.equal([['manga-1', 1990]]);
    expect(found.image_url).to.equal('https://cdn.shop.test/manga-1.jpg');
  });

  it('the offers model keeps what the shopper side shows: no commission, description, stock or variant fields, the cover of the photos', async function () {
    if (process.env.TOPOLOGY === 'multi') this.skip(); // the read model is read in the process (embedded only)
    await fullOffer('manga-2', 'Juazeiro');
    const doc = await t.service.operations.reads.get<{ _id: string; product: Record<string, unknown> }>(
      'offers',
      `live:${hub.partnerId}:manga-2`,
    );
    expect(Object.keys(doc!.product)).to.include.members(['title', 'attributes', 'price_cents', 'image_urls']);
    for (const field of ['commission', 'description', 'group_id', 'variant_attributes', 'stock_quantity'])
      expect(doc!.product, field).not.to.have.property(field);
    expect(doc!.product.image_urls).to.deep.equal(['https://cdn.shop.test/manga-2.jpg']);
    expect(doc!.product.price_cents).to.equal(1990);
  });

  it('refuses a bad query with a 422 Problem listing the fields, and pages with a signed cursor', async () => {
    const missing = await search('');
    expect(missing.status).to.equal(422);
    expect(missing.body.errors!.map((e) => e.field)).to.deep.equal(['q']);
    expect((await search('q=%20%20')).status).to.equal(422);
    expect((await search(`q=${'a'.repeat(201)}`)).status).to.equal(422);
    expect((await search(`q=${'a'.repeat(200)}`)).status).to.equal(200);
    const bad = await search('q=cafe&limit=0&color=blue');
    expect(bad.status).to.equal(422);
    expect(bad.body.errors!.map((e) => e.field).sort()).to.deep.equal(['color', 'limit']);
    expect((await search('q=cafe&limit=51')).status).to.equal(422);
    expect((await search('q=cafe&cursor=abc')).status).to.equal(422);
    const first = await search('q=cafe&limit=2');
    expect(first.body.results).to.have.length(2);
    expect(first.body.next_cursor).to.be.a('string');
    const second = await search(`q=cafe&limit=2&cursor=${encodeURIComponent(first.body.next_cursor!)}`);
    expect(second.status).to.equal(200);
    expect(second.body.results).to.have.length(1);
    expect(second.body.next_cursor).to.equal(null);
    const otherQuery = await search(`q=uva&cursor=${encodeURIComponent(first.body.next_cursor!)}`);
    expect(otherQuery.status, 'a cursor belongs to its query').to.equal(422);
  });

  it('brakes at 120 searches per minute per address (429 with Retry-After), by the service clock', async () => {
    t.clock.set(new Date(T0 + 10 * 60_000)); // a fresh minute
    const from = '127.0.0.7';
    for (let i = 0; i < 120; i++) expect((await search('q=cafe', from)).status).to.equal(200);
    const refused = await search('q=cafe', from);
    expect(refused.status).to.equal(429);
    expect(refused.headers.get('content-type')).to.contain('application/problem+json');
    expect(refused.body).to.include({ status: 429 });
    expect(Number(refused.headers.get('retry-after'))).to.be.within(1, 60);
    // A client cannot pick its address: an X-Forwarded-For it writes itself is not believed.
    expect(
      (await search('q=cafe', from, { 'X-Forwarded-For': '198.51.100.8' })).status,
      'a forged X-Forwarded-For',
    ).to.equal(429);
    expect((await search('q=cafe', '127.0.0.8')).status, 'another address').to.equal(200);
    t.clock.set(new Date(T0 + 11 * 60_000));
    expect((await search('q=cafe', from)).status, 'the next minute').to.equal(200);
    t.clock.set(new Date(T0));
  });

  it('GET /v1/products/{sku}/visibility says searchable exactly for the products the search finds (every product of this world)', async () => {
    await settle();
    let n = 0;
    const from = (): string => `127.0.2.${(n++ % 250) + 1}`;
    expect(await expectVisibilityIsSearch(t, [hub, other], from)).to.be.greaterThan(10);
  });
});
