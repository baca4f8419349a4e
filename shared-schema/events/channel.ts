/**
 * Channels (FEEDS.md): storefronts, messaging-app bots and comparison sites that receive the searchable offers
 * through the feeds. One stream per channel; the token is shown once when the channel is created, and only its
 * sha256 is stored, as for API keys.
 */
import { randomBytes } from 'node:crypto';
import { CATEGORIES } from '../domain/streams.js';

export type ChannelEvent =
  | {
      type: 'ChannelCreated';
      data: {
        channel_id: string;
        name: string;
        /** sha256 hex of the whole token; the token itself is never stored. */
        token_hash: string;
        created_at: string;
      };
    }
  | { type: 'ChannelRevoked'; data: { channel_id: string; revoked_at: string } };

export const CHANNEL_CATEGORY = CATEGORIES.channel;
export const channelStream = (channelId: string): string => `${CHANNEL_CATEGORY}-${channelId}`;

/** `ch_` and 22 characters of base64url (16 random bytes): what `canal` carries in offer links. */
export const CHANNEL_ID_PATTERN = /^ch_[A-Za-z0-9_-]{22}$/;
export const newChannelId = (): string => `ch_${randomBytes(16).toString('base64url')}`;
/** The channel's bearer token: 32 random bytes. */
export const newChannelToken = (): string => `fct_${randomBytes(32).toString('base64url')}`;
