/**
 * GET /feeds/changes?cursor&limit — what changed in the feed (FEEDS.md): `{changes, next_cursor}`, the changes after
 * `cursor` (from the beginning without one) in the order they happened, at most `limit` (1..1000, default 500).
 * `next_cursor` is never null: with no change after it, it is where the caller already is. Cursors are signed
 * (shared-schema/http/pagination.ts) and hold the id of the last change given; a cursor the service did not issue
 * is 422. Every channel reads the same changes, with its own `canal` in the links. A cursor from before the changes
 * the retention dropped (or none, once some were dropped) is 410: the channel takes a new snapshot. The answer is
 * written as text from what the projector kept with each change (docs/adr/0098-stream-pages.md).
 */
import type { DoorContext } from '../../shared-schema/http/context.js';
import { decodeCursor, encodeCursor, type CursorScope } from '../../shared-schema/http/pagination.js';
import { fieldError, invalid, ProblemError } from '../../shared-schema/contract/problems.js';
import { publicQuery } from '../../shared-schema/http/parameters.js';
import type { ReadView } from '../../shared-schema/ports/read-store.js';
import { changeLink, changeOf, changeTemplate, type FeedOffer } from '../../shared-schema/feeds/feed-offer.js';
import {
  FEED_CHANGES,
  FEED_MARKS,
  PRUNED_MARK,
  type EarlierFeedChangeDoc,
  type FeedPrunedDoc,
} from '../../shared-schema/read-models/feed.js';
import { DEFAULT_CHANGES_LIMIT, MAX_CHANGES_LIMIT } from '../../shared-schema/feeds/limits.js';
import type { QueryDeps } from '../app.js';
import { documentsById } from '../documents.js';

/** A change as the answer lists it (written as text: `changesPage`). */
export type FeedChange = { op: 'upsert'; offer: FeedOffer } | { op: 'delete'; id: string };

const SCOPE: CursorScope = { tenant: { env: 'live', partnerId: 'feeds' }, list: 'feed-changes' };

/** How far the retention dropped the changes ('' when none was dropped). */
export async function prunedThrough(reads: ReadView): Promise<string> {
  return (await reads.get<FeedPrunedDoc>(FEED_MARKS, PRUNED_MARK))?.through ?? '';
}

/**
 * The id of the newest change ('' when there is none yet: before the first); when the retention dropped every change,
 * the newest dropped, so that a snapshot's cursor is never one the retention refuses.
 */
export async function newestChange(reads: ReadView): Promise<string> {
  const [last] = await reads.find<{ _id: string }>(FEED_CHANGES, {
    orderBy: [{ field: '_id', dir: 'desc' }],
    limit: 1,
    fields: [],
  });
  if (last) return last._id;
  return prunedThrough(reads);
}

export const encodeChangesCursor = (deps: Pick<QueryDeps, 'cursorSecret'>, after: string): string =>
  encodeCursor(deps.cursorSecret, SCOPE, [after]);

function parse(ctx: DoorContext, deps: QueryDeps): { after: string; limit: number } {
  const { errors, one, limit: limitOf } = publicQuery(ctx.query, ['cursor', 'limit'], 'the changes feed');
  const limit = limitOf(DEFAULT_CHANGES_LIMIT, MAX_CHANGES_LIMIT);
  const cursor = one('cursor');
  let after = '';
  if (cursor !== undefined) {
    try {
      after = decodeCursor(deps.cursorSecret, SCOPE, cursor, ['string'])[0] as string;
    } catch {
      errors.push(fieldError('cursor', 'invalid', 'The cursor is not one this service issued for the changes feed.'));
    }
  }
  if (errors.length > 0) throw invalid(errors);
  return { after, limit };
}

export async function changesFeed(ctx: DoorContext, deps: QueryDeps, channelId: string): Promise<void> {
  const { after, limit } = parse(ctx, deps);
  const through = await prunedThrough(deps.reads);
  // Changes after the cursor were dropped (or, without one, the first ones): what the channel holds can no longer be
  // brought up to date by changes alone.
  if (through !== '' && after < through)
    throw new ProblemError(
      410,
      [{ field: 'cursor', code: 'expired', message: 'The changes after this cursor are no longer kept.' }],
      'The changes after this cursor are no longer kept: read /feeds/offers.tsv again and follow the changes from its Feed-Cursor.',
    );
  const page = await changesPage(deps.reads, after, limit, deps.publicBaseUrl, channelId);
  ctx.type = 'application/json';
  ctx.body = `{"changes":[${page.changes}],"next_cursor":${JSON.stringify(encodeChangesCursor(deps, page.last ?? after))}}`;
}

type ChangeRow = { _id: string; json: string | null };

/**
 * The changes after `after` (at most `limit`) as the JSON text of the answer's `changes` array without its brackets,
 * each change's text the one the projector kept (`changeTemplate`) completed with the channel's links, and the id of
 * the last one (null when there is none). No document is read nor any JSON written per change: the page's text is
 * `JSON.stringify` of the changes' objects, byte for byte. A change kept before its text was has none; its document
 * is read (one read for the page) and its text made by the projector's function.
 */
export async function changesPage(
  reads: ReadView,
  after: string,
  limit: number,
  publicBase: string,
  channelId: string,
): Promise<{ changes: string; last: string | null }> {
  const rows = await reads.find<ChangeRow>(FEED_CHANGES, {
    ...(after !== '' ? { after: [after] } : {}),
    limit,
    fields: ['json'],
  });
  // Changes written before the text was kept: their documents hold the change itself.
  const earlier = await documentsById<EarlierFeedChangeDoc>(
    reads,
    FEED_CHANGES,
    rows.filter((row) => row.json === null).map((row) => row._id),
  );
  const link = changeLink(publicBase, channelId);
  let changes = '';
  let last: string | null = null;
  for (const row of rows) {
    let template = row.json;
    if (template === null) {
      const doc = earlier.get(row._id);
      // Dropped by the retention between the two reads: the page ends before it, and its cursor then answers 410, as
      // a page read after the drop would.
      if (!doc) break;
      template = changeTemplate(
        doc.op === 'upsert' ? { op: 'upsert', entry: doc.entry } : { op: 'delete', id: doc.id },
      );
    }
    changes += last === null ? changeOf(template, link) : `,${changeOf(template, link)}`;
    last = row._id;
  }
  return { changes, last };
}
