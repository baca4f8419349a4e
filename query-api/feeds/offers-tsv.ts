/**
 * GET /feeds/offers.tsv — the full feed (FEEDS.md): every offer searchable now, once, as one TSV line, read from the
 * feed model page by page and streamed (gzip when asked), with `Feed-Cursor` (where the changes continue from this
 * snapshot) and an `ETag` (304 to a matching `If-None-Match`).
 *
 * An offer is written when the feed model holds it and the search's rule (`isSearchable`) still says so now: the
 * model judged it when its last event came; the clock may have made it stale since, before the freshness reactor
 * recorded that, and the query leaves out the offers whose last write is more than 48 h old. The snapshot starts at the newest change; offers written while the pages are read are read as they
 * are then, and their changes come after `Feed-Cursor`, so applying them gives the same offers.
 *
 * The ETag is the newest change and the number of offers the clock has made stale since their last event: with the
 * change fixed, the clock only adds to that set, so the same pair means the same lines.
 */
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { createGzip } from 'node:zlib';
import { DEFAULT_FEED_GZIP_LEVEL } from '../../shared-schema/feeds/limits.js';
import type { DoorContext } from '../../shared-schema/http/context.js';
import type { ReadView } from '../../shared-schema/ports/read-store.js';
import { staleCutoff } from '../../shared-schema/domain/product-status.js';
import { tsvLink, tsvOf, tsvTemplate, TSV_HEADER } from '../../shared-schema/feeds/feed-offer.js';
import { FEED_OFFERS, type FeedOfferDoc } from '../../shared-schema/read-models/feed.js';
import type { QueryDeps } from '../app.js';
import { documentsById } from '../documents.js';
import { encodeChangesCursor, newestChange } from './changes.js';
import { untilLapsesRecorded } from './lapses.js';
import type { FeedPace } from './pace.js';

/** Offers read per page: what the feed holds in memory at once (a few MB), in few statements. */
export const FEED_PAGE = 250;

type FeedRow = { _id: string; tsv: string | null };

/**
 * The lines of the offers searchable at `now`, each page taken from `pace` (the process's budget for the full feed)
 * when there is one: those the model holds in the feed (judged by `isSearchable` at their
 * last event, every check but the clock's fixed since) whose last write is not more than 48 h before `now` (rule 3,
 * the one check that moves with the clock), compared in the query. Each line is the one the projector kept
 * (`tsvTemplate`), completed with the channel's link; an offer projected before lines were kept has none, and its
 * line is made from its document's entry (the same bytes).
 */
export async function* feedLines(
  reads: ReadView,
  now: Date,
  publicBase: string,
  channelId: string,
  pace?: FeedPace,
): AsyncGenerator<string> {
  yield TSV_HEADER;
  const link = tsvLink(publicBase, channelId);
  const where = {
    in_feed: true,
    last_write_at: { gte: staleCutoff(now) },
  };
  for (let after: string | null = null; ;) {
    const page: FeedRow[] = await reads.find<FeedRow>(FEED_OFFERS, {
      where,
      ...(after !== null ? { after: [after] } : {}),
      limit: FEED_PAGE,
      fields: ['tsv'],
    });
    // Offers projected before lines were kept: their documents, in one read for the page.
    const earlier = await documentsById<FeedOfferDoc>(
      reads,
      FEED_OFFERS,
      page.filter((row) => row.tsv === null).map((row) => row._id),
    );
    let text = '';
    for (const row of page) {
      if (row.tsv !== null) text += tsvOf(row.tsv, link);
      else {
        const doc = earlier.get(row._id);
        if (doc?.entry && doc.in_feed) text += tsvOf(tsvTemplate(doc.entry), link);
      }
    }
    if (text) yield text;
    if (page.length < FEED_PAGE) return;
    after = page[page.length - 1]._id;
    // The next page waits for the event loop's next turn. An embedded read store answers `find` synchronously and a
    // loopback socket takes a page without waiting, so without this the pages follow one another in microtasks and
    // hold the loop for the whole download, while the searches' and the writes' requests, answers and the search
    // threads' replies wait behind it. A page is a few ms of work; a turn between pages costs the feed nothing.
    await nextTurn();
    await pace?.take(page.length);
  }
}

export async function fullFeed(ctx: DoorContext, deps: QueryDeps, channelId: string): Promise<void> {
  const now = deps.clock.now();
  const dueSince = await untilLapsesRecorded(deps, now);
  const newest = await newestChange(deps.reads);
  const etag = `"${createHash('sha256')
    .update(JSON.stringify([channelId, newest, dueSince]))
    .digest('base64url')
    .slice(0, 32)}"`;
  ctx.set('ETag', etag);
  ctx.set('Feed-Cursor', encodeChangesCursor(deps, newest));
  ctx.vary('Accept-Encoding');
  const matches = (ctx.get('If-None-Match') || '')
    .split(',')
    .map((t) => t.trim())
    .some((t) => t === etag || t === `W/${etag}` || t === '*');
  if (matches) {
    ctx.status = 304;
    return;
  }
  ctx.status = 200;
  ctx.type = 'text/tab-separated-values; charset=utf-8';
  if (ctx.method === 'HEAD') return;
  // Bytes, not objects: the stream holds one page of text ahead of the socket (or of gzip), not 16.
  const lines = feedLines(deps.reads, now, deps.publicBaseUrl, channelId, deps.feedPace);
  const body = Readable.from(lines, { objectMode: false });
  if (ctx.acceptsEncodings('gzip', 'identity') === 'gzip') {
    ctx.set('Content-Encoding', 'gzip');
    // Level 1 by default (FEED_GZIP_LEVEL): a few more bytes than zlib's 6 for a fraction of its CPU, which keeps a
    // gzipped download at the plain one's pace (docs/adr/0107-feed-gzip-level.md).
    ctx.body = body.pipe(createGzip({ level: deps.feedGzipLevel ?? DEFAULT_FEED_GZIP_LEVEL }));
    body.on('error', (err) => ctx.res.destroy(err));
  } else ctx.body = body;
}
