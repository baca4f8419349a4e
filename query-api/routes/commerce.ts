/**
 * GET /clicks, /conversions, /conversions/{order_id}, /reports/commission. Windowed lists bind their cursors to
 * the window (shared-schema/http/window.ts). Answers that hold BigCents figures are written as JSON text by
 * stringifyBigCents (a figure beyond 2^53 goes out as a bare integer).
 */
import { callerOf, type DoorContext } from '../../shared-schema/http/context.js';
import { DEFAULT_LIMIT, type CursorScope } from '../../shared-schema/http/pagination.js';
import { encodeWindowCursor, pageWindow, resolveWindow, type Window } from '../../shared-schema/http/window.js';
import { stringifyBigCents, JSON_TYPE } from '../../shared-schema/http/big-json.js';
import type { ReadStore, ReadView, Scalar, Where } from '../../shared-schema/ports/read-store.js';
import type { Tenant } from '../../shared-schema/domain/streams.js';
import { CLICKS, type ClickDoc } from '../../shared-schema/read-models/clicks.js';
import { ORDERS, orderDocId, type OrderDoc } from '../../shared-schema/read-models/orders.js';
import {
  CommissionReportQuery,
  GetConversionQuery,
  ListClicksQuery,
  ListConversionsQuery,
} from '../../shared-schema/contract/schemas/commerce.js';
import {
  combine,
  commercialTotals,
  figuresOf,
  coveringRanges,
  REPORT,
  STORED_FIELDS,
  zeroFigures,
  type ReportFigures,
} from '../../shared-schema/read-models/report.js';
import type { QueryDeps, ReadRoute } from '../app.js';
import { notFoundHere } from '../not-found.js';
import { textOf } from './catalog.js';

const json = (ctx: DoorContext, body: unknown): string => {
  ctx.type = JSON_TYPE;
  return stringifyBigCents(body);
};

/** One page of a windowed list ordered by [time field, store_id, _id]. */
async function windowPage<T extends { _id: string; store_id: string }>(
  ctx: DoorContext,
  deps: QueryDeps,
  list: string,
  collection: string,
  timeField: string,
  query: Record<string, unknown>,
): Promise<{ rows: T[]; next_cursor: string | null; window: Window }> {
  const caller = callerOf(ctx);
  // Bound to the store filter; the window is in the cursor's values. Sort values: time, store_id, _id.
  const scope: CursorScope = { tenant: caller, list, filters: { store_id: textOf(query.store_id) } };
  const { window, after } = pageWindow(deps.cursorSecret, scope, query, deps.clock.now(), [
    'string',
    'string',
    'string',
  ]);
  const where: Where = {
    partner_id: caller.partnerId,
    env: caller.env,
    [timeField]: { gte: window.since, lt: window.until },
  };
  if (typeof query.store_id === 'string') where.store_id = query.store_id;
  const limit = (query.limit as number | undefined) ?? DEFAULT_LIMIT;
  const rows = await deps.reads.find<T>(collection, {
    where,
    orderBy: [{ field: timeField }, { field: 'store_id' }],
    ...(after ? { after } : {}),
    limit: limit + 1,
  });
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  const sortOf = (r: T): Scalar[] => [(r as Record<string, unknown>)[timeField] as string, r.store_id, r._id];
  const next_cursor =
    rows.length > limit && last ? encodeWindowCursor(deps.cursorSecret, scope, window, sortOf(last)) : null;
  return { rows: page, next_cursor, window };
}

// ------------------------------------------------------------------------------------------------------ report

/** The report's figures per store, from the fewest documents that cover the window (coveringRanges). */
export async function figuresByStore(
  view: ReadView,
  tenant: Tenant,
  window: Window,
  storeId?: string,
): Promise<Map<string, ReportFigures>> {
  const base: Where = { partner_id: tenant.partnerId, env: tenant.env };
  if (storeId !== undefined) base.store_id = storeId;
  const byStore = new Map<string, ReportFigures>();
  for (const range of coveringRanges(window.since, window.until)) {
    const rows = await view.sum(range.collection, {
      where: { ...base, [range.field]: { gte: range.from, lt: range.to } },
      groupBy: 'store_id',
      fields: STORED_FIELDS,
    });
    for (const row of rows) {
      const store = String(row.key);
      byStore.set(store, combine(byStore.get(store) ?? zeroFigures(), figuresOf(row.sums)));
    }
  }
  return byStore;
}

/**
 * One consistent read of several queries: a projector's checkpoint (the report's by default) moves with every unit
 * of work that writes its collections, so an unchanged checkpoint around the queries means they all saw the same state. After a
 * few moving attempts the read runs inside one read-store unit (a snapshot on every engine).
 */
export async function consistently<T>(
  reads: ReadStore,
  read: (view: ReadView) => Promise<T>,
  projection: string = REPORT.projection,
): Promise<T> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const before = await reads.getCheckpoint(projection);
    const result = await read(reads);
    if ((await reads.getCheckpoint(projection)) === before) return result;
  }
  return reads.transact((tx) => read(tx));
}

export async function commissionReport(deps: QueryDeps, tenant: Tenant, window: Window, storeId?: string) {
  const byStore = await consistently(deps.reads, (view) => figuresByStore(view, tenant, window, storeId));
  const stores = [...byStore.entries()]
    .filter(([, f]) => f.clicks > 0 || f.orders > 0)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  // The totals are the sum of the rows shown: the same snapshot by construction.
  const totals = stores.reduce((acc, [, f]) => combine(acc, f), zeroFigures());
  return {
    since: window.since,
    until: window.until,
    currency: 'BRL' as const,
    environment: tenant.env,
    basis: 'paid_at_current_state' as const,
    commission_is: 'expected_not_settled' as const,
    totals: commercialTotals(totals),
    stores: stores.map(([store_id, f]) => ({ store_id, ...commercialTotals(f) })),
  };
}

export const commerceReadRoutes: readonly ReadRoute[] = [
  {
    method: 'GET',
    path: '/clicks',
    scope: 'clicks',
    query: ListClicksQuery,
    handle: async (ctx, query, deps) => {
      const { rows, next_cursor, window } = await windowPage<ClickDoc>(
        ctx,
        deps,
        'clicks',
        CLICKS,
        'occurred_at',
        query,
      );
      const data = rows.map((r) => ({
        click_id: r.click_id,
        store_id: r.store_id,
        sku: r.sku,
        price_cents: r.price_cents,
        occurred_at: r.occurred_at,
      }));
      return { data, next_cursor, since: window.since, until: window.until };
    },
  },
  {
    method: 'GET',
    path: '/conversions',
    scope: 'conversions',
    query: ListConversionsQuery,
    handle: async (ctx, query, deps) => {
      const { rows, next_cursor, window } = await windowPage<OrderDoc>(
        ctx,
        deps,
        'conversions',
        ORDERS,
        'paid_at',
        query,
      );
      return json(ctx, { data: rows.map((r) => r.order), next_cursor, since: window.since, until: window.until });
    },
  },
  {
    method: 'GET',
    path: '/conversions/:order_id',
    scope: 'conversions',
    query: GetConversionQuery,
    handle: async (ctx, query, deps) => {
      const [storeId, orderId] = [query.store_id as string, ctx.state.params.order_id];
      const doc = await deps.reads.get<OrderDoc>(ORDERS, orderDocId(callerOf(ctx), storeId, orderId));
      if (!doc)
        throw await notFoundHere(
          deps,
          callerOf(ctx),
          ORDERS,
          (t) => orderDocId(t, storeId, orderId),
          'order of this store',
        );
      return json(ctx, doc.order);
    },
  },
  {
    method: 'GET',
    path: '/reports/commission',
    scope: 'reports',
    query: CommissionReportQuery,
    handle: async (ctx, query, deps) => {
      const caller = callerOf(ctx);
      const window = resolveWindow(query, deps.clock.now());
      const storeId = typeof query.store_id === 'string' ? query.store_id : undefined;
      return json(ctx, await commissionReport(deps, caller, window, storeId));
    },
  },
];
