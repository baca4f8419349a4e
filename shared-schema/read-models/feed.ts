/**
 * The channel feed's read model (FEEDS.md), written by projections/projectors/feed.ts and read by the feeds
 * (query-api/feeds/): the facts of every live offer and store (the offers model's, by the same rule, plus the
 * description a feed shows), each offer's feed entry while it is in the feed, and the changes of the feed in the
 * order they happened.
 */
import type { CollectionSpec } from '../ports/read-store.js';
import type { OfferDoc } from '../shopper/offer-facts.js';
import type { FeedEntry } from '../feeds/feed-offer.js';

export const FEED_OFFERS = 'feed_offers';
export const FEED_STORES = 'feed_stores';
export const FEED_CHANGES = 'feed_changes';

export type FeedOfferDoc = OfferDoc & {
  description: string | null;
  /** The offer as the feed holds it; null while it is not in the feed. */
  entry: FeedEntry | null;
  in_feed: boolean;
};

/**
 * One change of the feed. `_id` orders the changes: the log position of the event that made it (16 digits), then
 * its rank among that event's changes (6 digits), so a replay writes the same changes under the same ids.
 */
export type FeedChangeDoc = { _id: string; op: 'upsert'; entry: FeedEntry } | { _id: string; op: 'delete'; id: string };

export const feedChangeKey = (position: number, rank: number): string =>
  `${String(position).padStart(16, '0')}:${String(rank).padStart(6, '0')}`;

export const FEED_COLLECTIONS: readonly CollectionSpec[] = [
  // store_key: a store's event judges its offers again; in_feed: the full feed reads the offers in it; in_feed and
  // last_write_at: before reading, the full feed asks whether any offer in it is past its 48 h (feeds/lapses.ts).
  {
    name: FEED_OFFERS,
    indexes: [['store_key'], ['in_feed'], ['in_feed', 'last_write_at']],
    filtered: ['last_write_at'],
  },
  { name: FEED_STORES, indexes: [] },
  { name: FEED_CHANGES, indexes: [] },
];
