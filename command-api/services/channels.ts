/** The operator's channel commands (the admin API and `ops channels` call these). */
import { channelStream, newChannelId, newChannelToken } from '../../shared-schema/events/channel.js';
import { sha256Hex } from '../../shared-schema/domain/ids.js';
import type { EventMetadata } from '../../shared-schema/ports/event-store.js';
import { channelDecider } from '../deciders/channel.js';
import type { CommandDeps } from './context.js';

/** Creates a channel; its token is returned only here, and only its hash is stored. */
export async function createChannel(deps: CommandDeps, name: string, meta: EventMetadata) {
  const channelId = newChannelId();
  const token = newChannelToken();
  const command = {
    type: 'CreateChannel',
    channelId,
    name,
    tokenHash: sha256Hex(token),
    now: meta.recorded_at,
  } as const;
  const handled = await deps.repo.handle(channelStream(channelId), channelDecider, command, meta);
  return { channel: { channel_id: channelId, name, token }, position: handled.position };
}

export async function revokeChannel(deps: CommandDeps, channelId: string, meta: EventMetadata) {
  const handled = await deps.repo.handle(
    channelStream(channelId),
    channelDecider,
    { type: 'RevokeChannel', channelId, now: meta.recorded_at },
    meta,
  );
  return { position: handled.position };
}
