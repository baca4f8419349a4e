/**
 * The public shopper routes of the query door (SHOPPER.md), outside `/v1`, no key, in front of its authentication:
 * `/` (home), `/busca` (results page), `/api/search` (JSON), `/p/…` and `/test/p/…` (offer pages), and
 * `/favicon.ico` (204: browsers ask for it on every page; there is none, and it is no partner's failed call). Only
 * GET and HEAD; anything else 405. Other paths go on to the partner API.
 */
import type { Next } from 'koa';
import type { DoorContext } from '../../shared-schema/http/context.js';
import { ProblemError } from '../../shared-schema/problems.js';
import type { QueryDeps } from '../app.js';
import { home, offer, results } from './pages.js';
import { SEARCH_PATH, searchApi } from './search.js';

const pathOf = (url: string): string => url.split(/[?#]/)[0];

const FAVICON = '/favicon.ico';

/**
 * The route pattern of a shopper path (for metrics labels: a few fixed values, never the path as sent), or null for
 * a path that is not one of the shopper routes.
 */
export function shopperRoute(url: string): string | null {
  const path = pathOf(url);
  if (path === '/' || path === '/busca' || path === SEARCH_PATH || path === FAVICON) return path;
  if (path.startsWith('/api/')) return '/api/*';
  if (path.startsWith('/p/')) return '/p/{store}/{sku}';
  if (path.startsWith('/test/p/')) return '/test/p/{store}/{sku}';
  return null;
}

/** Whether a request target is one of the shopper routes (the gateways send them to the query door, any method). */
export function isShopperPath(url: string): boolean {
  return shopperRoute(url) !== null;
}

export function shopperRoutes(deps: QueryDeps) {
  return async (ctx: DoorContext, next: Next): Promise<void> => {
    const path = ctx.path;
    if (!isShopperPath(path)) {
      await next();
      return;
    }
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD')
      throw new ProblemError(405, [], 'Method not allowed.', { Allow: 'GET, HEAD' });
    if (path === FAVICON) {
      ctx.status = 204;
      ctx.set('Cache-Control', 'public, max-age=86400');
      return;
    }
    if (path === '/') return home(ctx, deps);
    if (path === '/busca') return results(ctx, deps);
    if (path === SEARCH_PATH) return searchApi(ctx, deps);
    if (path.startsWith('/api/')) throw new ProblemError(404, [], 'No such resource.');
    return offer(ctx, deps);
  };
}
