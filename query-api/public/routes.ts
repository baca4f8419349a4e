/**
 * The public shopper routes of the query door (SHOPPER.md), outside `/v1`, no key, in front of its authentication:
 * `/` (home), `/busca` (results page), `/api/search` (JSON), `/p/…` and `/test/p/…` (offer pages), and
 * `/favicon.ico` (204: browsers ask for it on every page; there is none, and it is no partner's failed call). Only
 * GET and HEAD; anything else 405. Other paths go on to the partner API.
 */
import type { Next } from 'koa';
import type { DoorContext } from '../../shared-schema/http/context.js';
import { ProblemError, methodNotAllowed } from '../../shared-schema/contract/problems.js';
import { FAVICON, SEARCH_PATH, isShopperPath } from '../../shared-schema/http/routes.js';
import type { QueryDeps } from '../app.js';
import { home, offer, results } from './pages.js';
import { searchApi } from './search.js';

export function shopperRoutes(deps: QueryDeps) {
  return async (ctx: DoorContext, next: Next): Promise<void> => {
    const path = ctx.path;
    if (!isShopperPath(path)) {
      await next();
      return;
    }
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') throw methodNotAllowed(ctx.method, 'GET, HEAD');
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
