/**
 * The pages for people over HTTP (SHOPPER.md): the home page, `/busca` (the same results as `/api/search`, the same
 * bounds and brake) and the offer page at `svc_url`, and every rule partners are promised as a shopper reads it on
 * those pages: shipping (rule 2: "Frete a calcular" when not sent, never free), freshness (rule 3: 48 h to the
 * millisecond with the manual clock), price sanity (rule 5), the condition rule, commission (rule 1), store status;
 * pt-BR, escaped partner text, phone-sized layout, links that stay on the site.
 */
import { expect } from 'chai';
import { startTestService, type Partner, type TestService } from '../support/service.js';
import { HOUR, addressOf, registerStore } from './commerce-support.js';
import {
  getFrom,
  offer as makeOffer,
  rootOf,
  settle as settleAll,
  shopperWorld,
  type RawAnswer,
} from './shopper-support.js';

type OfferJson = { sku: string; buy_url: string; offer_url: string };
type PageJson = {
  query: string;
  results: { offers: OfferJson[]; alternatives: OfferJson[] }[];
  next_cursor: string | null;
};

/** The `href`s of the page's "Ir à loja" links, in page order. */
const buyLinks = (html: string): string[] =>
  [...html.matchAll(/<a class="(?:go|buy)" href="([^"]+)"[^>]*>Ir à loja<\/a>/g)].map((m) => m[1]);
/** One offer's line of a results page (from its store link to its "Ir à loja"). */
const lineOf = (html: string, sku: string): string => {
  const m = new RegExp(`<li class="offer">(?:(?!</li>).)*href="/r/[^"]*/${sku}"(?:(?!</li>).)*</li>`).exec(html);
  expect(m, `a line for ${sku}`).to.not.equal(null);
  return m![0];
};

describe('shopper pages over HTTP: /, /busca, the offer page', function () {
  let t: TestService;
  let hub: Partner;
  let other: Partner;
  let address: (store: string) => string;
  const T0 = Date.parse('2026-05-04T09:00:00.000Z');
  const settle = () => settleAll(t);
  const offer = (p: Partner, store: string, sku: string, fields: Record<string, unknown>) =>
    makeOffer(t, p, store, sku, fields);
  const page = (path: string, from = '127.0.0.1', headers: Record<string, string> = {}): Promise<RawAnswer> =>
    getFrom(`${rootOf(t)}${path}`, from, headers);
  const busca = async (words: string): Promise<string> => {
    const r = await page(`/busca?q=${encodeURIComponent(words)}`);
    expect(r.status, r.text).to.equal(200);
    expect(r.headers.get('content-type')).to.equal('text/html; charset=utf-8');
    return r.text;
  };
  const api = async (words: string): Promise<PageJson> =>
    JSON.parse((await page(`/api/search?q=${encodeURIComponent(words)}`)).text) as PageJson;

  before(async () => {
    t = await startTestService();
    ({ hub, other, address } = await shopperWorld(t, T0, 'Loja <Azul> & Cia'));
  });
  after(async () => t.close());

  it('home: pt-BR, phone-sized, a search form that sends q to /busca, readable without JavaScript', async () => {
    const r = await page('/');
    expect(r.status).to.equal(200);
    expect(r.headers.get('content-type')).to.equal('text/html; charset=utf-8');
    expect(r.text).to.match(/^<!doctype html>\n<html lang="pt-BR">/);
    expect(r.text).to.contain('<meta name="viewport" content="width=device-width, initial-scale=1">');
    expect(r.text).to.match(
      /<form class="search" role="search" method="get" action="\/busca"><input type="search" name="q" /,
    );
    expect(r.text).to.not.contain('<script');
    expect(
      (await page('/', '127.0.0.1', { Accept: 'application/json' })).status,
      'the home page is a page for any client',
    ).to.equal(200);
  });

  it('results: the same offers in the same order as /api/search, with price, de/por, installments, shipping, rating, store and "Ir à loja" to the redirector', async () => {
    const gtin = '7891000100103';
    await offer(hub, 'Loja-A', 'chaleira-a', {
      title: 'Chaleira elétrica inox',
      gtin,
      price_cents: 129990,
      original_price_cents: 159990,
      installments: { count: 10, value_cents: 12999, interest_free: true },
      rating: { average: 4.25, count: 31 },
    });
    await offer(hub, 'Loja-B', 'chaleira-b', {
      title: 'Chaleira elétrica inox',
      gtin,
      price_cents: 139900,
      shipping: { type: 'free', delivery_days_max: 5 },
    });
    await offer(other, 'Loja-C', 'chaleira-c', {
      title: 'Chaleira elétrica inox',
      gtin,
      price_cents: 134900,
      shipping: { type: 'fixed', cost_cents: 1990, delivery_days_min: 2, delivery_days_max: 4 },
    });
    await offer(other, 'Loja-D', 'chaleira-d', { title: 'Chaleira de fogão', price_cents: 4990 });
    await settle();
    const html = await busca('chaleira');
    const json = await api('chaleira');
    const jsonOrder = json.results
      .flatMap((p) => [...p.offers, ...p.alternatives])
      .map((o) => new URL(o.buy_url).pathname);
    expect(jsonOrder).to.have.length(4);
    expect(buyLinks(html)).to.deep.equal(jsonOrder);
    expect(html).to.contain('<h1>Resultados para “chaleira”</h1>');

    const a = lineOf(html, 'chaleira-a');
    expect(a).to.contain('<strong class="store">Loja &lt;Azul&gt; &amp; Cia</strong>');
    expect(a).to.contain('<span class="from">de R$ 1.599,90</span> por <span class="price">R$ 1.299,90</span>');
    expect(a).to.contain('ou 10× de R$ 129,99 sem juros');
    expect(a).to.contain('★ 4,3 (31 avaliações)');
    expect(a).to.contain('<span class="muted shipping">Frete a calcular</span>'); // rule 2: not sent, never free
    expect(a).to.not.contain('grátis');
    expect(a).to.contain(`href="/p/${address('loja-a')}/chaleira-a"`);
    expect(lineOf(html, 'chaleira-b')).to.contain('Frete grátis · entrega em até 5 dias');
    expect(lineOf(html, 'chaleira-c')).to.contain('Frete R$ 19,90 · entrega em 2 a 4 dias');
    expect(html).to.contain('a partir de <span class="price">R$ 1.299,90</span> · 3 ofertas');
  });

  it('the offer page shows one offer with its facts and "Ir à loja"; the results page links to it', async () => {
    const r = await page(`/p/${address('loja-a')}/chaleira-a`);
    expect(r.status).to.equal(200);
    expect(r.text)
      .to.contain('<html lang="pt-BR">')
      .and.contain('<title>Chaleira elétrica inox — Compare ofertas</title>');
    expect(r.text).to.contain('Vendido por <strong class="store">Loja &lt;Azul&gt; &amp; Cia</strong>');
    expect(r.text).to.contain('<span class="from">de R$ 1.599,90</span> por <span class="price">R$ 1.299,90</span>');
    expect(r.text)
      .to.contain('ou 10× de R$ 129,99 sem juros')
      .and.contain('Frete a calcular')
      .and.contain('★ 4,3 (31 avaliações)');
    expect(buyLinks(r.text)).to.deep.equal([`/r/${address('loja-a')}/chaleira-a`]);
    expect((await page(`/p/${address('Loja-A')}/chaleira-a`)).status, 'the address is lower-cased').to.equal(404);
    expect((await page(`/p/${addressOf(other, 'loja-a')}/chaleira-a`)).status, "another partner's").to.equal(404);
    expect((await page('/p/loja-a/chaleira-a')).status, 'the store alone').to.equal(404);
  });

  it('escapes partner text and the query everywhere (elements and attributes)', async () => {
    await offer(hub, 'Loja-A', 'xss-1', {
      title: 'Bolsa <script>alert(1)</script> "couro" & \'fivela\'',
      brand: '<b>Marca</b>',
      image_urls: ["https://cdn.shop.test/a.jpg?x=1&y='2'"],
    });
    await settle();
    const html = await busca('bolsa "couro" <fivela>');
    expect(html).to.not.contain('<script>').and.not.contain('<b>Marca').and.not.contain('<fivela>');
    expect(html).to.contain('Bolsa &lt;script&gt;alert(1)&lt;/script&gt; &quot;couro&quot; &amp; &#39;fivela&#39;');
    expect(html).to.contain('&lt;b&gt;Marca&lt;/b&gt;');
    expect(html).to.contain('src="https://cdn.shop.test/a.jpg?x=1&amp;y=&#39;2&#39;"');
    expect(html)
      .to.contain('value="bolsa &quot;couro&quot; &lt;fivela&gt;"')
      .and.contain('Resultados para “bolsa &quot;couro&quot; &lt;fivela&gt;”');
    const offerPage = await page(`/p/${address('loja-a')}/xss-1`);
    expect(offerPage.text).to.not.contain('<script>');
    expect(offerPage.text).to.contain('<title>Bolsa &lt;script&gt;alert(1)&lt;/script&gt;');
  });

  it('condition: used and refurbished appear as labelled alternatives, never as the new product; only-used products have no headline price', async () => {
    const gtin = '7891000200209';
    await offer(hub, 'Loja-A', 'violao-new', { title: 'Violão folk', gtin, price_cents: 80000 });
    await offer(hub, 'Loja-B', 'violao-used', { title: 'Violão folk', gtin, price_cents: 30000, condition: 'used' });
    await offer(other, 'Loja-C', 'violao-ref', {
      title: 'Violão folk',
      gtin,
      price_cents: 50000,
      condition: 'refurbished',
    });
    await offer(other, 'Loja-D', 'violao-velho', { title: 'Violão antigo', price_cents: 9000, condition: 'used' });
    await settle();
    const html = await busca('violao');
    const product =
      /<article class="card product">(?:(?!<\/article>).)*violao-new(?:(?!<\/article>).)*<\/article>/.exec(html)![0];
    expect(product).to.contain('a partir de <span class="price">R$ 800,00</span> · 1 oferta<');
    const [news, alternatives] = product.split('<h3 class="muted">Usados e recondicionados</h3>');
    expect(buyLinks(news)).to.deep.equal([`/r/${address('loja-a')}/violao-new`]);
    expect(buyLinks(alternatives)).to.deep.equal([
      `/r/${address('loja-b')}/violao-used`,
      `/r/${address('loja-c')}/violao-ref`,
    ]);
    expect(lineOf(html, 'violao-used')).to.contain('<span class="label condition">Usado</span>');
    expect(lineOf(html, 'violao-ref')).to.contain('<span class="label condition">Recondicionado</span>');
    expect(lineOf(html, 'violao-new')).to.not.contain('class="label condition"');
    const usedOnly =
      /<article class="card product">(?:(?!<\/article>).)*violao-velho(?:(?!<\/article>).)*<\/article>/.exec(html)![0];
    expect(usedOnly).to.contain('Sem oferta de produto novo.').and.not.contain('a partir de');
    expect((await page(`/p/${address('loja-b')}/violao-used`)).text).to.contain(
      '<span class="label condition">Usado</span>',
    );
  });

  it('rule 5: an offer far below the others of its product is left out of the results page, and its offer page still answers', async () => {
    const gtin = '7891000300305';
    await offer(hub, 'Loja-A', 'mixer-a', { title: 'Mixer de mão', gtin, price_cents: 20000 });
    await offer(hub, 'Loja-B', 'mixer-b', { title: 'Mixer de mão', gtin, price_cents: 22000 });
    await offer(other, 'Loja-C', 'mixer-c', { title: 'Mixer de mão', gtin, price_cents: 10000 }); // others 9999, 20000, 22000: exactly half, stays
    await offer(other, 'Loja-D', 'mixer-d', { title: 'Mixer de mão', gtin, price_cents: 9999 }); // others 10000, 20000, 22000: below half, out
    await settle();
    expect(buyLinks(await busca('mixer'))).to.deep.equal([
      `/r/${address('loja-c')}/mixer-c`,
      `/r/${address('loja-a')}/mixer-a`,
      `/r/${address('loja-b')}/mixer-b`,
    ]);
    expect((await page(`/p/${address('loja-d')}/mixer-d`)).status).to.equal(200);
  });

  it('rule 1: a commission changes nothing a shopper sees', async () => {
    await offer(hub, 'Loja-A', 'ralador-a', { title: 'Ralador inox', price_cents: 3000 });
    await offer(other, 'Loja-C', 'ralador-c', { title: 'Ralador inox grande', price_cents: 3500 });
    await settle();
    const before = await busca('ralador');
    const patch = await other.api.patch('/products/ralador-c', {
      commission: { type: 'percentage', rate: 80 },
      updated_at: t.clock.now().toISOString(),
    });
    expect(patch.status, JSON.stringify(patch.body)).to.equal(200);
    await settle();
    expect(await busca('ralador')).to.equal(before);
  });

  it('rule 3: 48 h without a PUT or PATCH takes the offer off the results page, its offer page and the redirector, to the millisecond', async () => {
    t.clock.set(new Date(T0));
    await offer(hub, 'Loja-B', 'cuscuzeira', { title: 'Cuscuzeira de alumínio' });
    await settle();
    try {
      t.clock.set(new Date(T0 + 48 * HOUR));
      expect(buyLinks(await busca('cuscuzeira')), 'exactly 48 h: still in').to.deep.equal([
        `/r/${address('loja-b')}/cuscuzeira`,
      ]);
      expect((await page(`/p/${address('loja-b')}/cuscuzeira`)).status).to.equal(200);
      expect(
        (await page(`/r/${address('loja-b')}/cuscuzeira`, '127.0.0.1', {})).status,
        'the redirector too (HEAD would be the same)',
      ).to.equal(302);
      t.clock.set(new Date(T0 + 48 * HOUR + 1));
      expect(buyLinks(await busca('cuscuzeira')), '48 h and 1 ms: out').to.deep.equal([]);
      expect(await busca('cuscuzeira')).to.contain('Nenhuma oferta encontrada.');
      expect((await page(`/p/${address('loja-b')}/cuscuzeira`)).status).to.equal(404);
      expect((await page(`/r/${address('loja-b')}/cuscuzeira`)).status).to.equal(404);
    } finally {
      t.clock.set(new Date(T0));
    }
  });

  it('store status: a suspended store takes its offers off every page, and they come back when it is reinstated', async () => {
    await offer(hub, 'Loja-B', 'pilao', { title: 'Pilão de madeira' });
    await settle();
    expect(buyLinks(await busca('pilao'))).to.deep.equal([`/r/${address('loja-b')}/pilao`]);
    const admin = (action: string) => t.admin.post(`/partners/${hub.partnerId}/live/stores/Loja-B/${action}`, {});
    expect((await admin('suspend')).status).to.equal(200);
    await settle();
    expect(buyLinks(await busca('pilao'))).to.deep.equal([]);
    expect((await page(`/p/${address('loja-b')}/pilao`)).status).to.equal(404);
    expect((await page(`/r/${address('loja-b')}/pilao`)).status).to.equal(404);
    expect((await admin('reinstate')).status).to.equal(200);
    await settle();
    expect(buyLinks(await busca('pilao'))).to.deep.equal([`/r/${address('loja-b')}/pilao`]);
  });

  it('the offer page answers 404 pages for the test area and unknown offers, Problems to JSON clients', async () => {
    const test = await t.key(hub.partnerId, 'test');
    await registerStore(test, 'Loja-T');
    expect((await t.approveStore(test, 'Loja-T', 'test')).status).to.equal(200);
    const r = await page(`/test/p/${addressOf(hub, 'loja-t')}/sku-t`);
    expect(r.status).to.equal(404);
    expect(r.text).to.contain('<html lang="pt-BR">').and.contain('Oferta indisponível');
    const json = await page(`/p/${address('loja-a')}/nao-existe`, '127.0.0.1', { Accept: 'application/json' });
    expect(json.status).to.equal(404);
    expect(json.headers.get('content-type')).to.contain('application/problem+json');
  });

  it('pages the results with a "Mais resultados" link that keeps the query', async () => {
    for (let i = 0; i < 22; i++)
      await offer(i % 2 ? hub : other, i % 2 ? 'Loja-A' : 'Loja-C', `pote-${i}`, {
        title: `Pote hermético ${i}`,
        price_cents: 1000 + i,
      });
    await settle();
    const first = await busca('pote');
    expect(buyLinks(first)).to.have.length(20);
    const next = /<a href="([^"]+)" rel="next">Mais resultados<\/a>/.exec(first)![1].replace(/&amp;/g, '&');
    expect(next).to.match(/^\/busca\?q=pote&cursor=/);
    const second = await page(next);
    expect(second.status).to.equal(200);
    expect(buyLinks(second.text)).to.have.length(2);
    expect(second.text).to.not.contain('rel="next"');
  });

  it('refuses a bad query with a 422 page (a Problem for JSON clients) that keeps the search box', async () => {
    for (const query of ['', 'q=', 'q=%20%20', `q=${'a'.repeat(201)}`, 'q=cafe&color=azul', 'q=cafe&cursor=nope']) {
      const r = await page(`/busca?${query}`);
      expect(r.status, query).to.equal(422);
      expect(r.headers.get('content-type'), query).to.equal('text/html; charset=utf-8');
      expect(r.text, query).to.contain('<form class="search"').and.contain('Busca inválida');
    }
    expect((await page('/busca?q=cafe&color=azul')).text).to.contain('O parâmetro “color” não existe nesta busca.');
    const json = await page('/busca?q=cafe&color=azul', '127.0.0.1', { Accept: 'application/json' });
    expect(json.status).to.equal(422);
    expect(json.headers.get('content-type')).to.contain('application/problem+json');
    expect((JSON.parse(json.text) as { errors: { field: string }[] }).errors.map((e) => e.field)).to.deep.equal([
      'color',
    ]);
  });

  it('brakes /busca and /api/search together at 120 a minute per address: a 429 page with Retry-After', async () => {
    t.clock.set(new Date(T0 + 30 * 60_000)); // a fresh minute
    const from = '127.0.0.9';
    try {
      for (let i = 0; i < 60; i++) expect((await page('/busca?q=pote', from)).status).to.equal(200);
      for (let i = 0; i < 60; i++) expect((await page('/api/search?q=pote', from)).status).to.equal(200);
      const refused = await page('/busca?q=pote', from);
      expect(refused.status).to.equal(429);
      expect(refused.headers.get('content-type')).to.equal('text/html; charset=utf-8');
      expect(refused.text).to.contain('Muitas buscas');
      expect(Number(refused.headers.get('retry-after'))).to.be.within(1, 60);
      expect((await page('/api/search?q=pote', from)).status).to.equal(429);
      expect((await page(`/p/${address('loja-a')}/chaleira-a`, from)).status, 'offer pages are not searches').to.equal(
        200,
      );
      expect((await page('/busca?q=pote', '127.0.0.10')).status, 'another address').to.equal(200);
    } finally {
      t.clock.set(new Date(T0));
    }
  });
});
