/**
 * The one front of both partner doors. Order (DECISIONS.md): request id and problems → public routes of the door
 * (no key) → 401 (key) → 429 (rate brake) → 404 / 405 (route table) → 403 (scope) → the door's own routes (413 →
 * 422 → business rules). The command door (command-api/app.ts) and the query door (query-api/app.ts) only supply
 * what comes after it; they cannot share code with each other, so infra, which builds both, owns the front.
 */
import Koa from 'koa';
import type { Logger } from 'pino';
import type { Clock } from '../../shared-schema/ports/clock.js';
import type { Messaging } from '../../shared-schema/ports/messaging.js';
import type { DoorRoutes, DoorState } from '../../shared-schema/http/context.js';
import { requestEnvelope, type CompletedRequest } from './request-envelope.js';
import { authenticate, type KeyLookup } from './authenticate.js';
import { rateBrake, type RateLimits } from './rate-brake.js';
import { routeGuard } from './route-guard.js';
import { routeMatcher, type RouteSpec } from '../../shared-schema/http/routes.js';
import { clientAddress } from './client-address.js';
import { logAppErrors } from './client-abort.js';

export interface FrontDoorOptions {
  log: Logger;
  /** The contract's `{base_url}` (problem `type` URLs). */
  baseUrl: string;
  keys: KeyLookup;
  /** Every route of the contract, both doors' (infra/wiring/api-routes.ts): a door answers 405 for the other's. */
  routes: readonly RouteSpec[];
  messaging: Messaging;
  clock: Clock;
  /** Default: the contract's RATE_LIMITS. */
  rateLimits?: RateLimits;
  /**
   * Proxies in front whose `X-Forwarded-For` entry names the client (Config.trustedProxyHops): behind N of them the
   * client is the address the outermost one appended (client-address.ts); with none, the socket's peer. A client
   * cannot choose its address.
   */
  trustedProxyHops?: number;
  /** Called once per request after the answer is decided (operation history, metrics). */
  onCompleted?: (request: CompletedRequest) => void;
  onRateRefused?: (kind: string) => void;
}

export function frontDoor(door: DoorRoutes, options: FrontDoorOptions): Koa<DoorState> {
  const app = new Koa<DoorState>();
  const hops = options.trustedProxyHops ?? 0;
  app.use((ctx, next) => {
    ctx.request.ip = clientAddress(ctx.req, hops);
    return next();
  });
  logAppErrors(app, options.log);
  app.use(
    requestEnvelope({
      log: options.log,
      baseUrl: options.baseUrl,
      ...(options.onCompleted ? { onCompleted: options.onCompleted } : {}),
    }),
  );
  if (door.public) app.use(door.public);
  app.use(authenticate(options.keys));
  app.use(
    rateBrake({
      messaging: options.messaging,
      clock: options.clock,
      ...(options.rateLimits ? { limits: options.rateLimits } : {}),
      ...(options.onRateRefused ? { onRefused: options.onRateRefused } : {}),
    }),
  );
  app.use(routeGuard(routeMatcher(options.routes)));
  app.use(door.routes);
  return app;
}
