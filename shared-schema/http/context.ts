import type { Context, Middleware, Next } from 'koa';
import type { Logger } from 'pino';
import type { Environment, Tenant } from '../domain/streams.js';
import type { PartnerType, Scope } from '../events/partner.js';
import type { RouteSpec } from './routes.js';

/** What authentication establishes about the caller: always one partner and one environment. */
export interface Caller extends Tenant {
  keyId: string;
  partnerType: PartnerType;
  partnerName: string;
  scopes: Scope[];
}

export interface DoorState {
  requestId: string;
  log: Logger;
  caller?: Caller;
  route?: RouteSpec;
  params: Record<string, string>;
  /** Parsed JSON body of a write. */
  body?: unknown;
  rawBody?: Buffer;
  /** Log position a write reached (for read-your-writes). */
  position?: number;
}

export type DoorContext = Context & { state: DoorState };
export type DoorMiddleware = Middleware<DoorState>;
export type { Next };

/**
 * What a door serves behind the front both doors share (infra/http/front-door.ts: request id, problems, key, rate
 * brake, route table).
 */
export interface DoorRoutes {
  /** Routes outside `/v1` served before authentication, without a key (the shopper's public search). */
  public?: DoorMiddleware;
  /** The door's routes, reached once the caller is known and the route table let the request through. */
  routes: DoorMiddleware;
}

/** The caller of an authenticated route (the auth middleware guarantees it). */
export function callerOf(ctx: DoorContext): Caller {
  if (!ctx.state.caller) throw new Error('route reached without authentication');
  return ctx.state.caller;
}

export const tenantKey = (t: { partnerId: string; env: Environment }): string => `${t.env}:${t.partnerId}`;
