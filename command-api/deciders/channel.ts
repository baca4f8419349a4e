/** The channel aggregate (FEEDS.md): created with the hash of its token, revoked once. */
import type { ChannelEvent } from '../../shared-schema/events/channel.js';
import { ProblemError, notFound } from '../../shared-schema/contract/problems.js';
import { unreachable, type Decider, type Decision } from './decider.js';

export interface ChannelState {
  exists: boolean;
  revoked: boolean;
}

export type ChannelCommand =
  | { type: 'CreateChannel'; channelId: string; name: string; tokenHash: string; now: string }
  | { type: 'RevokeChannel'; channelId: string; now: string };

function evolve(s: ChannelState, e: ChannelEvent): ChannelState {
  switch (e.type) {
    case 'ChannelCreated':
      return { exists: true, revoked: false };
    case 'ChannelRevoked':
      return { ...s, revoked: true };
    default:
      return unreachable(e);
  }
}

function decide(c: ChannelCommand, s: ChannelState): Decision<ChannelEvent, null> {
  switch (c.type) {
    case 'CreateChannel':
      if (s.exists) throw new ProblemError(409, [], 'The channel exists.');
      return {
        events: [
          {
            type: 'ChannelCreated',
            data: { channel_id: c.channelId, name: c.name, token_hash: c.tokenHash, created_at: c.now },
          },
        ],
        result: null,
      };
    case 'RevokeChannel':
      if (!s.exists) throw notFound('No such channel.');
      if (s.revoked) return { events: [], result: null };
      return {
        events: [{ type: 'ChannelRevoked', data: { channel_id: c.channelId, revoked_at: c.now } }],
        result: null,
      };
    default:
      return unreachable(c);
  }
}

export const channelDecider: Decider<ChannelState, ChannelCommand, ChannelEvent, null> = {
  name: 'channel',
  initialState: () => ({ exists: false, revoked: false }),
  evolve,
  decide,
};
