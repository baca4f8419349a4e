/**
 * The public documents: `/openapi.json`, `/openapi.yaml`, `/guia.md`, the problem type pages and the documentation
 * for people under `/docs/` (documentation.ts), built from shared-schema.
 */
import type { PublicDocument } from '../../query-api/app.js';
import { buildOpenApi, publishedRoutes, toYaml } from '../../shared-schema/contract/openapi.js';
import { guide } from '../../shared-schema/contract/guide.js';
import { PROBLEM_PAGES, problemPageHtml, problemPageJson } from '../../shared-schema/html/problem-pages.js';
import { documentationPages } from './documentation.js';
import { API_ROUTES } from '../wiring/api-routes.js';
import { isPublicPath } from '../../shared-schema/http/routes.js';

/**
 * The document at a path, the documents built together at the first request of one: the OpenAPI YAML and the guide's
 * HTML take about a tenth of a second, which a start (and every restart) need not wait for.
 */
export function publicDocumentLookup(apiBaseUrl: string): (path: string) => PublicDocument | undefined {
  publishedRoutes(API_ROUTES); // a route without its operation text still fails the start
  let built: Record<string, PublicDocument> | undefined;
  return (path) => (isPublicPath(path) ? (built ??= publicDocuments(apiBaseUrl))[path] : undefined);
}

export function publicDocuments(apiBaseUrl: string): Record<string, PublicDocument> {
  const doc = buildOpenApi(apiBaseUrl, API_ROUTES);
  return {
    ...documentationPages(apiBaseUrl),
    '/openapi.json': { type: 'application/json', body: JSON.stringify(doc, null, 2) },
    '/openapi.yaml': { type: 'application/yaml', body: toYaml(doc) },
    '/guia.md': { type: 'text/markdown; charset=utf-8', body: guide(apiBaseUrl) },
    ...Object.fromEntries(
      Object.keys(PROBLEM_PAGES).map((s) => [
        `/problemas/${s}`,
        {
          type: 'text/html; charset=utf-8',
          body: problemPageHtml(Number(s), apiBaseUrl),
          json: problemPageJson(Number(s), apiBaseUrl),
        },
      ]),
    ),
  };
}
