/**
 * The documentation pages in a real browser (Chromium through playwright-core, as shopper-pages.browser.spec.ts),
 * under a Content-Security-Policy whose scripts are `'self'` only — no 'unsafe-inline', no 'unsafe-eval': the
 * reference viewer shows the contract's operations and the guide its sections, and the browser reports no violation
 * of the script policy. The policy is the service's own header, as served.
 */
import { expect } from 'chai';
import { type BrowserContext } from 'playwright-core';
import { BROWSER_DEADLINE_MS, launchChromium, watchedPage, type Browser } from '../support/chromium.js';
import { startTestService, type TestService } from '../support/service.js';
import { until } from '../support/deadline.js';

const DEADLINE_MS = BROWSER_DEADLINE_MS;

describe('documentation pages in a browser, under a strict script policy', function () {
  this.timeout(180_000);
  let t: TestService;
  let context: BrowserContext;
  let browser: Browser | undefined;

  before(async () => {
    t = await startTestService();
    browser = await launchChromium();
    ({ context } = browser);
    // Nothing but the service may load (no CDN, no validator badge).
    await context.route('**/*', async (route) => {
      const url = route.request().url();
      if (!url.startsWith(t.api.replace(/\/v1$/, ''))) return route.abort();
      return route.continue();
    });
  });

  after(async () => {
    await browser?.close();
    await t?.close();
  });

  const open = async (address: string) => {
    const { page, cspReports: violations } = await watchedPage(context);
    const requests: string[] = [];
    page.on('request', (r) => requests.push(r.url()));
    await page.goto(address);
    return { page, violations, requests };
  };

  it('shows the OpenAPI reference with its operations, its scripts all files of the service', async () => {
    const { page, violations, requests } = await open(`${t.api}/docs/api.html`);
    await page.locator('.opblock').first().waitFor();
    const summaries = await page.locator('.opblock-summary-path').allInnerTexts();
    expect(summaries.map((s) => s.replace(/\u200b/g, '').trim())).to.include.members(['/products/{sku}', '/me']);
    expect(await page.locator('.info .title').innerText()).to.contain('Partner Commerce API');
    expect(violations).to.deep.equal([]);
    const origin = t.api.replace(/\/v1$/, '');
    expect(requests.filter((u) => !u.startsWith(origin))).to.deep.equal([]);
    // The policy is in force and its violations are seen: an inline script is refused and reported.
    await page.addScriptTag({ content: 'window.inlineRan = true' }).catch(() => undefined);
    await until(() => violations.length > 0, DEADLINE_MS, 'the inline script reported');
    expect(await page.evaluate(() => (window as unknown as { inlineRan?: boolean }).inlineRan)).to.equal(undefined);
    await page.close();
  });

  it('shows the guide rendered, with its sections', async () => {
    const { page, violations } = await open(`${t.api}/docs/guia.html`);
    expect(await page.locator('h1').innerText()).to.equal('Guia de integração — Partner Commerce API');
    expect(await page.locator('h2').count()).to.be.greaterThan(5);
    await page.getByRole('link', { name: 'Referência da API' }).click();
    await page.locator('.opblock').first().waitFor();
    expect(violations).to.deep.equal([]);
    await page.close();
  });
});
