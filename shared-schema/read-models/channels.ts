/**
 * The channels read model, written by projections/projectors/channels.ts: one document per channel with the hash of
 * its token (the feeds find the caller by it) and the clicks recorded through its links.
 */
import type { CollectionSpec } from '../ports/read-store.js';

export const CHANNELS = 'channels';

export type ChannelDoc = {
  _id: string;
  channel_id: string;
  name: string;
  token_hash: string;
  created_at: string;
  revoked_at: string | null;
  /** Clicks the redirector recorded with this channel. */
  clicks: number;
  position: number;
};

/** What the operator sees of a channel: never its token nor its hash. */
export type ChannelView = Pick<ChannelDoc, 'channel_id' | 'name' | 'created_at' | 'revoked_at' | 'clicks'>;

export const channelView = (d: ChannelDoc): ChannelView => ({
  channel_id: d.channel_id,
  name: d.name,
  created_at: d.created_at,
  revoked_at: d.revoked_at,
  clicks: d.clicks,
});

export const CHANNEL_COLLECTIONS: readonly CollectionSpec[] = [
  { name: CHANNELS, indexes: [['token_hash'], ['created_at']] },
];
