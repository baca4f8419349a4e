/**
 * The documentation for people at `{base_url}/docs/` (shared-schema/http/routes.ts DOCUMENTATION_PATHS), public like
 * guia.md: the guide rendered as HTML (`guia.html`) and the OpenAPI document in Swagger UI (`api.html`), whose
 * bundle and stylesheet are served from the installed swagger-ui-dist package (no CDN). Every script is a file of
 * its own (the initializer too), so both pages work under a Content-Security-Policy without 'unsafe-inline'; every
 * address is relative, so the pages work behind any base URL. Built once at start-up.
 */
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { Marked, type Tokens } from 'marked';
import type { PublicDocument } from '../../query-api/app.js';
import { guide } from '../../shared-schema/contract/guide.js';
import { esc } from '../../shared-schema/html/shopper.js';

const HTML = 'text/html; charset=utf-8';
const CSS = 'text/css; charset=utf-8';
const JS = 'text/javascript; charset=utf-8';

/** Markdown to HTML with raw HTML off: an HTML block or tag in the text is shown as text, never passed through. */
const markdown = new Marked({
  gfm: true,
  renderer: {
    html: (token: Tokens.HTML | Tokens.Tag) => esc(token.text),
  },
});

/** Markdown as HTML, raw HTML in it shown as text. */
export function markdownToHtml(text: string): string {
  return markdown.parse(text, { async: false });
}

/** The guide (Markdown of shared-schema/contract/guide.ts) as a page. */
export function guideHtml(apiBaseUrl: string): string {
  const body = markdownToHtml(guide(apiBaseUrl));
  return (
    '<!doctype html><html lang="pt-BR"><head><meta charset="utf-8">' +
    '<meta name="viewport" content="width=device-width, initial-scale=1">' +
    '<title>Guia de integração — Partner Commerce API</title><link rel="stylesheet" href="docs.css"></head><body>' +
    '<nav><a href="../guia.md">guia.md</a> · <a href="api.html">Referência da API</a> · ' +
    '<a href="../openapi.json">openapi.json</a></nav>' +
    `<main>${body}</main></body></html>`
  );
}

const VIEWER_PAGE =
  '<!doctype html><html lang="pt-BR"><head><meta charset="utf-8">' +
  '<meta name="viewport" content="width=device-width, initial-scale=1">' +
  '<title>Referência — Partner Commerce API</title><link rel="stylesheet" href="swagger-ui.css">' +
  '<link rel="stylesheet" href="docs.css"></head><body>' +
  '<nav><a href="guia.html">Guia de integração</a> · <a href="../openapi.json">openapi.json</a> · ' +
  '<a href="../openapi.yaml">openapi.yaml</a></nav>' +
  '<div id="swagger-ui"></div><script src="swagger-ui-bundle.js"></script><script src="api-init.js"></script>' +
  '</body></html>';

// validatorUrl null: Swagger UI would otherwise send the document to validator.swagger.io for its badge.
const VIEWER_INIT = `window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({
    url: '../openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    validatorUrl: null,
  });
});
`;

const STYLE = `body { font: 16px/1.5 system-ui, sans-serif; margin: 0; color: #1b1b1b; }
nav { padding: 0.75rem 1rem; border-bottom: 1px solid #ddd; font-size: 0.9rem; }
main { max-width: 52rem; margin: 0 auto; padding: 1rem; }
pre { background: #f5f5f5; padding: 0.75rem; overflow-x: auto; font-size: 0.85rem; }
code { font-family: ui-monospace, monospace; }
table { border-collapse: collapse; } th, td { border: 1px solid #ddd; padding: 0.25rem 0.5rem; text-align: left; }
`;

/** A file of the installed swagger-ui-dist, without its source-map comment (the map is not served). */
function swaggerUiFile(name: string): string {
  const dir = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  return fs.readFileSync(path.join(dir, name), 'utf8').replace(/\n\/[/*]# sourceMappingURL=\S+\s*(\*\/)?\s*$/, '\n');
}

/** Every documentation path (under `/docs/`, as DOCUMENTATION_PATHS names them) with its answer. */
/**
 * The pages' policy: the doors' own (infra/http/gateway.ts SECURITY_HEADERS) allows no script and no stylesheet file;
 * these pages run our own script files and stylesheets, fetch the OpenAPI document, and still run nothing inline.
 */
export const DOCUMENTATION_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
  "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";
const PAGE_HEADERS = { 'Content-Security-Policy': DOCUMENTATION_CSP };

export function documentationPages(apiBaseUrl: string): Record<string, PublicDocument> {
  return {
    '/docs/guia.html': { type: HTML, body: guideHtml(apiBaseUrl), headers: PAGE_HEADERS },
    '/docs/api.html': { type: HTML, body: VIEWER_PAGE, headers: PAGE_HEADERS },
    '/docs/api-init.js': { type: JS, body: VIEWER_INIT },
    '/docs/swagger-ui-bundle.js': { type: JS, body: swaggerUiFile('swagger-ui-bundle.js') },
    '/docs/swagger-ui.css': { type: CSS, body: swaggerUiFile('swagger-ui.css') },
    '/docs/docs.css': { type: CSS, body: STYLE },
  };
}
