/** Fixtures of the shopper-side HTTP tests: offers made searchable, projections settled, requests from an address. */
import http from 'node:http';
import { expect } from 'chai';
import { streams, type Environment } from '../../shared-schema/domain/streams.js';
import { PRODUCTS, productDocId, type ProductDoc } from '../../shared-schema/read-models/products.js';
import type { Partner, TestService } from '../support/service.js';
import { addressOf, putProduct, registerStore } from './commerce-support.js';

/** The gateway's root (the public pages and search live outside `/v1`). */
export const rootOf = (t: TestService): string => t.api.replace(/\/v1$/, '');

/** Waits until the projections have applied everything written so far (no fixed sleep). */
export async function settle(t: TestService): Promise<void> {
  expect(await t.service.runner.waitFor(await t.service.events.headPosition(), 30_000)).to.equal(true);
}

/** A passing cover check of the product's current cover, appended to its stream (the cover reactor is tested elsewhere). */
export async function coverOk(t: TestService, p: Partner, sku: string): Promise<void> {
  const stream = streams.product({ partnerId: p.partnerId, env: 'live' }, sku);
  const history = await t.service.events.readStream(stream);
  const withProduct = [...history].reverse().find((e) => (e.data as { product?: unknown }).product !== undefined)!;
  const url = (withProduct.data as { product: { image_urls: string[] } }).product.image_urls[0];
  const now = t.clock.now().toISOString();
  await t.service.events.appendToStream(stream, [
    {
      type: 'CoverChecked',
      data: { sku, url, ok: true, reasons: [], checked_at: now },
      metadata: { recorded_at: now, actor: 'test' },
    },
  ]);
}

/** A product sent now and made `accepted` (its store must be approved). */
export async function offer(
  t: TestService,
  p: Partner,
  store: string,
  sku: string,
  fields: Record<string, unknown>,
): Promise<void> {
  await putProduct(t, p, store, sku, fields);
  await coverOk(t, p, sku);
}

export type RawAnswer = { status: number; headers: Headers; text: string };

/**
 * A GET (or `method`, with `body`) sent from a loopback address of its own (the public brakes count per address;
 * 127.0.0.0/8 is all ours). Follows nothing.
 */
export function getFrom(
  url: string,
  from = '127.0.0.1',
  headers: Record<string, string> = {},
  method = 'GET',
  body?: string,
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const req = http.request(
      {
        method,
        host: u.hostname,
        port: u.port,
        path: u.pathname + u.search,
        localAddress: from,
        headers,
        agent: false,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => {
          const h = new Headers();
          for (const [k, v] of Object.entries(res.headers))
            if (typeof v === 'string') h.set(k, v);
            else if (Array.isArray(v)) for (const one of v) h.append(k, one);
          resolve({ status: res.statusCode ?? 0, headers: h, text });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * The shopper tests' world in a service the test started (the e2e-in-topology runner picks the files that call
 * `startTestService` themselves), at `at` on its clock: two hubs (`hub` with Loja-A and Loja-B, `other` with Loja-C
 * and Loja-D), every store approved in live, the projections settled. `nameA` is Loja-A's display name. `address`
 * gives a store's address as `svc_url` shows it (`address('loja-a')`: hub's partner id lower-cased, then `loja-a`).
 */
export async function shopperWorld(
  t: TestService,
  at: number,
  nameA = 'Loja A',
): Promise<{ hub: Partner; other: Partner; address: (store: string) => string }> {
  t.clock.set(new Date(at));
  const hub = await t.partner({ type: 'hub' });
  const other = await t.partner({ type: 'hub', name: 'Outra' });
  const stores = [
    [hub, 'Loja-A', nameA],
    [hub, 'Loja-B', 'Loja B'],
    [other, 'Loja-C', 'Loja C'],
    [other, 'Loja-D', 'Loja D'],
  ] as const;
  for (const [p, s, name] of stores) await registerStore(p, s, { name });
  for (const [p, s] of stores) expect((await t.approveStore(p, s, 'live')).status).to.equal(200);
  await settle(t);
  const address = (store: string): string => {
    const owner = stores.find(([, s]) => s.toLowerCase() === store.toLowerCase());
    if (!owner) throw new Error(`no store ${store} in the shopper world`);
    return addressOf(owner[0], store);
  };
  return { hub, other, address };
}

type VisibilityJson = {
  sku: string;
  store_id: string;
  environment: string;
  searchable: boolean;
  checks: { check: string; ok: boolean; detail: string | null }[];
  fresh_until: string | null;
  svc_url: string | null;
};
type SearchOfferJson = { sku: string; offer_url: string };
type SearchProductJson = { gtin: string | null; offers: SearchOfferJson[]; alternatives: SearchOfferJson[] };

/** Every product of the partner's key, page by page (`GET /v1/products`). */
async function allProducts(p: Partner): Promise<{ sku: string; svc_url?: string }[]> {
  const out: { sku: string; svc_url?: string }[] = [];
  for (let cursor: string | null = null; ;) {
    const r = await p.api.get(`/products?limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    out.push(...(r.body.data as { sku: string; svc_url?: string }[]));
    cursor = r.body.next_cursor as string | null;
    if (cursor === null) return out;
  }
}

/**
 * PORTAL.md: for every product of the partners' keys, `GET /v1/products/{sku}/visibility` says `searchable` exactly
 * when the shopper search finds it (its title searched, every page read). An offer left out of one answer by rule 5
 * is still searchable (SHOPPER.md): then its offer page answers and another offer of its gtin is in that answer.
 * `from` gives each search an address of its own (the public brake counts per address).
 */
export async function expectVisibilityIsSearch(
  t: TestService,
  partners: readonly Partner[],
  from: () => string,
): Promise<number> {
  let checked = 0;
  for (const p of partners) {
    for (const product of await allProducts(p)) {
      const v = await p.api.get(`/products/${encodeURIComponent(product.sku)}/visibility`);
      expect(v.status, JSON.stringify(v.body)).to.equal(200);
      const vis = v.body as VisibilityJson;
      expect(vis.searchable, product.sku).to.equal(vis.checks.every((c) => c.ok));
      expect(vis.checks.find((c) => c.check === 'live')?.ok, product.sku).to.equal(vis.environment === 'live');
      expect(Object.keys(vis)).to.deep.equal([
        'sku',
        'store_id',
        'environment',
        'searchable',
        'checks',
        'fresh_until',
        'svc_url',
      ]);
      expect(vis.checks.map((c) => c.check)).to.deep.equal([
        'live',
        'accepted',
        'fresh',
        'store_active',
        'domain_approved',
        'available',
      ]);
      for (const c of vis.checks)
        if (c.ok) expect(c.detail, `${product.sku} ${c.check}`).to.equal(null);
        else expect(c.detail, `${product.sku} ${c.check}`).to.match(/^[A-ZÀ-Ú].{20,}[.]$/);
      expect(vis.fresh_until !== null, `${product.sku} fresh_until`).to.equal(vis.checks[1].ok);
      expect(vis.svc_url ?? undefined, product.sku).to.equal(product.svc_url);
      // The title as sent (no /v1 answer carries it).
      const doc = await t.service.reads.get<ProductDoc>(
        PRODUCTS,
        productDocId({ partnerId: p.partnerId, env: vis.environment as Environment }, product.sku),
      );
      const words = doc!.product.title.slice(0, 200);
      const found: SearchProductJson[] = [];
      for (let cursor: string | null = null; ;) {
        const r = await getFrom(
          `${rootOf(t)}/api/search?q=${encodeURIComponent(words)}&limit=50${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
          from(),
        );
        expect(r.status, r.text).to.equal(200);
        const page = JSON.parse(r.text) as { results: SearchProductJson[]; next_cursor: string | null };
        found.push(...page.results);
        cursor = page.next_cursor;
        if (cursor === null) break;
      }
      const offers = found.flatMap((x) => [...x.offers, ...x.alternatives]);
      const present = vis.svc_url !== null && offers.some((o) => o.offer_url === vis.svc_url);
      if (vis.searchable && !present) {
        // Rule 5 left it out of this answer: its page still answers, and its product is in the answer.
        const page = `${rootOf(t)}${new URL(vis.svc_url!).pathname}`;
        expect((await getFrom(page, from())).status, `${product.sku}: offer page`).to.equal(200);
        expect(
          found.some((x) => x.gtin !== null && x.gtin === doc!.product.gtin),
          `${product.sku}: searchable yet not in search`,
        ).to.equal(true);
      } else
        expect(present, `${product.sku}: searchable ${vis.searchable}, in search ${present}`).to.equal(vis.searchable);
      checked++;
    }
  }
  return checked;
}

/**
 * PORTAL.md "Catalog health": `GET /v1/insights/catalog` counts what `GET /v1/products?state=` lists, the offers
 * whose Visibility passes (a test key: every check but `live`), and the reasons of the pending and rejected products.
 */
export async function expectCatalogInsights(p: Partner, storeId?: string): Promise<void> {
  const filter = storeId ? `store_id=${encodeURIComponent(storeId)}` : '';
  const r = await p.api.get(`/insights/catalog${filter ? `?${filter}` : ''}`);
  expect(r.status, JSON.stringify(r.body)).to.equal(200);
  const body = r.body as {
    environment: string;
    store_id: string | null;
    states: Record<string, number>;
    searchable: number;
    reasons: { code: string; count: number }[];
  };
  expect(Object.keys(body)).to.deep.equal(['environment', 'store_id', 'states', 'searchable', 'reasons']);
  expect(body.store_id).to.equal(storeId ?? null);
  const reasons = new Map<string, number>();
  let searchable = 0;
  for (const state of ['pending', 'accepted', 'rejected', 'stale', 'removed']) {
    const listed: { sku: string; reasons: { code: string }[] }[] = [];
    for (let cursor: string | null = null; ;) {
      const page = await p.api.get(
        `/products?state=${state}&limit=200${filter ? `&${filter}` : ''}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      );
      listed.push(...(page.body.data as { sku: string; reasons: { code: string }[] }[]));
      cursor = page.body.next_cursor as string | null;
      if (cursor === null) break;
    }
    expect(body.states[state], state).to.equal(listed.length);
    for (const product of listed) {
      const v = (await p.api.get(`/products/${encodeURIComponent(product.sku)}/visibility`)).body as VisibilityJson;
      if (v.checks.every((c) => c.ok || c.check === 'live')) searchable++;
      if (state === 'pending' || state === 'rejected')
        for (const code of new Set(product.reasons.map((x) => x.code))) reasons.set(code, (reasons.get(code) ?? 0) + 1);
    }
  }
  expect(body.searchable).to.equal(searchable);
  const expected = [...reasons]
    .map(([code, count]) => ({ code, count }))
    .sort((a, b) => b.count - a.count || a.code.localeCompare(b.code));
  expect(body.reasons).to.deep.equal(expected);
}
