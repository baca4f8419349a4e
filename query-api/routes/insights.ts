/**
 * The reads behind the partner portal (PORTAL.md): `GET /products/{sku}/visibility`, `GET /insights/catalog`,
 * `GET /insights/daily`. Each is a function of the caller's tenant, so the portal's pages (query-api/portal/) call
 * the very same reads with a session's tenant.
 *
 * Visibility is shared-schema/domain/visibility.ts (the shopper search's own checks) on the products read model, whose
 * state is the one `GET /products/{sku}` answers. Daily activity is the commission report's figures (commerce.ts),
 * read per UTC day inside the report's window in one consistent read, so its totals are the report's.
 */
import { callerOf } from '../../shared-schema/http/context.js';
import { resolveWindow, DAY_MS, type Window } from '../../shared-schema/http/window.js';
import { stringifyBigCents, JSON_TYPE } from '../../shared-schema/http/big-json.js';
import { toBigCents, type BigCents } from '../../shared-schema/domain/order-math.js';
import type { ReadView, Scalar, Where } from '../../shared-schema/ports/read-store.js';
import { urlHost } from '../../shared-schema/domain/host-match.js';
import {
  freshUntil as lapseDueAt,
  pageDomainApproved,
  staleCutoff,
  type ProductState,
} from '../../shared-schema/domain/product-status.js';
import {
  COUNTS_KEPT,
  countId,
  countKeyOf,
  LAPSED,
  PRODUCT_COUNTS,
  PRODUCTS,
  STORE_FACTS,
  codesOfKey,
  hourOf,
  type ProductCountDoc,
  productDocId,
  storeFactsId,
  type ProductDoc,
  type ProductStoreDoc,
} from '../../shared-schema/read-models/products.js';
import { combine, zeroFigures, type ReportFigures } from '../../shared-schema/read-models/report.js';
import { CatalogInsightsQuery, DailyInsightsQuery } from '../../shared-schema/contract/schemas/insights.js';
import type { Tenant } from '../../shared-schema/domain/streams.js';
import {
  checkDetail,
  freshUntil,
  stateAt,
  visibilityChecks,
  type VisibilityCheckName,
} from '../../shared-schema/domain/visibility.js';
import type { QueryDeps, ReadRoute } from '../app.js';
import { NO_QUERY } from '../no-query.js';
import { notFoundHere } from '../not-found.js';
import { productsWhere, productViews, textOf } from './catalog.js';
import { consistently, figuresByStore } from './commerce.js';

export type Visibility = {
  sku: string;
  store_id: string;
  environment: Tenant['env'];
  searchable: boolean;
  checks: { check: VisibilityCheckName; ok: boolean; detail: string | null }[];
  fresh_until: string | null;
  svc_url: string | null;
};

/** The checks of a product of the products read model with its store's facts (null: the store is unknown). */
function checksOf(tenant: Tenant, doc: ProductDoc, store: ProductStoreDoc | null, now: Date) {
  return visibilityChecks(
    {
      live: tenant.env === 'live',
      base: doc.base_state,
      last_write_at: doc.last_write_at,
      store,
      page_host: urlHost(doc.product.product_url),
      available: doc.product.available,
    },
    now,
  );
}

/** Searchable, or for a test product what its live twin would be: every check ok but `live`. */
const passes = (checks: readonly { check: VisibilityCheckName; ok: boolean }[]): boolean =>
  checks.every((c) => c.ok || c.check === 'live');

const storeFactsIn = (view: ReadView, tenant: Tenant, storeId: string) =>
  view.get<ProductStoreDoc>(STORE_FACTS, storeFactsId(tenant, storeId));
const storeFacts = (deps: QueryDeps, tenant: Tenant, storeId: string) => storeFactsIn(deps.reads, tenant, storeId);

/** The Visibility of one product of the tenant; null when the SKU was never sent in its environment. */
export async function productVisibility(deps: QueryDeps, tenant: Tenant, sku: string): Promise<Visibility | null> {
  const doc = await deps.reads.get<ProductDoc>(PRODUCTS, productDocId(tenant, sku));
  if (!doc) return null;
  const now = deps.clock.now();
  const checks = checksOf(tenant, doc, await storeFacts(deps, tenant, doc.store_id), now);
  const state = stateAt({ base: doc.base_state, last_write_at: doc.last_write_at }, now);
  const [view] = await productViews(deps, tenant, [doc]);
  return {
    sku: doc.sku,
    store_id: doc.store_id,
    environment: tenant.env,
    searchable: checks.every((c) => c.ok),
    checks: checks.map((c) => ({ ...c, detail: c.ok ? null : checkDetail(c.check, state) })),
    fresh_until: freshUntil({ base: doc.base_state, last_write_at: doc.last_write_at }, now),
    svc_url: view.svc_url ?? null,
  };
}

const STATES: readonly ProductState[] = ['pending', 'accepted', 'rejected', 'stale', 'removed'];
/** Documents read per page while judging documents projected before their counted fields existed. */
const PAGE = 500;

/** Every product of a where, page by page in the order of the state index (`sku`, then `_id`). */
async function* productsOf(view: ReadView, where: Where): AsyncGenerator<ProductDoc> {
  for (let after: [string, string] | null = null; ;) {
    const page: ProductDoc[] = await view.find<ProductDoc>(PRODUCTS, {
      where,
      orderBy: [{ field: 'sku' }],
      limit: PAGE,
      ...(after !== null ? { after } : {}),
    });
    yield* page;
    if (page.length < PAGE) return;
    const last = page[page.length - 1];
    after = [last.sku, last._id];
  }
}

/** The number of rows of each value of `field` among the products of `where` (null: the field is absent). */
async function countsBy(view: ReadView, where: Where, field: string): Promise<{ key: Scalar; count: number }[]> {
  return (await view.sum(PRODUCTS, { where, groupBy: field, fields: [] })).map((r) => ({ key: r.key, count: r.count }));
}

/**
 * The searchable products of `accepted` (where: the `accepted` state), by the checks of visibility.ts: the available
 * ones are counted by store and page host, each host judged once against its store's facts (a store not active has
 * none), in one grouped count of the partner's (or store's) products and one of each active store's; documents
 * projected before `page_host` and `available` were kept are judged one by one.
 */
async function searchableCount(deps: QueryDeps, tenant: Tenant, accepted: Where, now: Date): Promise<number> {
  let searchable = 0;
  const storeIds =
    typeof accepted.store_id === 'string'
      ? [accepted.store_id]
      : (await countsBy(deps.reads, accepted, 'store_id')).map((r) => r.key).filter((k) => typeof k === 'string');
  for (const storeId of storeIds) {
    const facts = await storeFacts(deps, tenant, storeId);
    if (facts?.status !== 'active') continue;
    const available: Where = { ...accepted, store_id: storeId, available: true };
    for (const { key: host, count } of await countsBy(deps.reads, available, 'page_host'))
      if (typeof host === 'string' && pageDomainApproved(facts, host)) searchable += count;
    const older: Where = { ...accepted, store_id: storeId, page_host: null };
    if ((await deps.reads.count(PRODUCTS, older)) > 0)
      for await (const doc of productsOf(deps.reads, older))
        if (passes(checksOf(tenant, doc, facts, now))) searchable++;
  }
  return searchable;
}

export type CatalogInsights = {
  environment: Tenant['env'];
  store_id: string | null;
  states: Record<ProductState, number>;
  searchable: number;
  reasons: { code: string; count: number }[];
};

/** The reasons' counts in the answer's order: the largest count first, then by code. */
const reasonsList = (reasons: ReadonlyMap<string, number>) =>
  [...reasons]
    .map(([code, count]) => ({ code, count }))
    .sort((a, b) => b.count - a.count || (a.code < b.code ? -1 : a.code > b.code ? 1 : 0));

/**
 * The number of products of each count row (by `countId`) whose 48 h passed by `now` with their lapse not recorded
 * yet, among those last written at or after `from`: read from the index the freshness reactor scans (lapse due by
 * `now`), which holds only the lapses the reactor has still to record. Filtered here rather than in the read, so
 * that the read keeps to that index.
 */
async function dueByRow(view: ReadView, from: string, now: Date): Promise<Map<string, number>> {
  const due = new Map<string, number>();
  const where: Where = { base_state: 'accepted', lapse_due_at: { gte: lapseDueAt(from), lt: now.toISOString() } };
  for (let after: Scalar[] | undefined; ;) {
    const page: ProductDoc[] = await view.find<ProductDoc>(PRODUCTS, {
      where,
      orderBy: [{ field: 'lapse_due_at' }],
      limit: PAGE,
      ...(after ? { after } : {}),
    });
    for (const doc of page) {
      const id = countId(countKeyOf(doc));
      due.set(id, (due.get(id) ?? 0) + 1);
    }
    const last = page[page.length - 1];
    if (page.length < PAGE || !last) return due;
    after = [last.lapse_due_at ?? null, last._id];
  }
}

/**
 * The catalog insights from the count rows the products projector keeps (read-models/products.ts): a few dozen rows
 * a partner (one per store, base state, and for the accepted ones page host, availability and hour of last write),
 * not one index entry per SKU. The 48 h rule is applied by the clock now: an hour wholly at or after the cutoff
 * (now − 48 h) is fresh, one wholly before it or `lapsed` (a lapse is recorded only after its instant) is stale. In
 * the one hour the cutoff falls in, a product written before the cutoff is stale: its lapse is due, and either
 * recorded (the product is in the `lapsed` row) or still to be recorded, which the freshness reactor's index lists
 * (`dueByRow`: at most the products of that hour whose lapse the reactor has not recorded yet, usually none). Null
 * when the counts are not kept (products of an older build, before a rebuild).
 */
async function countedInsights(
  deps: QueryDeps,
  tenant: Tenant,
  storeId: string | undefined,
  now: Date,
): Promise<CatalogInsights | null> {
  return consistently(
    deps.reads,
    async (view) => {
      if ((await view.get(PRODUCT_COUNTS, COUNTS_KEPT)) === null) return null;
      const where: Where = { partner_id: tenant.partnerId, env: tenant.env };
      if (storeId !== undefined) where.store_id = storeId;
      const rows = await view.find<ProductCountDoc>(PRODUCT_COUNTS, { where });
      const cutoff = staleCutoff(now);
      const split = hourOf(cutoff);
      let due: Map<string, number> | null = null;
      const states: Record<ProductState, number> = { pending: 0, accepted: 0, rejected: 0, stale: 0, removed: 0 };
      const reasons = new Map<string, number>();
      const facts = new Map<string, ProductStoreDoc | null>();
      let searchable = 0;
      for (const row of rows) {
        if (row.base_state !== 'accepted') {
          states[row.base_state] += row.n;
          if (row.reason_codes !== null)
            for (const code of codesOfKey(row.reason_codes)) reasons.set(code, (reasons.get(code) ?? 0) + row.n);
          continue;
        }
        let fresh: number;
        if (row.hour === null || row.hour === LAPSED || row.hour < split) fresh = 0;
        else if (row.hour > split || cutoff === split) fresh = row.n;
        else fresh = row.n - ((due ??= await dueByRow(view, split, now)).get(row._id) ?? 0);
        states.accepted += fresh;
        states.stale += row.n - fresh;
        if (fresh === 0 || row.available !== true || row.page_host === null) continue;
        // Only an `accepted`, fresh, available offer can pass every check; the store's facts are read now, as the
        // per-product read does.
        if (!facts.has(row.store_id)) facts.set(row.store_id, await storeFactsIn(view, tenant, row.store_id));
        const store = facts.get(row.store_id);
        if (store?.status === 'active' && pageDomainApproved(store, row.page_host)) searchable += fresh;
      }
      return { environment: tenant.env, store_id: storeId ?? null, states, searchable, reasons: reasonsList(reasons) };
    },
    'products',
  );
}

export async function catalogInsights(deps: QueryDeps, tenant: Tenant, storeId?: string): Promise<CatalogInsights> {
  const now = deps.clock.now();
  const counted = await countedInsights(deps, tenant, storeId, now);
  if (counted !== null) return counted;
  const states = {} as Record<ProductState, number>;
  for (const state of STATES)
    states[state] = await deps.reads.count(PRODUCTS, productsWhere(tenant, now, state, storeId));
  // Only an `accepted` offer can pass every check.
  const searchable = await searchableCount(deps, tenant, productsWhere(tenant, now, 'accepted', storeId), now);
  // Each product counts once per distinct code of its reasons: counted by its set of codes, documents projected
  // before that set was kept read one by one.
  const reasons = new Map<string, number>();
  const add = (codes: Iterable<string>, count: number) => {
    for (const code of codes) reasons.set(code, (reasons.get(code) ?? 0) + count);
  };
  for (const state of ['rejected', 'pending'] as const) {
    const where = productsWhere(tenant, now, state, storeId);
    for (const { key, count } of await countsBy(deps.reads, where, 'reason_codes'))
      if (typeof key === 'string') add(codesOfKey(key), count);
    const older: Where = { ...where, reason_codes: null };
    if ((await deps.reads.count(PRODUCTS, older)) > 0)
      for await (const doc of productsOf(deps.reads, older)) add(new Set(doc.reasons.map((r) => r.code)), 1);
  }
  return {
    environment: tenant.env,
    store_id: storeId ?? null,
    states,
    searchable,
    reasons: reasonsList(reasons),
  };
}

type DayFigures = { clicks: number; orders: number; net_cents: BigCents; known_expected_commission_cents: BigCents };
export type DailyActivity = { date: string } & DayFigures;
export type DailyInsights = {
  since: string;
  until: string;
  store_id: string | null;
  days: DailyActivity[];
  totals: DayFigures;
};

const dayFigures = (f: ReportFigures): DayFigures => ({
  clicks: f.clicks,
  orders: f.orders,
  net_cents: toBigCents(f.net),
  known_expected_commission_cents: toBigCents(f.known),
});

/** Each UTC date the window touches, oldest first, with the part of the window inside it. */
export function windowDays(window: Window): { date: string; part: Window }[] {
  const since = Date.parse(window.since);
  const until = Date.parse(window.until);
  const out: { date: string; part: Window }[] = [];
  for (let day = Math.floor(since / DAY_MS) * DAY_MS; day < until; day += DAY_MS) {
    const part = {
      since: new Date(Math.max(day, since)).toISOString(),
      until: new Date(Math.min(day + DAY_MS, until)).toISOString(),
    };
    out.push({ date: part.since.slice(0, 10), part });
  }
  return out;
}

/** The commission report's figures of each day of the window, in one consistent read. */
export async function dailyInsights(
  deps: QueryDeps,
  tenant: Tenant,
  window: Window,
  storeId?: string,
): Promise<DailyInsights> {
  const figures = await consistently(deps.reads, async (view) => {
    const out: { date: string; figures: ReportFigures }[] = [];
    for (const { date, part } of windowDays(window)) {
      let sum = zeroFigures();
      for (const f of (await figuresByStore(view, tenant, part, storeId)).values()) sum = combine(sum, f);
      out.push({ date, figures: sum });
    }
    return out;
  });
  const totals = figures.reduce((acc, d) => combine(acc, d.figures), zeroFigures());
  return {
    since: window.since,
    until: window.until,
    store_id: storeId ?? null,
    days: figures.map((d) => ({ date: d.date, ...dayFigures(d.figures) })),
    totals: dayFigures(totals),
  };
}

export const insightsReadRoutes: readonly ReadRoute[] = [
  {
    method: 'GET',
    path: '/products/:sku/visibility',
    scope: 'catalog',
    query: NO_QUERY,
    handle: async (ctx, _q, deps) => {
      const c = callerOf(ctx);
      const sku = ctx.state.params.sku;
      const found = await productVisibility(deps, c, sku);
      if (!found) throw await notFoundHere(deps, c, PRODUCTS, (t) => productDocId(t, sku), 'product');
      return found;
    },
  },
  {
    method: 'GET',
    path: '/insights/catalog',
    scope: 'catalog',
    query: CatalogInsightsQuery,
    handle: async (ctx, query, deps) => catalogInsights(deps, callerOf(ctx), textOf(query.store_id)),
  },
  {
    method: 'GET',
    path: '/insights/daily',
    scope: 'reports',
    query: DailyInsightsQuery,
    handle: async (ctx, query, deps) => {
      const window = resolveWindow(query, deps.clock.now());
      ctx.type = JSON_TYPE;
      return stringifyBigCents(await dailyInsights(deps, callerOf(ctx), window, textOf(query.store_id)));
    },
  },
];
