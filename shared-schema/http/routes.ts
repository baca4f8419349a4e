/**
 * The shape of a route of the contract and the matching of a route table. Each route is declared once, beside its
 * handler, in its door (command-api/write-routes.ts, query-api/read-routes.ts) with the scope that guards it
 * (DECISIONS.md scope map); the wiring hands the whole table to the front of both doors, so that either answers
 * 404 / 405 (with `Allow`) / 403 the same way whatever door a request reached. The paths outside `/v1` that the
 * gateways route by prefix are known here.
 */
import { PROBLEM_PAGE_PATHS } from '../html/problem-pages.js';
import type { Scope } from '../events/partner.js';

/** Every route of the contract is under this prefix. */
export const API_PREFIX = '/v1';

export interface RouteSpec {
  method: 'GET' | 'PUT' | 'PATCH' | 'POST' | 'DELETE';
  /** Path under `/v1`, with `:param` segments. */
  path: string;
  scope: Scope | null;
  /** Only keys of the test environment (403 `test_key_required` otherwise). */
  testOnly?: boolean;
}

/** A route's identity, `METHOD /path` (the key of its OpenAPI operation, shared-schema/contract/openapi-operations.ts). */
export const routeKey = (route: Pick<RouteSpec, 'method' | 'path'>): string => `${route.method} ${route.path}`;

/** Public documents: no key, no rate brake. */
export const PUBLIC_PATHS: readonly string[] = ['/openapi.json', '/openapi.yaml', '/guia.md'];

/**
 * The documentation for people, served without a key like PUBLIC_PATHS but not an operation of the contract: the
 * guide as HTML and the OpenAPI reference viewer (its page, initializer, bundle and stylesheet), under one prefix.
 */
export const DOCUMENTATION_PATHS: readonly string[] = [
  '/docs/guia.html',
  '/docs/api.html',
  '/docs/api-init.js',
  '/docs/swagger-ui-bundle.js',
  '/docs/swagger-ui.css',
  '/docs/docs.css',
];

/** A path served without a key or rate brake: the public documents, the documentation, the problem type pages. */
export const isPublicPath = (path: string): boolean =>
  PUBLIC_PATHS.includes(path) || DOCUMENTATION_PATHS.includes(path) || PROBLEM_PAGE_PATHS.includes(path);

export interface RouteMatch {
  route: RouteSpec | null;
  /** Methods the path accepts (empty when the path is unknown). HEAD is implied by GET. */
  allowed: string[];
  params: Record<string, string>;
}

/** Finds the route for a method and a path relative to `/v1`. */
export type RouteMatcher = (method: string, path: string) => RouteMatch;

/**
 * The matcher of a route table: each route's path split once into segments (`:name` for a parameter), the routes
 * without parameters first, since a literal match (e.g. /products/batch) excludes the parametrised routes of the
 * same shape. A route declared twice is a fault of the wiring.
 */
export function routeMatcher(routes: readonly RouteSpec[]): RouteMatcher {
  const keys = new Set<string>();
  for (const r of routes) {
    if (keys.has(routeKey(r))) throw new Error(`route declared twice: ${routeKey(r)}`);
    keys.add(routeKey(r));
  }
  const compiled = routes
    .map((route) => ({ route, segments: route.path.split('/'), literal: !route.path.includes(':') }))
    .sort((x, y) => Number(y.literal) - Number(x.literal));
  return (method, path) => {
    const m = method === 'HEAD' ? 'GET' : method;
    let found: RouteSpec | null = null;
    let params: Record<string, string> = {};
    const allowed = new Set<string>();
    let literalPath: string | null = null;
    const actual = path.split('/');
    for (const { route: r, segments, literal } of compiled) {
      const got = matchSegments(segments, actual);
      if (!got) continue;
      if (literalPath !== null && r.path !== literalPath && !literal) continue;
      if (literal) literalPath = r.path;
      allowed.add(r.method);
      if (r.method === 'GET') allowed.add('HEAD');
      if (r.method === m && !found) {
        found = r;
        params = got;
      }
    }
    return { route: found, allowed: [...allowed], params };
  };
}

function matchSegments(pattern: readonly string[], actual: readonly string[]): Record<string, string> | null {
  if (pattern.length !== actual.length) return null;
  let params: Record<string, string> | null = null;
  for (let i = 0; i < pattern.length; i++) {
    const seg = pattern[i];
    const part = actual[i];
    if (seg.charCodeAt(0) === 58 /* ':' */) {
      if (part === '') return null;
      try {
        (params ??= {})[seg.slice(1)] = decodeURIComponent(part);
      } catch {
        return null;
      }
    } else if (seg !== part) return null;
  }
  return params ?? {};
}

const pathOnly = (url: string): string => url.split(/[?#]/)[0];

/** The shopper's search API and the favicon browsers ask for (answered without a key). */
export const SEARCH_PATH = '/api/search';
export const FAVICON = '/favicon.ico';

/**
 * The route pattern of a public shopper path outside `/v1` (SHOPPER.md: `/`, `/busca`, `/api/…`, `/p/…`,
 * `/test/p/…`, and `/favicon.ico`), or null for any other path: a few fixed values, never the path as sent (metrics
 * labels).
 */
export function shopperRoute(url: string): string | null {
  const path = pathOnly(url);
  if (path === '/' || path === '/busca' || path === SEARCH_PATH || path === FAVICON) return path;
  if (path.startsWith('/api/')) return '/api/*';
  if (path.startsWith('/p/')) return '/p/{partner}/{store}/{sku}';
  if (path.startsWith('/test/p/')) return '/test/p/{partner}/{store}/{sku}';
  return null;
}

/** The partner portal (PORTAL.md). */
export const PORTAL_PATH = '/portal';

/** Whether a request target is the portal's (the gateways send it to the query door, any method). */
export function isPortalPath(url: string): boolean {
  const path = pathOnly(url);
  return path === PORTAL_PATH || path.startsWith(`${PORTAL_PATH}/`);
}

/** The channel feeds (FEEDS.md). */
export const FEEDS_PREFIX = '/feeds/';

/** Whether a request target is a feed (the gateways send them to the query door, any method). */
export const isFeedPath = (url: string): boolean => pathOnly(url).startsWith(FEEDS_PREFIX);

/**
 * Whether a request target is one of the public shopper routes: the query door serves them whatever the method
 * (answering 405 to all but GET and HEAD), so the gateways send them there.
 */
export function isShopperPath(url: string): boolean {
  return shopperRoute(url) !== null;
}
