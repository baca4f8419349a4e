/**
 * The contract's route table (the routes both doors declare, handed over by the wiring) in front of both doors: 404 for a path the contract does not serve,
 * 405 with `Allow` for a known path asked with another method, 403 for a missing scope or a live key on a test-only
 * route. Whichever door a request reaches, it answers the same.
 */
import { forbidden, methodNotAllowed, notFound } from '../../shared-schema/contract/problems.js';
import { API_PREFIX, isPublicPath, type RouteMatcher } from '../../shared-schema/http/routes.js';
import type { DoorContext, DoorMiddleware, Next } from '../../shared-schema/http/context.js';

export function routeGuard(matchRoute: RouteMatcher): DoorMiddleware {
  return async (ctx: DoorContext, next: Next) => {
    if (!ctx.path.startsWith(API_PREFIX + '/')) throw notFound('No such resource.');
    const path = ctx.path.slice(API_PREFIX.length);
    if (isPublicPath(path)) {
      if (ctx.method !== 'GET' && ctx.method !== 'HEAD') throw methodNotAllowed(ctx.method, 'GET, HEAD');
      await next();
      return;
    }
    const match = matchRoute(ctx.method, path);
    if (match.allowed.length === 0) throw notFound('No such resource.');
    if (!match.route) {
      throw methodNotAllowed(ctx.method, match.allowed.join(', '));
    }
    const caller = ctx.state.caller!;
    if (match.route.scope && !caller.scopes.includes(match.route.scope)) {
      throw forbidden(`This key lacks the scope \`${match.route.scope}\`.`, 'scope');
    }
    if (match.route.testOnly && caller.env !== 'test') {
      throw forbidden('This route needs a test key (ik_test_…).', 'test_key_required');
    }
    ctx.state.route = match.route;
    ctx.state.params = match.params;
    await next();
  };
}
