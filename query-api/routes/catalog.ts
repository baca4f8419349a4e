/** GET /me, /stores, /stores/{id}, /products, /products/{sku}. */
import { callerOf, type DoorContext } from '../../shared-schema/http/context.js';
import {
  decodeCursor,
  encodeCursor,
  DEFAULT_LIMIT,
  type CursorScope,
  type CursorValue,
} from '../../shared-schema/http/pagination.js';
import type { Query, Scalar, Where } from '../../shared-schema/ports/read-store.js';
import { ListProductsQuery, ListStoresQuery } from '../../shared-schema/contract/schemas/catalog.js';
import {
  productStatusView,
  withClock,
  staleCutoff,
  type ProductState,
} from '../../shared-schema/domain/product-status.js';
import {
  PRODUCTS,
  STORE_FACTS,
  productDocId,
  storeFactsId,
  type ProductDoc,
  type ProductStoreDoc,
} from '../../shared-schema/read-models/products.js';
import { STORES, storeDocId, type StoreDoc } from '../../shared-schema/read-models/stores.js';
import type { Tenant } from '../../shared-schema/domain/streams.js';
import type { QueryDeps, ReadRoute } from '../app.js';
import { NO_QUERY } from '../no-query.js';
import { notFoundHere } from '../not-found.js';

/** A validated query parameter: a string, or undefined when absent. */
export const textOf = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

export function storeView(doc: StoreDoc) {
  return { store_id: doc.store_id, ...doc.input, status: doc.status, domains_approved: doc.domains_approved };
}

/** The cursor binding of a list: its name, the filters of the query and the type of each sort value (then `_id`). */
export interface ListCursor {
  list: string;
  filters: Readonly<Record<string, string | undefined>>;
  shape: readonly CursorValue[];
}

/** One page of a keyset-paginated list: fetch limit+1 rows to know whether there is a next page. */
export async function listPage<T extends { _id: string }>(
  ctx: DoorContext,
  deps: QueryDeps,
  cursor: ListCursor,
  collection: string,
  where: Where,
  orderBy: Query['orderBy'] & object,
  sortValues: (row: T) => Scalar[],
  query: Record<string, unknown>,
): Promise<{ rows: T[]; next_cursor: string | null }> {
  const scope: CursorScope = { tenant: callerOf(ctx), list: cursor.list, filters: cursor.filters };
  const limit = (query.limit as number | undefined) ?? DEFAULT_LIMIT;
  const q: Query = { where, orderBy, limit: limit + 1 };
  if (typeof query.cursor === 'string') q.after = decodeCursor(deps.cursorSecret, scope, query.cursor, cursor.shape);
  const rows = await deps.reads.find<T>(collection, q);
  const more = rows.length > limit;
  const page = more ? rows.slice(0, limit) : rows;
  const last = page[page.length - 1];
  return {
    rows: page,
    next_cursor: more && last ? encodeCursor(deps.cursorSecret, scope, [...sortValues(last), last._id]) : null,
  };
}

/**
 * The products of a state as `GET /products?state=` lists them (and the portal and `GET /insights/catalog` count
 * them): `stale` is `accepted` with no applied write for more than 48 h at `now`, so both read the base state and the
 * time of the last write.
 */
export function productsWhere(tenant: Tenant, now: Date, state?: ProductState, storeId?: string): Where {
  const where: Where = { partner_id: tenant.partnerId, env: tenant.env };
  if (storeId !== undefined) where.store_id = storeId;
  const cutoff = staleCutoff(now);
  switch (state) {
    case undefined:
      break;
    case 'accepted':
      where.base_state = 'accepted';
      where.last_write_at = { gte: cutoff };
      break;
    case 'stale':
      where.base_state = 'accepted';
      where.last_write_at = { lt: cutoff };
      break;
    default:
      where.base_state = state;
  }
  return where;
}

export async function productViews(deps: QueryDeps, tenant: Tenant, docs: ProductDoc[]) {
  const now = deps.clock.now();
  const stores = new Map<string, ProductStoreDoc | null>();
  const out = [];
  for (const doc of docs) {
    if (!stores.has(doc.store_id))
      stores.set(doc.store_id, await deps.reads.get<ProductStoreDoc>(STORE_FACTS, storeFactsId(tenant, doc.store_id)));
    out.push(
      productStatusView({
        sku: doc.sku,
        product: doc.product,
        state: withClock(doc.base_state, doc.last_write_at, now),
        reasons: doc.reasons,
        received_at: doc.received_at,
        published_at: doc.published_at,
        store_default: stores.get(doc.store_id)?.default_commission,
        public_base: deps.publicBaseUrl,
        tenant,
      }),
    );
  }
  return out;
}

export const catalogReadRoutes: readonly ReadRoute[] = [
  {
    method: 'GET',
    path: '/me',
    scope: null,
    query: NO_QUERY,
    handle: async (ctx) => {
      const c = callerOf(ctx);
      return {
        partner_id: c.partnerId,
        name: c.partnerName,
        partner_type: c.partnerType,
        environment: c.env,
        scopes: c.scopes,
      };
    },
  },
  {
    method: 'GET',
    path: '/stores',
    scope: 'catalog',
    query: ListStoresQuery,
    handle: async (ctx, query, deps) => {
      const c = callerOf(ctx);
      const { rows, next_cursor } = await listPage<StoreDoc>(
        ctx,
        deps,
        { list: 'stores', filters: {}, shape: ['string', 'string'] },
        STORES,
        { partner_id: c.partnerId, env: c.env },
        [{ field: 'store_id' }],
        (r) => [r.store_id],
        query,
      );
      return { data: rows.map(storeView), next_cursor };
    },
  },
  {
    method: 'GET',
    path: '/stores/:store_id',
    scope: 'catalog',
    query: NO_QUERY,
    handle: async (ctx, _q, deps) => {
      const storeId = ctx.state.params.store_id;
      const doc = await deps.reads.get<StoreDoc>(STORES, storeDocId(callerOf(ctx), storeId));
      if (!doc) throw await notFoundHere(deps, callerOf(ctx), STORES, (t) => storeDocId(t, storeId), 'store');
      return storeView(doc);
    },
  },
  {
    method: 'GET',
    path: '/products',
    scope: 'catalog',
    query: ListProductsQuery,
    handle: async (ctx, query, deps) => {
      const c = callerOf(ctx);
      const where = productsWhere(
        c,
        deps.clock.now(),
        textOf(query.state) as ProductState | undefined,
        textOf(query.store_id),
      );
      const filters = { store_id: textOf(query.store_id), state: textOf(query.state) };
      const cursor: ListCursor = { list: 'products', filters, shape: ['string', 'string'] };
      const { rows, next_cursor } = await listPage<ProductDoc>(
        ctx,
        deps,
        cursor,
        PRODUCTS,
        where,
        [{ field: 'sku' }],
        (r) => [r.sku],
        query,
      );
      return { data: await productViews(deps, c, rows), next_cursor };
    },
  },
  {
    method: 'GET',
    path: '/products/:sku',
    scope: 'catalog',
    query: NO_QUERY,
    handle: async (ctx, _q, deps) => {
      const c = callerOf(ctx);
      const sku = ctx.state.params.sku;
      const doc = await deps.reads.get<ProductDoc>(PRODUCTS, productDocId(c, sku));
      if (!doc) throw await notFoundHere(deps, c, PRODUCTS, (t) => productDocId(t, sku), 'product');
      const [view] = await productViews(deps, c, [doc]);
      return view;
    },
  },
];
