/**
 * The documentation for people under `{base_url}/docs/`: the guide rendered as HTML and the OpenAPI reference viewer
 * (Swagger UI from the installed package), public like guia.md, every script a file of its own.
 */
import { expect } from 'chai';
import { Marked } from 'marked';
import { DOCUMENTATION_PATHS } from '../../shared-schema/http/routes.js';
import { guideHtml, markdownToHtml } from '../../infra/http/documentation.js';
import { startTestService, type TestService } from '../support/service.js';

describe('documentation pages (/v1/docs/)', function () {
  let t: TestService;
  const get = (path: string, init: RequestInit = {}) => fetch(`${t.api}${path}`, init);

  before(async () => {
    t = await startTestService();
  });
  after(async () => t.close());

  it('serves the guide as HTML without a key, with the same content as guia.md', async () => {
    const r = await get('/docs/guia.html');
    expect(r.status).to.equal(200);
    expect(r.headers.get('content-type')).to.equal('text/html; charset=utf-8');
    const html = await r.text();
    expect(html).to.match(/^<!doctype html>/);
    expect(html).to.contain('<h1>Guia de integração — Partner Commerce API</h1>');
    expect(html).to.contain('<h2>1. Keys and environments</h2>');
    expect(html).to.contain('<code>Authorization: Bearer &lt;API_KEY&gt;</code>');
    expect(html).to.contain('<link rel="stylesheet" href="docs.css">');
    expect(html).not.to.match(/<script/i);
    const md = await (await get('/guia.md')).text();
    const firstHeading = /^## (.+)$/m.exec(md)![1];
    expect(html).to.contain(`<h2>${firstHeading}</h2>`);
  });

  it('serves the reference viewer: a page, its initializer as a file, the bundle and stylesheet from swagger-ui-dist', async () => {
    const answer = await get('/docs/api.html');
    // Its own policy: our script files run, nothing inline, never in a frame.
    const policy = answer.headers.get('content-security-policy') ?? '';
    expect(policy).to.contain("script-src 'self'").and.contain("frame-ancestors 'none'");
    expect(policy.split(';').find((d) => d.trim().startsWith('script-src'))).to.not.contain('unsafe-inline');
    const page = await answer.text();
    expect(page).to.contain('<div id="swagger-ui"></div>');
    const scripts = [...page.matchAll(/<script([^>]*)>([^<]*)<\/script>/g)];
    expect(scripts.map((m) => m[1].trim())).to.deep.equal(['src="swagger-ui-bundle.js"', 'src="api-init.js"']);
    expect(
      scripts.every((m) => m[2] === ''),
      'no inline script',
    ).to.equal(true);
    const init = await get('/docs/api-init.js');
    expect(init.headers.get('content-type')).to.equal('text/javascript; charset=utf-8');
    const initText = await init.text();
    expect(initText).to.contain("url: '../openapi.json'").and.contain('validatorUrl: null');
    const bundle = await get('/docs/swagger-ui-bundle.js');
    expect(bundle.status).to.equal(200);
    expect(await bundle.text())
      .to.contain('SwaggerUIBundle')
      .and.not.match(/sourceMappingURL/);
    const css = await get('/docs/swagger-ui.css');
    expect(css.headers.get('content-type')).to.equal('text/css; charset=utf-8');
    expect((await css.text()).length).to.be.greaterThan(10_000);
    // The address the initializer loads, relative to the page, is the published document.
    const doc = await get(new URL('../openapi.json', `${t.api}/docs/api.html`).pathname.replace(/^\/v1/, ''));
    expect(((await doc.json()) as { openapi: string }).openapi).to.equal('3.1.0');
  });

  it('answers every documentation path to GET and HEAD without a key, and refuses a write as on guia.md', async () => {
    for (const path of DOCUMENTATION_PATHS) {
      expect((await get(path)).status, path).to.equal(200);
      expect((await get(path, { method: 'HEAD' })).status, path).to.equal(200);
    }
    // A write is refused as on guia.md (the command door asks for a key first); other paths keep needing a key.
    const post = await get('/docs/guia.html', { method: 'POST', body: '{}' });
    expect(post.status).to.equal((await get('/guia.md', { method: 'POST', body: '{}' })).status);
    expect(post.status).to.be.within(400, 499);
    expect((await get('/docs/other.html')).status).to.equal(401);
  });

  it('renders raw HTML in the Markdown as text (marked would pass it through)', () => {
    const raw = '<script>alert(1)</script>\n\nText with <img src=x onerror=alert(1)> inline, and `<code>`.';
    expect(new Marked().parse(raw, { async: false })).to.contain('<script>');
    const html = markdownToHtml(raw);
    expect(html).not.to.match(/<script|<img/i);
    expect(html).to.contain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).to.contain('&lt;img src=x onerror=alert(1)&gt;');
    expect(html).to.contain('<code>&lt;code&gt;</code>');
    expect(guideHtml('https://api.example.test/v1')).not.to.match(/<script/i);
  });
});
