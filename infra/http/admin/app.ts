/**
 * The operator's admin API (not part of the partner contract): its own port, bound to loopback unless configured,
 * guarded by `Authorization: Bearer <token>`: the single ADMIN_TOKEN (actor `admin`) or one operator's token of
 * ADMIN_TOKENS (actor `admin:<name>`). The actor is the token's, never a name the caller states, and is recorded in
 * the metadata of every event a route appends and in the request's log line. Each write waits until the projections
 * have applied it, so a key issued here works on the very next call. The routes come in named groups: partners, keys
 * and stores (partners.ts), the log and the clock (log-and-clock.ts), the lists (lists.ts), the channels
 * (channels.ts), and whatever `extend` adds (the operator surface, infra/ops/admin-routes.ts).
 */
import Koa from 'koa';
import Router from '@koa/router';
import type { Logger } from 'pino';
import { logAppErrors } from '../client-abort.js';
import type { Clock } from '../../../shared-schema/ports/clock.js';
import { metadata, type CommandDeps } from '../../../command-api/services/context.js';
import type { NamedAdminToken } from '../../wiring/config.js';
import { adminEnvelope } from './envelope.js';
import { partnerRoutes } from './partners.js';
import { clockRoutes, streamRoutes } from './log-and-clock.js';
import { adminListRoutes } from './lists.js';
import { channelRoutes } from './channels.js';

export interface AdminOptions {
  deps: CommandDeps;
  token: string;
  /** ADMIN_TOKENS: one token per operator, recorded as actor `admin:<name>`. */
  namedTokens?: readonly NamedAdminToken[];
  /** The partner API's `{base_url}`: problem types point at its public pages (`{base_url}/problemas/<status>`). */
  problemBaseUrl: string;
  log: Logger;
  clock: Clock;
  waitForPosition: (position: number, timeoutMs: number) => Promise<boolean>;
  /** Called after the manual clock moved (the cover re-check scan); the answer waits for it. */
  onClockMoved?: () => Promise<void> | undefined;
  /** Extra routes (projections, streams, metrics) registered by their own modules. */
  extend?: (router: Router) => void;
}

/** Kept here for the route groups of infra/ops that read admin bodies. */
export { readJson } from './json-body.js';

export function createAdminApi(options: AdminOptions): Koa {
  const { deps } = options;
  const app = new Koa();
  logAppErrors(app, options.log);
  const router = new Router({ prefix: '/admin/v1' });
  app.use(adminEnvelope(options));

  // An operator's action is answered once the read models show it (a revoked key is refused from the next request
  // on); the bound only keeps a stalled projection from holding the call for ever.
  const settle = async (position: number | undefined) => {
    if (position !== undefined) await options.waitForPosition(position, 30_000);
  };
  const meta = (ctx: Koa.Context) => metadata(options.clock, undefined, ctx.state.actor as string);

  partnerRoutes(router, deps, settle, meta);
  streamRoutes(router, deps.events);
  clockRoutes(router, options.clock, options.onClockMoved);
  adminListRoutes(router, deps.reads);
  channelRoutes(router, deps, settle, meta);
  options.extend?.(router);
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}
