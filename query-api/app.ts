/**
 * The query door: a Koa app serving GET/HEAD from the read models. Same front middleware as the command door
 * (request id → 401 → 429 → route → 403), then read-your-writes (wait, bounded, until the projections have passed
 * the last position this partner and environment wrote), then query validation (422, every field) and the read.
 */
import Koa from 'koa';
import type { Logger } from 'pino';
import { authenticate, pathParamErrors, rateBrake, requestEnvelope, routeGuard, type KeyLookup, type CompletedRequest, type RateLimits } from '../shared-schema/http/door.js';
import { tenantKey, type DoorContext, type DoorState } from '../shared-schema/http/context.js';
import { invalid, notFound } from '../shared-schema/problems.js';
import type { ReadStore } from '../shared-schema/ports/read-store.js';
import type { Messaging } from '../shared-schema/ports/messaging.js';
import type { Clock } from '../shared-schema/ports/clock.js';
import type { CursorSecret } from '../shared-schema/http/pagination.js';
import { queryValidator, type Validator } from '../shared-schema/validation.js';
import type { JsonSchema } from '../shared-schema/schemas/common.js';
import { shopperRoutes } from './public/routes.js';

export interface QueryDeps {
  reads: ReadStore;
  messaging: Messaging;
  clock: Clock;
  publicBaseUrl: string;
  /** Resolves true once every projection has committed `position` (false after the timeout). */
  waitForPosition: (position: number, timeoutMs: number) => Promise<boolean>;
  /** Signs the page cursors this door hands out and checks those it is sent (shared-schema/http/pagination.ts). */
  cursorSecret: CursorSecret;
}

export interface ReadRoute {
  query: JsonSchema;
  handle: (ctx: DoorContext, query: Record<string, unknown>, deps: QueryDeps) => Promise<unknown>;
}

export interface PublicDocument {
  type: string;
  body: string;
  /** The same document as JSON, for a client that prefers `application/json` (problem pages). */
  json?: string;
}

export interface QueryApiOptions {
  deps: QueryDeps;
  log: Logger;
  baseUrl: string;
  keys: KeyLookup;
  routes: Record<string, ReadRoute>;
  publicDocuments: Record<string, PublicDocument>;
  readYourWritesTimeoutMs?: number;
  onRateRefused?: (kind: string) => void;
  /** Called once per request after the answer is decided (operation history, metrics). */
  onCompleted?: (request: CompletedRequest) => void;
  /** Default: the contract's RATE_LIMITS. */
  rateLimits?: RateLimits;
  /** See Config.trustedProxyHops. */
  trustedProxyHops?: number;
}

const validators = new WeakMap<JsonSchema, Validator<unknown>>();
function validatorFor(schema: JsonSchema): Validator<unknown> {
  let v = validators.get(schema);
  if (!v) {
    v = queryValidator<unknown>(schema);
    validators.set(schema, v);
  }
  return v;
}

export function createQueryApi(options: QueryApiOptions): Koa<DoorState> {
  const { deps } = options;
  const app = new Koa<DoorState>();
  // Behind N trusted proxies the client is the address the last of them appended to X-Forwarded-For; with none, the
  // socket's peer. A client cannot choose its address for the per-address brake either way.
  app.proxy = (options.trustedProxyHops ?? 0) > 0;
  app.maxIpsCount = options.trustedProxyHops ?? 0;
  app.use(requestEnvelope({ log: options.log, baseUrl: options.baseUrl, ...(options.onCompleted ? { onCompleted: options.onCompleted } : {}) }));
  app.use(shopperRoutes(deps)); // public shopper routes outside /v1 (no key): /, /busca, /api/search, /p/…
  app.use(authenticate(options.keys));
  app.use(rateBrake({ messaging: deps.messaging, clock: deps.clock, ...(options.rateLimits ? { limits: options.rateLimits } : {}), ...(options.onRateRefused ? { onRefused: options.onRateRefused } : {}) }));
  app.use(routeGuard());
  app.use(async (ctx: DoorContext) => {
    const doc = options.publicDocuments[ctx.path.slice('/v1'.length)];
    if (doc) {
      const asJson = doc.json !== undefined && ctx.accepts(doc.type, 'application/json') === 'application/json';
      ctx.type = asJson ? 'application/json' : doc.type;
      ctx.body = asJson ? doc.json : doc.body;
      if (doc.json !== undefined) ctx.vary('Accept');
      return;
    }
    const route = ctx.state.route;
    const handler = route ? options.routes[`${route.method} ${route.path}`] : undefined;
    if (!route || !handler) throw notFound('No such resource.');
    const query: Record<string, unknown> = { ...ctx.query };
    const errors = [...pathParamErrors(ctx.state.params), ...validatorFor(handler.query)(query)];
    if (errors.length > 0) throw invalid(errors);
    const caller = ctx.state.caller!;
    const written = await deps.messaging.getNumber(`ryw:${tenantKey(caller)}`);
    if (written !== undefined) await deps.waitForPosition(written, options.readYourWritesTimeoutMs ?? 5000);
    ctx.body = await handler.handle(ctx, query, deps);
  });
  return app;
}

/** Query schema for routes that take no parameter (any parameter is `unknown_field`). */
export const NO_QUERY: JsonSchema = { type: 'object', additionalProperties: false, properties: {} };
