/**
 * The operator's admin API (not part of the partner contract): its own port, bound to loopback unless configured,
 * guarded by `Authorization: Bearer <token>`: the single ADMIN_TOKEN (actor `admin`) or one operator's token of
 * ADMIN_TOKENS (actor `admin:<name>`). The actor is the token's, never a name the caller states, and is recorded in
 * the metadata of every event a route appends and in the request's log line. Each write waits until the projections
 * have applied it, so a key issued here works, and a key revoked here is refused, on the very next call (503 past the
 * bound: docs/adr/0104-admin-settle-503.md). The routes come in named groups: partners, keys
 * and stores (partners.ts), the log and the clock (log-and-clock.ts), the lists (lists.ts), the channels
 * (channels.ts), and whatever `extend` adds (the operator surface, infra/ops/admin-routes.ts).
 */
import Koa from 'koa';
import Router from '@koa/router';
import type { Logger } from 'pino';
import { logAppErrors } from '../client-abort.js';
import type { Clock } from '../../../shared-schema/ports/clock.js';
import { ProblemError } from '../../../shared-schema/contract/problems.js';
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
  /** How long a write waits for the projections to show it before answering 503 (default 30 s). */
  settleTimeoutMs?: number;
  /** Called after the manual clock moved (the cover re-check scan); the answer waits for it. */
  onClockMoved?: () => Promise<void> | undefined;
  /** Extra routes (projections, streams, metrics) registered by their own modules. */
  extend?: (router: Router) => void;
}

/** Kept here for the route groups of infra/ops that read admin bodies. */
export { readJson } from './json-body.js';

const SETTLE_MS = 30_000;

/**
 * Waits until the read models show an admin write: the position it appended, or, when it appended nothing, the last
 * event of `stream`. Throws a 503 problem past the bound.
 */
export type Settle = (position: number | undefined, stream?: string) => Promise<void>;

/** The position of the last event of `stream` (0 when it has none). */
async function lastPosition(deps: CommandDeps, stream: string): Promise<number> {
  const events = await deps.events.readStream(stream);
  return events.length === 0 ? 0 : events[events.length - 1].position;
}

export function createAdminApi(options: AdminOptions): Koa {
  const { deps } = options;
  const app = new Koa();
  logAppErrors(app, options.log);
  const router = new Router({ prefix: '/admin/v1' });
  app.use(adminEnvelope(options));

  // An operator's action is answered once the read models show it (a revoked key is refused from the next request
  // on); the bound only keeps a stalled projection from holding the call for ever. Past it the action is recorded but
  // not yet visible, so the answer says so (503, and a warning in the log) instead of a success the next request
  // would contradict. An action that appended nothing (the key already revoked: the operator's retry of such a 503)
  // waits for the last event of its stream, which holds the earlier action it repeats.
  const settleMs = options.settleTimeoutMs ?? SETTLE_MS;
  const settle: Settle = async (position, stream) => {
    const target = position ?? (stream === undefined ? undefined : await lastPosition(deps, stream));
    if (target === undefined || target <= 0) return;
    if (await options.waitForPosition(target, settleMs)) return;
    options.log.warn(
      { position: target, ...(stream === undefined ? {} : { stream }), waited_ms: settleMs },
      'admin action recorded but not projected within the bound: answered 503',
    );
    throw new ProblemError(
      503,
      [],
      'The action is recorded but the read models do not show it yet; send the same request again in a moment.',
      { 'Retry-After': '5' },
    );
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
