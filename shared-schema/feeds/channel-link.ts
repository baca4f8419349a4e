/**
 * `canal` on an offer's links (FEEDS.md): the channel whose link a shopper followed. The redirector records it on the
 * click and the offer page keeps it on its buy link, only when it names a channel that exists and is not revoked;
 * anything else (absent, repeated, malformed, unknown, revoked) is ignored and the address answers as without it
 * (docs/adr/0083-clicks-per-channel.md).
 */
import { CHANNEL_ID_PATTERN } from '../events/channel.js';
import type { ReadView } from '../ports/read-store.js';
import { CHANNELS, type ChannelDoc } from '../read-models/channels.js';

/** The `canal` of a request's query string (`a=1&canal=ch_…`), or null when absent or sent more than once. */
export function canalOf(search: string): string | null {
  const values = new URLSearchParams(search).getAll('canal');
  return values.length === 1 ? values[0] : null;
}

/** The channel id `canal` names when it is a channel not revoked; otherwise null. */
export async function activeChannel(reads: ReadView, canal: string | null): Promise<string | null> {
  if (canal === null || !CHANNEL_ID_PATTERN.test(canal)) return null;
  const channel = await reads.get<ChannelDoc>(CHANNELS, canal);
  return channel && channel.revoked_at === null ? channel.channel_id : null;
}
