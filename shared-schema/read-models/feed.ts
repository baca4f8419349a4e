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
  /** The offer's feed id while it is in the feed, else null. */
  feed_id?: string | null;
  /** A hash of the canonical JSON of its feed entry while it is in the feed (what moved is an upsert), else null. */
  entry_hash?: string | null;
  /**
   * Documents projected before `feed_id` and `entry_hash` were kept: the offer as the feed holds it (null while not
   * in the feed). The next judgment of the offer replaces it by those two.
   */
  entry?: FeedEntry | null;
  in_feed: boolean;
  /**
   * The offer's line of the full feed while it is in the feed (`tsvTemplate` of `entry`), else null; absent from
   * documents projected before it was kept (the full feed then makes it from `entry`).
   */
  tsv?: string | null;
};

/**
 * One change of the feed. `_id` orders the changes: the log position of the event that made it (16 digits), then
 * its rank among that event's changes (6 digits), so a replay writes the same changes under the same ids.
 *
 * A change keeps its JSON as the changes feed lists it, without the service's address and the channel
 * (`changeTemplate`), and the time it was judged at (ISO). Changes written by earlier versions also keep the change
 * itself (`entry`), and the oldest lack the text or the time (the feed then makes the text from the change, and the
 * retention counts it as older).
 */
export type FeedChangeDoc =
  | { _id: string; op: 'upsert'; at: string; json: string }
  | { _id: string; op: 'delete'; id: string; at: string; json: string }
  | EarlierFeedChangeDoc;

/** A change as versions that kept the change itself wrote it (with or without its text and time). */
export type EarlierFeedChangeDoc = (
  { _id: string; op: 'upsert'; entry: FeedEntry } | { _id: string; op: 'delete'; id: string }
) & { at?: string; json?: string };

export const FEED_MARKS = 'feed_marks';
/** The `_id` of the mark of the changes dropped by the retention. */
export const PRUNED_MARK = 'pruned';

/**
 * How far the changes were dropped (docs/adr/0103-feed-changes-retention.md): every change up to `through` is gone,
 * so a cursor before it can no longer be followed.
 */
export type FeedPrunedDoc = {
  _id: typeof PRUNED_MARK;
  /** The id of the newest change dropped. */
  through: string;
  /** The `before` of the last `FeedChangesPruned` applied. */
  before: string;
  position: number;
};

/** Changes dropped per `FeedChangesPruned` at most (one unit of the projection); the reactor asks again for the rest. */
export const PRUNE_PER_EVENT = 50_000;

export const feedChangeKey = (position: number, rank: number): string =>
  `${String(position).padStart(16, '0')}:${String(rank).padStart(6, '0')}`;

export const FEED_COLLECTIONS: readonly CollectionSpec[] = [
  // store_key: a store's event judges its offers again. in_feed, _id, last_write_at, tsv: the full feed reads the
  // offers in it in key order, their last write compared to the clock, and their lines — all from the index, which
  // holds every field the read needs, so a page is one run of index entries and no row of the collection is read
  // (on a million offers a quarter of the CPU of an index on in_feed that points into the rows). Whether an offer is
  // past its 48 h is asked of the products' index the freshness reactor scans (feeds/lapses.ts), not of one here: an
  // index ordered by the time of the last write has an entry moved by every write.
  {
    name: FEED_OFFERS,
    indexes: [['store_key'], ['in_feed', '_id', 'last_write_at', 'tsv']],
    // A store event reaches the store's offers through the first; the projector reads nothing by the second.
    applyIndexes: [['store_key']],
    filtered: ['last_write_at', 'tsv'],
  },
  { name: FEED_STORES, indexes: [] },
  // json: a page of the changes feed reads each change's text alone, as a column (no document read per change).
  { name: FEED_CHANGES, indexes: [], projected: ['json'] },
  { name: FEED_MARKS, indexes: [] },
];
