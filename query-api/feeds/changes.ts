/**
 * GET /feeds/changes?cursor&limit — what changed in the feed (FEEDS.md): `{changes, next_cursor}`, the changes after
 * `cursor` (from the beginning without one) in the order they happened, at most `limit` (1..1000, default 500).
 * `next_cursor` is never null: with no change after it, it is where the caller already is. Cursors are signed
 * (shared-schema/http/pagination.ts) and hold the id of the last change given; a cursor the service did not issue
 * is 422. Every channel reads the same changes, with its own `canal` in the links. A cursor from before the changes
 * the retention dropped (or none, once some were dropped) is 410: the channel takes a new snapshot.
 */
import type { DoorContext } from '../../shared-schema/http/context.js';
import { decodeCursor, encodeCursor, type CursorScope } from '../../shared-schema/http/pagination.js';
import { fieldError, invalid, ProblemError } from '../../shared-schema/contract/problems.js';
import { publicQuery } from '../../shared-schema/http/parameters.js';
import type { Doc, ReadView } from '../../shared-schema/ports/read-store.js';
import { feedOffer, type FeedOffer } from '../../shared-schema/feeds/feed-offer.js';
import {
  FEED_CHANGES,
  FEED_MARKS,
  PRUNED_MARK,
  type FeedChangeDoc,
  type FeedPrunedDoc,
} from '../../shared-schema/read-models/feed.js';
import { DEFAULT_CHANGES_LIMIT, MAX_CHANGES_LIMIT } from '../../shared-schema/feeds/limits.js';
import type { QueryDeps } from '../app.js';

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
  const docs = await deps.reads.find<FeedChangeDoc & Doc>(FEED_CHANGES, {
    ...(after !== '' ? { after: [after] } : {}),
    limit,
  });
  const changes: FeedChange[] = docs.map((d) =>
    d.op === 'upsert'
      ? { op: 'upsert', offer: feedOffer(d.entry, deps.publicBaseUrl, channelId) }
      : { op: 'delete', id: d.id },
  );
  ctx.body = { changes, next_cursor: encodeChangesCursor(deps, docs.length > 0 ? docs[docs.length - 1]._id : after) };
}
