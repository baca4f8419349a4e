/** Channels and the clicks recorded through their links (the model: shared-schema/read-models/channels.ts). */
import { asUnion } from '../../shared-schema/ports/event-store.js';
import { CHANNEL_CATEGORY, type ChannelEvent } from '../../shared-schema/events/channel.js';
import type { ClickEvent } from '../../shared-schema/events/click.js';
import { CHANNELS, CHANNEL_COLLECTIONS, type ChannelDoc } from '../../shared-schema/read-models/channels.js';
import { alreadyApplied, type Projector } from '../projector.js';

export const channelsProjector: Projector = {
  name: CHANNELS,
  collections: CHANNEL_COLLECTIONS,
  categories: [CHANNEL_CATEGORY, 'click'],
  async apply(recorded, tx) {
    if (recorded.stream.startsWith('click-')) {
      const click = asUnion<ClickEvent>(recorded);
      const channelId = click.type === 'ClickRecorded' ? click.data.channel_id : undefined;
      if (channelId === undefined) return;
      const doc = await tx.get<ChannelDoc>(CHANNELS, channelId);
      if (!doc || alreadyApplied(doc, recorded)) return;
      await tx.put(CHANNELS, { ...doc, clicks: doc.clicks + 1, position: recorded.position });
      return;
    }
    const e = asUnion<ChannelEvent>(recorded);
    const current = await tx.get<ChannelDoc>(CHANNELS, e.data.channel_id);
    if (alreadyApplied(current, recorded)) return;
    switch (e.type) {
      case 'ChannelCreated':
        await tx.put(CHANNELS, {
          _id: e.data.channel_id,
          ...e.data,
          revoked_at: null,
          clicks: 0,
          position: recorded.position,
        } satisfies ChannelDoc);
        return;
      case 'ChannelRevoked':
        if (current) await tx.put(CHANNELS, { ...current, revoked_at: e.data.revoked_at, position: recorded.position });
        return;
    }
  },
};
