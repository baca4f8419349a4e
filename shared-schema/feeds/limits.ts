/** The bounds of `GET /feeds/changes?limit` (FEEDS.md): the door checks them, the channels' document states them. */
export const DEFAULT_CHANGES_LIMIT = 500;
export const MAX_CHANGES_LIMIT = 1000;

/**
 * The zlib level of the full feed sent gzipped, unless FEED_GZIP_LEVEL says otherwise: 1, as nginx's
 * `gzip_comp_level` (docs/adr/0107-feed-gzip-level.md).
 */
export const DEFAULT_FEED_GZIP_LEVEL = 1;

/**
 * Offers a second a query process streams in full feeds, all downloads together, unless FEED_OFFERS_PER_SECOND says
 * otherwise (query-api/feeds/pace.ts, docs/adr/0111-feed-pace.md).
 */
export const DEFAULT_FEED_OFFERS_PER_SECOND = 200_000;
