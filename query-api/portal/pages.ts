/**
 * The pages of a signed-in portal session: the same reads as `/v1` (insights.ts, catalog.ts) with the session's
 * tenant, drawn by shared-schema/html/portal.ts. A SKU or store the tenant does not have answers 404; a page whose
 * scope the key lacks answers 403.
 */
import { Readable } from 'node:stream';
import type { Scope } from '../../shared-schema/events/partner.js';
import type { ProductEvent } from '../../shared-schema/events/product.js';
import type { EventStore, RecordedEvent } from '../../shared-schema/ports/event-store.js';
import type { Where } from '../../shared-schema/ports/read-store.js';
import { resolveWindow } from '../../shared-schema/http/window.js';
import { streams, type Tenant } from '../../shared-schema/domain/streams.js';
import { withClock, type ProductState } from '../../shared-schema/domain/product-status.js';
import { PRODUCTS, productDocId, type ProductDoc } from '../../shared-schema/read-models/products.js';
import { STORES, storeDocId, type StoreDoc } from '../../shared-schema/read-models/stores.js';
import { CLICKS } from '../../shared-schema/read-models/clicks.js';
import { CHANNELS, type ChannelDoc } from '../../shared-schema/read-models/channels.js';
import type { Window } from '../../shared-schema/http/window.js';
import { offerProduct, type OfferDoc, type OfferStoreDoc } from '../../shared-schema/shopper/offer-facts.js';
import { offerView, searchOfferOf } from '../../shared-schema/shopper/search-view.js';
import {
  STATE_LABELS,
  catalogPage,
  closingsPage,
  messagePage,
  statementPage,
  overviewPage,
  productPage,
  storePage,
  storesPage,
  type ChannelClicks,
  type HistoryLine,
  type PortalLinks,
  type ProductRow,
  type StoreRow,
} from '../../shared-schema/html/portal.js';
import type { QueryDeps } from '../app.js';
import { productsWhere } from '../routes/catalog.js';
import { catalogInsights, dailyInsights, productVisibility } from '../routes/insights.js';
import { closingsFrom, readStatement } from '../routes/ledger.js';
import { answerBalance, answerMovement, balanceBefore, closingCsv, isClosed, periodOf, periodPlus } from '../ledger.js';
import type { PortalSession } from './routes.js';

/** A page, or a download (`type` and `filename`). */
export type PortalPage = { status: number; body: string | Readable; type?: string; filename?: string };

/** Products and stores per page. */
const PAGE = 50;
/** Movements the statement page shows; closings the closings page lists. */
const MOVEMENTS = 200;
const CLOSINGS = 24;
const PERIOD = /^[0-9]{4}-(0[1-9]|1[0-2])$/;
/** Events of a product's history shown (the most recent). */
const HISTORY = 50;

const STATES: readonly ProductState[] = ['pending', 'accepted', 'rejected', 'stale', 'removed'];
const isState = (v: unknown): v is ProductState => typeof v === 'string' && (STATES as string[]).includes(v);
const one = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

function storeRow(doc: StoreDoc): StoreRow {
  return {
    store_id: doc.store_id,
    name: doc.input.name,
    status: doc.status,
    domains: doc.input.domains,
    domains_approved: doc.domains_approved,
  };
}

/**
 * The last `n` events of a stream and how many it holds, without reading a long stream whole (a price PATCH every
 * few minutes for months): its length is found by doubling, then halving, reads of one event.
 */
export async function lastEvents(
  events: Pick<EventStore, 'readStream'>,
  stream: string,
  n: number,
): Promise<{ events: RecordedEvent[]; total: number }> {
  const exists = async (revision: number) =>
    (await events.readStream(stream, { fromRevision: revision, maxCount: 1 })).length > 0;
  if (!(await exists(0))) return { events: [], total: 0 };
  let low = 0; // exists
  let high = 1;
  while (await exists(high)) [low, high] = [high, high * 2];
  while (high - low > 1) {
    const mid = Math.floor((low + high) / 2);
    if (await exists(mid)) low = mid;
    else high = mid;
  }
  const total = low + 1;
  const from = Math.max(0, total - n);
  return { events: (await events.readStream(stream, { fromRevision: from, maxCount: n })).reverse(), total };
}

/** One event of a product's stream as the history says it (pt-BR). */
function historyLine(e: RecordedEvent): HistoryLine {
  const event = { type: e.type, data: e.data } as ProductEvent;
  const at = e.metadata.recorded_at;
  switch (event.type) {
    case 'ProductUpserted':
      return {
        at,
        what: `Produto enviado (PUT): ${event.data.product.title}, preço ${(event.data.product.price_cents / 100).toFixed(2).replace('.', ',')}, ${event.data.product.available ? 'disponível' : 'indisponível'}.`,
      };
    case 'ProductPatched':
      return { at, what: `Produto atualizado (PATCH): ${Object.keys(event.data.patch).join(', ')}.` };
    case 'ProductRemoved':
      return { at, what: 'Produto removido (DELETE).' };
    case 'CoverChecked':
      return event.data.ok
        ? { at, what: 'Imagem de capa verificada e aprovada.' }
        : { at, what: `Imagem de capa recusada: ${event.data.reasons.map((r) => r.code).join(', ')}.` };
    default:
      return { at, what: e.type };
  }
}

/**
 * The tenant's clicks of the window per channel, the service's own pages (no channel) first, then the channels by
 * clicks and name: one grouped count of the window on the clicks index, then each counted channel's name.
 */
export async function clicksByChannel(deps: QueryDeps, tenant: Tenant, window: Window): Promise<ChannelClicks[]> {
  const groups = await deps.reads.sum(CLICKS, {
    where: {
      partner_id: tenant.partnerId,
      env: tenant.env,
      occurred_at: { gte: window.since, lt: window.until },
    },
    groupBy: 'channel_id',
    fields: [],
  });
  let own = 0;
  const channels: { channel: string; clicks: number }[] = [];
  for (const { key, count } of groups) {
    if (typeof key !== 'string') own += count;
    else channels.push({ channel: (await deps.reads.get<ChannelDoc>(CHANNELS, key))?.name ?? key, clicks: count });
  }
  channels.sort((a, b) => b.clicks - a.clicks || a.channel.localeCompare(b.channel, 'pt-BR'));
  return [{ channel: null, clicks: own }, ...channels];
}

export function portalPages(deps: QueryDeps, links: PortalLinks) {
  const notFound = (s: PortalSession): PortalPage => ({
    status: 404,
    body: messagePage(links, s.who, 'Página não encontrada', [
      'Não há nada neste endereço para a sua chave (parceiro e ambiente).',
    ]),
  });
  const forbidden = (s: PortalSession, scope: Scope): PortalPage => ({
    status: 403,
    body: messagePage(links, s.who, 'Sem permissão', [`Sua chave não tem o escopo ${scope}, que esta página usa.`]),
  });

  async function overview(s: PortalSession): Promise<PortalPage> {
    const catalog = s.has('catalog') ? await catalogInsights(deps, s.tenant) : null;
    const now = deps.clock.now();
    const window = resolveWindow({}, now);
    const daily = s.has('reports')
      ? { ...(await dailyInsights(deps, s.tenant, window)), channels: await clicksByChannel(deps, s.tenant, window) }
      : null;
    const balance = s.has('reports')
      ? answerBalance(await balanceBefore(deps.reads, { tenant: s.tenant }, now.toISOString()))
      : null;
    return { status: 200, body: overviewPage(links, s.who, catalog, daily, balance) };
  }

  /** The products of a state, a reason or a store, by SKU, PAGE at a time after `depois`. */
  async function productList(
    tenant: Tenant,
    query: Record<string, unknown>,
  ): Promise<{ heading: string; rows: ProductRow[]; next: string | null } | null> {
    const state = isState(query.estado) ? query.estado : undefined;
    const reason = one(query.motivo);
    const store = one(query.loja);
    if (!state && !reason && !store) return null;
    const now = deps.clock.now();
    const after = one(query.depois);
    const rows: ProductRow[] = [];
    const filters: Where[] = reason
      ? [productsWhere(tenant, now, 'pending', store), productsWhere(tenant, now, 'rejected', store)]
      : [productsWhere(tenant, now, state, store)];
    // A reason is on pending and rejected products: both lists in SKU order, merged.
    const found: ProductDoc[] = [];
    for (const where of filters) {
      const got: ProductDoc[] = [];
      for (let from = after; ;) {
        const page = await deps.reads.find<ProductDoc>(PRODUCTS, {
          where,
          orderBy: [{ field: 'sku' }],
          limit: PAGE + 1,
          ...(from !== undefined ? { after: [from, productDocId(tenant, from)] } : {}),
        });
        got.push(...(reason ? page.filter((d) => d.reasons.some((r) => r.code === reason)) : page));
        if (page.length <= PAGE || got.length > PAGE) break;
        from = page[page.length - 1].sku;
      }
      found.push(...got.slice(0, PAGE + 1));
    }
    found.sort((a, b) => (a.sku < b.sku ? -1 : a.sku > b.sku ? 1 : 0));
    for (const d of found.slice(0, PAGE))
      rows.push({
        sku: d.sku,
        store_id: d.store_id,
        state: withClock(d.base_state, d.last_write_at, now),
        reasons: d.reasons,
      });
    const params = new URLSearchParams();
    if (state) params.set('estado', state);
    if (reason) params.set('motivo', reason);
    if (store) params.set('loja', store);
    const last = rows[rows.length - 1];
    if (found.length > PAGE && last) params.set('depois', last.sku);
    const heading = [
      state ? STATE_LABELS[state] : reason ? `Produtos com o motivo ${reason}` : 'Produtos',
      store ? `da loja ${store}` : '',
    ]
      .filter(Boolean)
      .join(' ');
    return { heading, rows, next: found.length > PAGE ? `${links.portal}/catalogo?${params}` : null };
  }

  async function catalog(s: PortalSession, query: Record<string, unknown>): Promise<PortalPage> {
    if (!s.has('catalog')) return forbidden(s, 'catalog');
    const sku = one(query.sku)?.trim();
    if (sku) {
      const doc = await deps.reads.get<ProductDoc>(PRODUCTS, productDocId(s.tenant, sku));
      if (doc) return product(s, sku);
      return {
        status: 404,
        body: messagePage(links, s.who, 'Produto não encontrado', [
          `Nenhum produto com o SKU “${sku}” neste ambiente.`,
        ]),
      };
    }
    const health = await catalogInsights(deps, s.tenant);
    return { status: 200, body: catalogPage(links, s.who, health, await productList(s.tenant, query)) };
  }

  async function product(s: PortalSession, sku: string): Promise<PortalPage> {
    if (!s.has('catalog')) return forbidden(s, 'catalog');
    const doc = await deps.reads.get<ProductDoc>(PRODUCTS, productDocId(s.tenant, sku));
    const visibility = doc ? await productVisibility(deps, s.tenant, sku) : null;
    if (!doc || !visibility) return notFound(s);
    const storeDoc = await deps.reads.get<StoreDoc>(STORES, storeDocId(s.tenant, doc.store_id));
    // The preview: the shopper's offer card from what the partner sent, as the offers model would hold it.
    const offer: OfferDoc = {
      _id: doc._id,
      partner_id: doc.partner_id,
      sku: doc.sku,
      store_id: doc.store_id,
      store_key: '',
      gtin: doc.product.gtin ?? null,
      product: offerProduct(doc.product),
      removed: doc.removed,
      cover: doc.cover,
      last_write_at: doc.last_write_at,
      text_title: '',
      text_other: '',
      position: doc.position,
    };
    const store: OfferStoreDoc = {
      _id: '',
      store_id: doc.store_id,
      name: storeDoc?.input.name ?? doc.store_id,
      status: storeDoc?.status ?? 'pending_review',
      domains: storeDoc?.input.domains ?? [],
      domains_approved: storeDoc?.domains_approved ?? [],
      position: 0,
    };
    const preview = offerView(searchOfferOf(offer, store), deps.publicBaseUrl);
    const history = deps.events
      ? await lastEvents(deps.events, streams.product(s.tenant, sku), HISTORY)
      : { events: [], total: 0 };
    const state = withClock(doc.base_state, doc.last_write_at, deps.clock.now());
    return {
      status: 200,
      body: productPage(
        links,
        s.who,
        { sku: doc.sku, store_id: doc.store_id, state, reasons: doc.reasons },
        visibility,
        preview,
        { lines: history.events.map(historyLine), total: history.total },
      ),
    };
  }

  async function stores(s: PortalSession, query: Record<string, unknown>): Promise<PortalPage> {
    if (!s.has('catalog')) return forbidden(s, 'catalog');
    const after = one(query.depois);
    const docs = await deps.reads.find<StoreDoc>(STORES, {
      where: { partner_id: s.tenant.partnerId, env: s.tenant.env },
      orderBy: [{ field: 'store_id' }],
      limit: PAGE + 1,
      ...(after !== undefined ? { after: [after, storeDocId(s.tenant, after)] } : {}),
    });
    const page = docs.slice(0, PAGE);
    const next =
      docs.length > PAGE ? `${links.portal}/lojas?depois=${encodeURIComponent(page[page.length - 1].store_id)}` : null;
    return { status: 200, body: storesPage(links, s.who, page.map(storeRow), next) };
  }

  async function store(s: PortalSession, storeId: string): Promise<PortalPage> {
    if (!s.has('catalog')) return forbidden(s, 'catalog');
    const doc = await deps.reads.get<StoreDoc>(STORES, storeDocId(s.tenant, storeId));
    return doc ? { status: 200, body: storePage(links, s.who, storeRow(doc)) } : notFound(s);
  }

  async function statement(s: PortalSession): Promise<PortalPage> {
    if (!s.has('reports')) return forbidden(s, 'reports');
    const window = resolveWindow({}, deps.clock.now());
    const { rows, opening, closing } = await readStatement(deps, { tenant: s.tenant }, window, MOVEMENTS + 1);
    const movements = rows.slice(0, MOVEMENTS).map((m) => answerMovement({ tenant: s.tenant }, m));
    return {
      status: 200,
      body: statementPage(
        links,
        s.who,
        window,
        answerBalance(opening),
        answerBalance(closing),
        movements,
        rows.length > MOVEMENTS,
      ),
    };
  }

  async function closings(s: PortalSession): Promise<PortalPage> {
    if (!s.has('reports')) return forbidden(s, 'reports');
    const { data } = await closingsFrom(deps, s.tenant, periodPlus(periodOf(deps.clock.now()), -1), CLOSINGS);
    return { status: 200, body: closingsPage(links, s.who, data) };
  }

  /** A closed month's movements as the CSV of `GET /v1/closings/{period}/movements.csv`. */
  function closingCsvOf(s: PortalSession, period: string): PortalPage {
    if (!s.has('reports')) return forbidden(s, 'reports');
    if (!PERIOD.test(period) || !isClosed(period, deps.clock.now())) return notFound(s);
    return {
      status: 200,
      body: Readable.from(closingCsv(deps.reads, s.tenant, period)),
      type: 'text/csv; charset=utf-8',
      filename: `movements-${s.tenant.env}-${period}.csv`,
    };
  }

  /** `path` is below `/portal` (`/` for the overview). */
  return async (s: PortalSession, path: string, query: Record<string, unknown>): Promise<PortalPage> => {
    if (path === '/' || path === '') return overview(s);
    if (path === '/catalogo') return catalog(s, query);
    if (path === '/lojas') return stores(s, query);
    if (path === '/extrato') return statement(s);
    if (path === '/fechamentos') return closings(s);
    const csv = /^\/fechamentos\/([^/]+)\/movimentos\.csv$/.exec(path);
    if (csv) return closingCsvOf(s, csv[1]);
    const m = /^\/(produtos|lojas)\/([^/]+)$/.exec(path);
    if (m) {
      let id: string;
      try {
        id = decodeURIComponent(m[2]);
      } catch {
        return notFound(s);
      }
      return m[1] === 'produtos' ? product(s, id) : store(s, id);
    }
    return notFound(s);
  };
}
