/**
 * The channel feeds (FEEDS.md), public paths of the query door outside `/v1`, in front of its partner
 * authentication: a channel calls them with `Authorization: Bearer <channel token>` (401 Problem otherwise), at most
 * 60 requests a minute per channel (the one brake rule, shared-schema/http/minute-brake.ts; 429 with `Retry-After`).
 *
 * - GET /feeds/offers.tsv             the full feed (offers-tsv.ts)
 * - GET /feeds/changes?cursor&limit   what changed since a cursor (changes.ts)
 * - GET /feeds/openapi.json           the channels' OpenAPI document (no token)
 *
 * Only GET and HEAD; anything else 405.
 */
import type { Next } from 'koa';
import type { DoorContext } from '../../shared-schema/http/context.js';
import { countInMinute } from '../../shared-schema/http/minute-brake.js';
import { ProblemError, methodNotAllowed } from '../../shared-schema/contract/problems.js';
import { isFeedPath } from '../../shared-schema/http/routes.js';
import { sha256Hex } from '../../shared-schema/domain/ids.js';
import { CHANNELS, type ChannelDoc } from '../../shared-schema/read-models/channels.js';
import type { QueryDeps } from '../app.js';
import { fullFeed } from './offers-tsv.js';
import { changesFeed } from './changes.js';
import { buildFeedsOpenApi } from '../../shared-schema/feeds/openapi.js';

/** The channels' own OpenAPI document: public, like the partner contract's. */
export const OPENAPI_PATH = '/feeds/openapi.json';
/** Requests per channel and minute. */
export const CHANNEL_LIMIT = 60;

/** The channel of the bearer token sent, or a 401 Problem (no token, an unknown one, a revoked one). */
async function channelOf(ctx: DoorContext, deps: QueryDeps): Promise<ChannelDoc> {
  const token = /^Bearer (\S+)$/.exec(ctx.get('Authorization'))?.[1];
  const [channel] = token
    ? await deps.reads.find<ChannelDoc>(CHANNELS, { where: { token_hash: sha256Hex(token) }, limit: 1 })
    : [];
  if (!channel || channel.revoked_at !== null)
    throw new ProblemError(401, [], 'Send a valid channel token in the header `Authorization: Bearer <token>`.', {
      'WWW-Authenticate': 'Bearer realm="feeds"',
    });
  return channel;
}

export function feedRoutes(deps: QueryDeps) {
  const document = JSON.stringify(buildFeedsOpenApi(deps.publicBaseUrl), null, 2);
  return async (ctx: DoorContext, next: Next): Promise<void> => {
    if (!isFeedPath(ctx.path)) {
      await next();
      return;
    }
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') throw methodNotAllowed(ctx.method, 'GET, HEAD');
    if (ctx.path === OPENAPI_PATH) {
      ctx.type = 'application/json';
      ctx.body = document;
      return;
    }
    const handler =
      ctx.path === '/feeds/offers.tsv' ? fullFeed : ctx.path === '/feeds/changes' ? changesFeed : undefined;
    if (!handler) throw new ProblemError(404, [], 'No such feed.');
    const channel = await channelOf(ctx, deps);
    await countInMinute(
      deps,
      `feedrate:${channel.channel_id}`,
      CHANNEL_LIMIT,
      `Rate brake: at most ${CHANNEL_LIMIT} feed requests per minute per channel.`,
    );
    ctx.set('Cache-Control', 'no-store');
    await handler(ctx, deps, channel.channel_id);
  };
}
