/**
 * The operator's channels (FEEDS.md), behind the admin token:
 *
 * - POST /admin/v1/channels {name}              → 201 {channel_id, name, token} (the token is shown only here)
 * - GET  /admin/v1/channels                     → {channels: [{channel_id, name, created_at, revoked_at, clicks}]}
 * - POST /admin/v1/channels/{channel_id}/revoke → the channel, its token refused from then on
 */
import type Koa from 'koa';
import type Router from '@koa/router';
import type { EventMetadata } from '../../../shared-schema/ports/event-store.js';
import { fieldError, invalid, notFound } from '../../../shared-schema/contract/problems.js';
import { CHANNEL_ID_PATTERN, channelStream } from '../../../shared-schema/events/channel.js';
import { CHANNELS, channelView, type ChannelDoc } from '../../../shared-schema/read-models/channels.js';
import type { Doc } from '../../../shared-schema/ports/read-store.js';
import type { CommandDeps } from '../../../command-api/services/context.js';
import { createChannel, revokeChannel } from '../../../command-api/services/channels.js';
import { readJson } from './json-body.js';
import type { Settle } from './app.js';

const PAGE = 500;

export function channelRoutes(
  router: Router,
  deps: CommandDeps,
  settle: Settle,
  meta: (ctx: Koa.Context) => EventMetadata,
): void {
  router.post('/channels', async (ctx) => {
    const body = await readJson(ctx);
    const errors = Object.keys(body)
      .filter((k) => k !== 'name')
      .map((k) => fieldError(k, 'unknown_field', `\`${k}\` is not a field of a channel.`));
    const name = body.name;
    if (typeof name !== 'string' || name.trim().length < 2 || name.length > 120)
      errors.push(fieldError('name', 'required', 'name: 2 to 120 characters.'));
    if (errors.length) throw invalid(errors);
    const r = await createChannel(deps, name as string, meta(ctx));
    await settle(r.position);
    ctx.status = 201;
    ctx.body = r.channel;
  });

  router.get('/channels', async (ctx) => {
    const channels = [];
    for (let after: [string, string] | null = null; ;) {
      const page: (ChannelDoc & Doc)[] = await deps.reads.find<ChannelDoc & Doc>(CHANNELS, {
        orderBy: [{ field: 'created_at' }],
        ...(after ? { after } : {}),
        limit: PAGE,
      });
      channels.push(...page.map(channelView));
      if (page.length < PAGE) break;
      const last = page[page.length - 1];
      after = [last.created_at, last._id];
    }
    ctx.body = { channels };
  });

  router.post('/channels/:channel_id/revoke', async (ctx) => {
    const channelId = ctx.params.channel_id;
    if (!CHANNEL_ID_PATTERN.test(channelId)) throw notFound('No such channel.');
    const r = await revokeChannel(deps, channelId, meta(ctx));
    await settle(r.position, channelStream(channelId));
    const doc = await deps.reads.get<ChannelDoc & Doc>(CHANNELS, channelId);
    if (!doc) throw notFound('No such channel.');
    ctx.body = channelView(doc);
  });
}
