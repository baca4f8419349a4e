/**
 * The partner portal in a real browser (Debian's Chromium driven by playwright-core, as shopper-pages.browser.spec.ts):
 * a partner signs in with a test key through the form, walks every page (overview with its charts, catalog, the
 * products of a state and of a reason, a product with its checklist, preview and history, the stores, one store,
 * the statement, the closings and a closing's CSV download),
 * finds another partner's addresses answering 404, and signs out. Each page fits a phone's width, breaks no rule of
 * its Content-Security-Policy, and has no serious or critical axe-core violation (axe is evaluated through the
 * DevTools protocol, which a page's CSP does not govern, so the CSP under test stays on).
 *
 * `PORTAL_SCREENSHOTS=1` writes docs/screenshots/portal-*.png (phone width; the overview at desktop width too).
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { expect } from 'chai';
import { type BrowserContext, type Page } from 'playwright-core';
import { expectFitsPhone, launchChromium, screenshots, watchedPage, type Browser } from '../support/chromium.js';
import { startLoopbackSite, SITE_NAMES, type LoopbackSite } from '../support/loopback-site.js';
import { startTestService, type Partner, type TestService } from '../support/service.js';
import { streams } from '../../shared-schema/domain/streams.js';
import { DAY, HOUR, iso, paidBody, publish, putProduct, registerStore, sandboxClick } from '../e2e/commerce-support.js';
import { rootOf, settle } from '../e2e/shopper-support.js';

const SCREENSHOTS = screenshots('PORTAL_SCREENSHOTS', 'portal-');
const AXE_SOURCE = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

type AxeViolation = { id: string; impact: string | null; help: string; nodes: number };

describe('partner portal in Chromium: sign in, every page, 404 for another partner, axe, sign out', function () {
  this.timeout(300_000);
  let t: TestService;
  let hub: Partner;
  let other: Partner;
  let images: LoopbackSite;
  let context: BrowserContext;
  let userDataDir: string;
  let browser: Browser | undefined;
  const T0 = Date.parse('2026-10-20T15:00:00.000Z');

  before(async () => {
    images = await startLoopbackSite(); // the store's image host, for the covers the previews show
    t = await startTestService();
    t.clock.set(new Date(T0 - 29 * DAY));
    const partner = await t.partner({ type: 'hub', name: 'Casa & Cozinha <Hub>' });
    hub = await t.key(partner.partnerId, 'test');
    other = await t.key((await t.partner({ type: 'hub', name: 'Outra' })).partnerId, 'test');
    const cover = `https://cdn.shop.test:${images.port}/img/800x600.jpg`;
    await registerStore(hub, 'loja-centro', {
      name: 'Loja Centro',
      default_commission: { type: 'percentage', rate: 8 },
      domains: ['shop.test', 'loja-centro.test'],
      image_hosts: ['cdn.shop.test'],
    });
    await registerStore(hub, 'loja-nova', { name: 'Loja Nova', domains: ['nova.test'] });
    await registerStore(other, 'loja-outra', { name: 'Loja da Outra' });
    const products: [string, string, Record<string, unknown>][] = [
      ['chaleira-inox', 'Chaleira elétrica inox 1,7 L', { price_cents: 12990, original_price_cents: 15990 }],
      ['panela-pressao', 'Panela de pressão 4,5 L', { price_cents: 18990 }],
      ['frigideira-24', 'Frigideira antiaderente 24 cm', { price_cents: 7990, available: false }],
      ['jogo-facas', 'Jogo de facas <6 peças>', { price_cents: 9990 }],
    ];
    for (const [sku, title, fields] of products)
      await putProduct(t, hub, 'loja-centro', sku, { title, image_urls: [cover], ...fields });
    for (const [sku] of products.slice(0, 3)) await publish(t, hub, 'test', 'loja-centro', sku);
    // A rejected cover and a product on a domain not approved yet.
    const now = t.clock.now().toISOString();
    const stream = streams.product({ partnerId: hub.partnerId, env: 'test' }, 'jogo-facas');
    await t.service.events.appendToStream(stream, [
      {
        type: 'CoverChecked',
        data: {
          sku: 'jogo-facas',
          url: cover,
          ok: false,
          reasons: [{ code: 'image_too_small', field: 'image_urls[0]', message: 'The cover is too small.' }],
          checked_at: now,
        },
        metadata: { recorded_at: now, actor: 'test' },
      },
    ]);
    await putProduct(t, hub, 'loja-nova', 'cafeteira', {
      title: 'Cafeteira italiana',
      product_url: 'https://nova.test/cafeteira',
    });
    await putProduct(t, other, 'loja-outra', 'sku-outra', { title: 'Produto da outra' });
    // 30 days of activity: clicks most days, an order every few days.
    for (let d = 29; d >= 0; d--) {
      t.clock.set(new Date(T0 - d * DAY));
      let click = '';
      for (let i = 0; i < (d * 7) % 5; i++) click = (await sandboxClick(hub, 'loja-centro', 'chaleira-inox')).click_id;
      if (click && d % 3 === 0) {
        const r = await hub.api.post(
          '/conversions',
          paidBody({
            event_id: `pedido-${d}-pago`,
            order_id: `pedido-${d}`,
            store_id: 'loja-centro',
            click_id: click,
            paid_at: iso(T0 - d * DAY),
            items: [{ sku: 'chaleira-inox', quantity: 1 + (d % 2), unit_price_cents: 12990, refunded_cents: 0 }],
          }),
        );
        expect(r.status, JSON.stringify(r.body)).to.equal(200);
      }
    }
    // The products were written 29 days ago: keep them fresh for the checklist.
    for (const [sku, , fields] of products.slice(0, 3))
      await hub.api.patch(`/products/${sku}`, {
        price_cents: fields.price_cents,
        updated_at: t.clock.now().toISOString(),
      });
    t.clock.set(new Date(T0 + 2 * HOUR));
    await settle(t);

    browser = await launchChromium({ phone: true, loopbackNames: SITE_NAMES });
    ({ context, userDataDir } = browser);
  });
  after(async () => {
    await browser?.close();
    await t?.close();
    await images?.close();
  });

  /** Messages the browser logged about the Content-Security-Policy (a blocked style, script or image). */
  let cspReports: string[] = [];

  /** Fits a phone, nothing refused by the CSP, no serious or critical axe violation; a screenshot when asked for. */
  async function check(page: Page, name: string): Promise<void> {
    await page.waitForFunction(() => Array.from(document.images).every((i) => i.complete));
    await expectFitsPhone(page, name);
    expect(await page.getAttribute('html', 'lang')).to.equal('pt-BR');
    await page.evaluate(AXE_SOURCE);
    const violations = await page.evaluate(async () => {
      const axe = (globalThis as unknown as { axe: { run(): Promise<{ violations: Record<string, unknown>[] }> } }).axe;
      const result = await axe.run();
      return result.violations.map((v) => ({
        id: v.id as string,
        impact: v.impact as string | null,
        help: v.help as string,
        nodes: (v.nodes as unknown[]).length,
      }));
    });
    const serious = violations.filter((v: AxeViolation) => v.impact === 'serious' || v.impact === 'critical');
    expect(serious, `${name}: axe`).to.deep.equal([]);
    expect(cspReports, `${name}: CSP`).to.deep.equal([]);
    await SCREENSHOTS.save(page, name);
  }

  it('signs in, walks every page, gets 404 for another partner, and signs out', async () => {
    const watched = await watchedPage(context);
    const { page } = watched;
    cspReports = watched.cspReports;
    const portal = `${rootOf(t)}/portal`;
    await page.goto(portal);
    expect(await page.textContent('h1')).to.equal('Entrar no portal do parceiro');
    await check(page, 'entrar');

    // A wrong key: the form again, with the error.
    await page.fill('#api_key', 'ik_test_errada');
    await Promise.all([page.waitForLoadState(), page.click('button[type="submit"]')]);
    expect(await page.textContent('.error')).to.contain('Chave inválida');
    expect((await context.cookies()).filter((c) => c.name === 'portal_sessao')).to.deep.equal([]);

    await page.fill('#api_key', hub.key);
    await Promise.all([page.waitForURL(portal), page.click('button[type="submit"]')]);
    const [cookie] = (await context.cookies()).filter((c) => c.name === 'portal_sessao');
    expect(cookie).to.include({ httpOnly: true, sameSite: 'Lax', path: '/portal' });
    expect(await page.textContent('h1')).to.equal('Visão geral');
    expect(await page.textContent('header')).to.contain('Casa & Cozinha <Hub>');
    expect(await page.locator('svg.chart').count()).to.equal(4);
    // the window touches 31 UTC dates
    expect(await page.locator('[aria-label="Números por dia"] tbody tr').count()).to.equal(31);
    const channels = page.locator('[aria-label="Cliques por canal"] tbody tr');
    expect(await channels.count()).to.equal(1); // no channel link was followed: the service's own pages only
    expect(await channels.first().textContent()).to.match(/^Páginas do serviço[0-9]+$/);
    await check(page, 'visao-geral');
    if (SCREENSHOTS.enabled) {
      await page.setViewportSize({ width: 1280, height: 900 });
      await SCREENSHOTS.save(page, 'visao-geral-desktop');
      await page.setViewportSize({ width: 412, height: 915 });
    }

    await Promise.all([page.waitForURL(`${portal}/catalogo`), page.click('nav a:has-text("Catálogo")')]);
    expect(await page.textContent('main'))
      .to.contain('image_too_small')
      .and.contain('Envie uma capa maior');
    await check(page, 'catalogo');

    await Promise.all([page.waitForURL(/estado=pending/), page.click('ul.states a:has-text("Pendentes")')]);
    expect(await page.locator('#h-list + div tbody tr').count()).to.equal(1);
    await check(page, 'catalogo-pendentes');

    await Promise.all([page.waitForURL(/motivo=image_too_small/), page.click('a:has-text("image_too_small")')]);
    expect(await page.textContent('#h-list + div tbody')).to.contain('jogo-facas');
    await check(page, 'catalogo-motivo');

    await page.fill('#sku', 'chaleira-inox');
    await Promise.all([page.waitForURL(/sku=chaleira-inox/), page.press('#sku', 'Enter')]);
    expect(await page.textContent('h1')).to.equal('Produto chaleira-inox');
    const checks = await page.locator('ul.checks li').allTextContents();
    expect(checks).to.have.length(6);
    expect(checks[0]).to.contain('Não').and.contain('ambiente de teste');
    expect(checks.slice(1).every((c) => c.includes('Sim'))).to.equal(true);
    expect(await page.textContent('.preview-label')).to.equal('Prévia');
    expect(await page.textContent('.preview h1')).to.equal('Chaleira elétrica inox 1,7 L');
    expect(await page.textContent('.preview')).to.contain('de R$ 159,90 por R$ 129,90');
    expect(await page.locator('.preview a.buy').count(), 'a preview has no link to the redirector').to.equal(0);
    expect(await page.textContent('#h-hist + div, #h-hist ~ div')).to.contain('Produto enviado (PUT)');
    await check(page, 'produto');

    await page.goto(`${portal}/produtos/jogo-facas`);
    expect(await page.textContent('main'))
      .to.contain('Jogo de facas <6 peças>')
      .and.contain('Rejeitado');
    await check(page, 'produto-rejeitado');

    await Promise.all([page.waitForURL(`${portal}/lojas`), page.click('nav a:has-text("Lojas")')]);
    expect(await page.locator('main section.panel h2').allTextContents()).to.deep.equal(['Loja Centro', 'Loja Nova']);
    await check(page, 'lojas');
    await Promise.all([page.waitForURL(`${portal}/lojas/loja-nova`), page.click('a:has-text("Loja Nova")')]);
    expect(await page.textContent('main'))
      .to.contain('nova.test')
      .and.contain('aguardando aprovação');
    await check(page, 'loja');

    await Promise.all([page.waitForURL(`${portal}/extrato`), page.click('nav a:has-text("Extrato")')]);
    const statement = (await hub.api.get('/statement')).body as { data: unknown[] };
    expect(await page.locator('#h-mov + div tbody tr').count()).to.equal(statement.data.length);
    await check(page, 'extrato');

    await Promise.all([page.waitForURL(`${portal}/fechamentos`), page.click('nav a:has-text("Fechamentos")')]);
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('a:has-text("CSV de 2026-09")')]);
    expect(download.suggestedFilename()).to.equal('movements-test-2026-09.csv');
    const saved = path.join(userDataDir, 'fechamento.csv');
    await download.saveAs(saved);
    expect(fs.readFileSync(saved, 'utf8')).to.equal((await hub.api.get('/closings/2026-09/movements.csv')).body);
    await check(page, 'fechamentos');

    for (const url of [`${portal}/produtos/sku-outra`, `${portal}/lojas/loja-outra`]) {
      const answer = await page.goto(url);
      expect(answer?.status(), url).to.equal(404);
      expect(await page.textContent('main')).to.not.contain('Produto da outra');
    }
    await check(page, 'nao-encontrado');

    await Promise.all([page.waitForURL(portal), page.click('header button:has-text("Sair")')]);
    expect(await page.textContent('h1')).to.equal('Entrar no portal do parceiro');
    expect((await context.cookies()).filter((c) => c.name === 'portal_sessao')).to.deep.equal([]);
    expect((await page.goto(`${portal}/lojas`))?.url()).to.equal(portal);
    await page.close();
  });
});
