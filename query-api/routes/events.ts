/**
 * GET /events: the partner's notifications (PORTAL.md), in log order, after a signed cursor. Unlike the other lists
 * the cursor is never null: it says where to ask next, so a client polls with the last one it got (an empty page
 * hands back the cursor it was given; the very first one starts before everything).
 */
import { callerOf } from '../../shared-schema/http/context.js';
import { decodeCursor, encodeCursor, DEFAULT_LIMIT, type CursorScope } from '../../shared-schema/http/pagination.js';
import type { Scalar, Where } from '../../shared-schema/ports/read-store.js';
import {
  NOTIFICATIONS,
  notificationView,
  type NotificationDoc,
} from '../../shared-schema/read-models/notifications.js';
import { ListEventsQuery } from '../../shared-schema/contract/schemas/notifications.js';
import type { ReadRoute } from '../app.js';
import { textOf } from './catalog.js';

/** Sort values of the position before every notification: (position, seq, _id). */
const START: readonly Scalar[] = [0, 0, ''];

export const eventsReadRoutes: readonly ReadRoute[] = [
  {
    method: 'GET',
    path: '/events',
    scope: 'catalog',
    query: ListEventsQuery,
    handle: async (ctx, query, deps) => {
      const c = callerOf(ctx);
      const type = textOf(query.type);
      const scope: CursorScope = { tenant: c, list: 'events', filters: { type } };
      const after =
        typeof query.cursor === 'string'
          ? decodeCursor(deps.cursorSecret, scope, query.cursor, ['number', 'number', 'string'])
          : START;
      const where: Where = { partner_id: c.partnerId, env: c.env };
      if (type !== undefined) where.type = type;
      const rows = await deps.reads.find<NotificationDoc>(NOTIFICATIONS, {
        where,
        orderBy: [{ field: 'position' }, { field: 'seq' }],
        after,
        limit: (query.limit as number | undefined) ?? DEFAULT_LIMIT,
      });
      const last = rows[rows.length - 1];
      const next = last ? [last.position, last.seq, last._id] : after;
      return { data: rows.map(notificationView), next_cursor: encodeCursor(deps.cursorSecret, scope, next) };
    },
  },
];
