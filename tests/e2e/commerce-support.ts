/** Fixtures of the commercial-cycle HTTP tests: stores, published products, clicks and conversion bodies. */
import { expect } from 'chai';
import { streams } from '../../shared-schema/domain/streams.js';
import { productBody, storeBody, type Partner, type TestService } from '../support/service.js';

export const DAY = 86_400_000;
export const HOUR = 3_600_000;
export const iso = (ms: number): string => new Date(ms).toISOString();
export const plus = (at: string, ms: number): string => iso(Date.parse(at) + ms);

export type Env = 'live' | 'test';

/** Registers a store (any CNPJ, shop.test domains) and checks the answer. */
export async function registerStore(
  p: Partner,
  storeId: string,
  overrides: Record<string, unknown> = {},
): Promise<void> {
  const r = await p.api.put(`/stores/${storeId}`, storeBody(overrides));
  expect(r.status, JSON.stringify(r.body)).to.equal(200);
}

/** Sends a product (updated_at now) and checks the answer. */
export async function putProduct(
  t: TestService,
  p: Partner,
  storeId: string,
  sku: string,
  overrides: Record<string, unknown> = {},
): Promise<void> {
  const r = await p.api.put(
    `/products/${sku}`,
    productBody(storeId, { updated_at: t.clock.now().toISOString(), ...overrides }),
  );
  expect(r.status, JSON.stringify(r.body)).to.equal(200);
}

/**
 * Makes a product `accepted` without the cover reactor (built elsewhere): a good `CoverChecked` straight into the
 * product stream, then the operator approves the store (the admin call waits for the projections).
 */
export async function publish(t: TestService, p: Partner, env: Env, storeId: string, sku: string): Promise<void> {
  const tenant = { partnerId: p.partnerId, env };
  const product = await t.service.events.readStream(streams.product(tenant, sku));
  const last = product[product.length - 1].data as { product?: { image_urls: string[] } };
  const url = last.product!.image_urls[0];
  const now = t.clock.now().toISOString();
  const appended = await t.service.events.appendToStream(streams.product(tenant, sku), [
    {
      type: 'CoverChecked',
      data: { sku, url, ok: true, reasons: [], checked_at: now },
      metadata: { recorded_at: now, actor: 'test' },
    },
  ]);
  expect((await t.approveStore(p, storeId, env)).status).to.equal(200);
  expect(await t.service.runner.waitFor(appended.position, 30_000)).to.equal(true);
}

/**
 * A store's address as `svc_url` shows it: `{partner_id lower-cased}/{store}`. The store part is used as given, so
 * a test can also send an address in another case.
 */
export const addressOf = (p: Partner, store: string): string => `${p.partnerId.toLowerCase()}/${store}`;

/** `{address}/{sku}` as a path, each segment encoded. */
const offerPath = (address: string, sku: string): string =>
  [...address.split('/'), sku].map(encodeURIComponent).join('/');

/** The click redirector's address of an offer (`/r/{address}/{sku}`, its `buy_url`) on the test gateway. */
export const redirectUrl = (t: TestService, address: string, sku: string, prefix = ''): string =>
  `${t.api.replace(/\/v1$/, '')}${prefix}/r/${offerPath(address, sku)}`;

/** The offer page's address (`/p/{address}/{sku}`, the `svc_url` of live products) on the test gateway. */
export const offerPageUrl = (t: TestService, address: string, sku: string, prefix = ''): string =>
  `${t.api.replace(/\/v1$/, '')}${prefix}/p/${offerPath(address, sku)}`;

/**
 * The redirector's address of a live product as the service publishes it: the `buy_url` of the offer page at the
 * product's `svc_url`, on the test gateway (whatever shape the store address takes in those URLs).
 */
export async function buyUrlOf(t: TestService, p: Partner, sku: string): Promise<string> {
  const root = t.api.replace(/\/v1$/, '');
  const product = await p.api.get<{ svc_url: string }>(`/products/${encodeURIComponent(sku)}`);
  expect(product.status).to.equal(200);
  const page = await fetch(root + new URL(product.body.svc_url).pathname, { headers: { Accept: 'application/json' } });
  expect(page.status).to.equal(200);
  const buy = new URL(((await page.json()) as { buy_url: string }).buy_url);
  return root + buy.pathname + buy.search;
}

/** Follows nothing: the redirector's own answer. */
export const visit = (url: string, method = 'GET') => fetch(url, { method, redirect: 'manual' });

/** A click through the redirector (live) on a partner's offer, and its id. */
export async function redirectClick(t: TestService, p: Partner, storeId: string, sku: string): Promise<string> {
  const r = await visit(redirectUrl(t, addressOf(p, storeId.toLowerCase()), sku));
  expect(r.status).to.equal(302);
  const id = new URL(r.headers.get('location')!).searchParams.get('svc_click');
  expect(id).to.match(/^ic_[A-Za-z0-9_-]{22}$/);
  return id!;
}

/** A sandbox click (test key) and its answer. */
export async function sandboxClick(
  p: Partner,
  storeId: string,
  sku: string,
): Promise<{ click_id: string; occurred_at: string; price_cents: number }> {
  const r = await p.api.post('/sandbox/clicks', { store_id: storeId, sku });
  expect(r.status, JSON.stringify(r.body)).to.equal(200);
  return r.body;
}

export interface Item {
  sku: string;
  quantity: number;
  unit_price_cents: number;
  refunded_cents: number;
}

export function paidBody(o: {
  event_id: string;
  order_id: string;
  store_id: string;
  click_id: string;
  paid_at: string;
  items: Item[];
}) {
  return { ...o, status: 'paid', currency: 'BRL', occurred_at: o.paid_at };
}

/** A refunded / cancelled event: the paid body with new id, status, time and cumulative refunds per SKU. */
export function laterBody(
  paid: ReturnType<typeof paidBody>,
  o: { event_id: string; status: 'refunded' | 'cancelled'; occurred_at: string; refunds?: Record<string, number> },
) {
  const items = paid.items.map((i) => ({
    ...i,
    refunded_cents: o.status === 'cancelled' ? i.quantity * i.unit_price_cents : (o.refunds?.[i.sku] ?? 0),
  }));
  return { ...paid, event_id: o.event_id, status: o.status, occurred_at: o.occurred_at, items };
}

/** `field:code` of every error of a problem, sorted. */
export const codes = (body: { errors?: { field: string; code: string }[] }): string[] =>
  (body.errors ?? []).map((e) => `${e.field}:${e.code}`).sort();
