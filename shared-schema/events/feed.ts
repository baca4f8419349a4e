/**
 * The feeds' own facts (FEEDS.md): the changes feed keeps what changed for a while, not for ever. When the clock has
 * passed the retention of the oldest changes, the retention reactor records `FeedChangesPruned` on the one stream
 * `feed-retention`; the feed projector then drops the changes judged before `before` (oldest first), so what is kept
 * is a fact of the log: a replay or an audit drops the same changes.
 */
import { CATEGORIES } from '../domain/streams.js';

export type FeedEvent = { type: 'FeedChangesPruned'; data: { before: string; pruned_at: string } };

export const FEED_CATEGORY = CATEGORIES.feed;
export const FEED_RETENTION_STREAM = `${FEED_CATEGORY}-retention`;
