/**
 * The shopper pages in a real browser: Playwright (playwright-core) driving Debian's Chromium (`/usr/bin/chromium`,
 * installed by `make test` through infra/topology/scripts/install-system-deps.sh). A shopper searches from the home page,
 * opens an offer, follows "Ir à loja" through the redirector to the store's page — a loopback HTTPS server that
 * receives `svc_click` — and the click then appears in `GET /v1/clicks` of that partner.
 *
 * Everything stays on loopback: Chromium resolves the store's names to 127.0.0.1 and nothing else
 * (`--host-resolver-rules`), with every background service off (the machine's network is closed; without those
 * flags Chromium waits on lookups). Each wait is for a state with a deadline, never a sleep.
 *
 * `SHOPPER_SCREENSHOTS=1` writes a phone-sized PNG of each page to docs/screenshots/ (shown in the README).
 */
import { expect } from 'chai';
import { type BrowserContext, type Page } from 'playwright-core';
import {
  BROWSER_DEADLINE_MS,
  expectFitsPhone,
  launchChromium,
  screenshots,
  watchedPage,
  type Browser,
} from '../support/chromium.js';
import { startLoopbackSite, SITE_NAMES, type LoopbackSite } from '../support/loopback-site.js';
import { startTestService, type Partner, type TestService } from '../support/service.js';
import { until } from '../support/deadline.js';
import { registerStore } from '../e2e/commerce-support.js';
import { offer, rootOf, settle } from '../e2e/shopper-support.js';

const SCREENSHOTS = screenshots('SHOPPER_SCREENSHOTS');
const DEADLINE_MS = BROWSER_DEADLINE_MS;

/** The store's site on loopback: product pages that show the svc_click they receive, and covers. */
async function startStore(): Promise<LoopbackSite & { clicks: string[] }> {
  const clicks: string[] = [];
  const site = await startLoopbackSite((url, res) => {
    if (!url.pathname.startsWith('/produto/')) return false;
    const click = url.searchParams.get('svc_click') ?? '';
    if (click) clicks.push(click);
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
    res.end(
      `<!doctype html><html lang="pt-BR"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Loja Azul</title></head>` +
        `<body style="font-family:sans-serif;padding:1rem"><h1>Loja Azul</h1><p>Chaleira elétrica inox</p><p id="click">svc_click: ${click.replace(/[^A-Za-z0-9_-]/g, '')}</p></body></html>`,
    );
    return true;
  });
  return { ...site, clicks };
}

describe('shopper pages in Chromium: search, offer page, "Ir à loja", the click in GET /clicks', function () {
  this.timeout(180_000);
  let t: TestService;
  let hub: Partner;
  let other: Partner;
  let store: Awaited<ReturnType<typeof startStore>>;
  let context: BrowserContext;
  let browser: Browser | undefined;

  before(async () => {
    store = await startStore();
    t = await startTestService();
    t.clock.set(new Date('2026-06-01T12:00:00.000Z'));
    hub = await t.partner({ type: 'hub', name: 'Loja Azul' });
    other = await t.partner({ type: 'hub', name: 'Outra' });
    await registerStore(hub, 'Loja-Azul', {
      name: 'Loja Azul',
      domains: ['shop.test'],
      image_hosts: ['cdn.shop.test'],
    });
    await registerStore(other, 'Casa-Verde', { name: 'Casa Verde' });
    for (const [p, s] of [
      [hub, 'Loja-Azul'],
      [other, 'Casa-Verde'],
    ] as const)
      expect((await t.approveStore(p, s, 'live')).status).to.equal(200);
    const cover = `https://cdn.shop.test:${store.port}/img/800x600.jpg`;
    const gtin = '7891000100103';
    await offer(t, hub, 'Loja-Azul', 'chaleira-azul', {
      title: 'Chaleira elétrica inox 1,7 L',
      brand: 'Fervo',
      gtin,
      price_cents: 129990,
      original_price_cents: 159990,
      installments: { count: 10, value_cents: 12999, interest_free: true },
      rating: { average: 4.6, count: 128 },
      product_url: `https://shop.test:${store.port}/produto/chaleira?cor=inox&svc_click=antigo#detalhes`,
      image_urls: [cover],
    });
    await offer(t, other, 'Casa-Verde', 'chaleira-verde', {
      title: 'Chaleira elétrica inox 1,7 L',
      gtin,
      price_cents: 134900,
      shipping: { type: 'free', delivery_days_max: 5 },
      image_urls: [cover],
    });
    await offer(t, other, 'Casa-Verde', 'chaleira-usada', {
      title: 'Chaleira elétrica inox 1,7 L',
      gtin,
      price_cents: 69900,
      condition: 'used',
      image_urls: [cover],
    });
    await settle(t);

    browser = await launchChromium({ phone: true, loopbackNames: SITE_NAMES });
    ({ context } = browser);
  });

  after(async () => {
    await browser?.close();
    await t?.close();
    await store?.close();
  });

  /** What a phone shows: the page fits the width (no sideways scrolling), and a screenshot when asked for. */
  async function check(page: Page, name: string): Promise<void> {
    await expectFitsPhone(page, name);
    await SCREENSHOTS.save(page, name);
  }

  it('searches, opens the offer, goes to the store with svc_click, and the partner reads the click', async () => {
    // The pages work under their Content-Security-Policy: the browser reports no refused style, image or form.
    const { page, cspReports: refused } = await watchedPage(context);
    const home = await page.goto(`${rootOf(t)}/`);
    expect(await home?.headerValue('content-security-policy')).to.contain("frame-ancestors 'none'");
    expect(await page.getAttribute('html', 'lang')).to.equal('pt-BR');
    await page.waitForFunction(() => Array.from(document.images).every((i) => i.complete));
    await check(page, 'home');

    await page.fill('input[name="q"]', 'chaleira eletrica');
    await Promise.all([page.waitForURL(/\/busca\?q=chaleira\+eletrica$/), page.press('input[name="q"]', 'Enter')]);
    expect(await page.textContent('h1')).to.equal('Resultados para “chaleira eletrica”');
    const product = page.locator('article.product').first();
    expect(await product.locator('h2').textContent()).to.equal('Chaleira elétrica inox 1,7 L');
    expect(await product.locator('ul.offers:not(.alternatives) .store').allTextContents()).to.deep.equal([
      'Loja Azul',
      'Casa Verde',
    ]);
    expect(await product.locator('ul.alternatives .condition').allTextContents()).to.deep.equal(['Usado']);
    await page.waitForFunction(() => Array.from(document.images).every((i) => i.complete && i.naturalWidth > 0));
    await check(page, 'results');

    await Promise.all([
      page.waitForURL(new RegExp(`/p/${hub.partnerId.toLowerCase()}/loja-azul/chaleira-azul$`)),
      product.locator('a:has(strong.store)', { hasText: 'Loja Azul' }).click(),
    ]);
    const body = await page.textContent('main');
    expect(body)
      .to.contain('de R$ 1.599,90 por R$ 1.299,90')
      .and.contain('ou 10× de R$ 129,99 sem juros')
      .and.contain('Frete a calcular');
    await page.waitForFunction(() => Array.from(document.images).every((i) => i.complete && i.naturalWidth > 0));
    await check(page, 'offer');
    expect(refused, 'nothing refused by the Content-Security-Policy').to.deep.equal([]);

    await Promise.all([page.waitForURL(/^https:\/\/shop\.test:\d+\/produto\/chaleira\?/), page.click('a.buy')]);
    const landed = new URL(page.url());
    const clickId = landed.searchParams.get('svc_click')!;
    expect(clickId).to.match(/^ic_[A-Za-z0-9_-]{22}$/);
    expect(landed.search).to.equal(`?cor=inox&svc_click=${clickId}`); // the old svc_click replaced
    expect(landed.hash).to.equal('#detalhes');
    expect(store.clicks).to.deep.equal([clickId]);
    expect(await page.textContent('#click')).to.equal(`svc_click: ${clickId}`);
    await check(page, 'store');

    t.clock.advance(1); // the default window [now − 30 days, now) leaves out a click at exactly now
    let clicks: { click_id: string; store_id: string; sku: string; price_cents: number }[] = [];
    await until(
      async () => {
        clicks = (await hub.api.get('/clicks')).body.data;
        return clicks.length > 0;
      },
      DEADLINE_MS,
      'the click in GET /clicks',
    );
    expect(clicks).to.have.length(1);
    expect(clicks[0]).to.include({
      click_id: clickId,
      store_id: 'Loja-Azul',
      sku: 'chaleira-azul',
      price_cents: 129990,
    });
    expect((await other.api.get('/clicks')).body.data).to.deep.equal([]);
    await page.close();
  });
});
