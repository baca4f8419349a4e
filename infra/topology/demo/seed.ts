/**
 * The demo's data, sent through the same doors a partner and an operator use (the admin API and the partner API,
 * never the database): a partner "Loja Demo" with a test and a live key, its live store approved by the operator,
 * and a few products whose covers the demo's cover server serves. Running it again on the same data reuses the
 * partner and the store, revokes the keys the last run issued and issues new ones, and sends the products again
 * (their covers are on the new run's cover server).
 */
import fs from 'node:fs';

export const DEMO_PARTNER = 'Loja Demo';
export const DEMO_STORE = 'loja-demo';
/** The store's domain: `.test` is reserved (RFC 2606), never a real host, and not a public suffix. */
export const DEMO_DOMAIN = 'loja-demo.test';
/** What the printed search URL asks for: every demo product's title holds it. */
export const DEMO_QUERY = 'camiseta';
/** sku → title, price and the colour of its drawn cover. */
export const DEMO_PRODUCTS: Readonly<Record<string, { title: string; priceCents: number; colour: string }>> = {
  'camiseta-azul': { title: 'Camiseta azul de algodão', priceCents: 4990, colour: '#1e6fd9' },
  'camiseta-verde': { title: 'Camiseta verde de algodão', priceCents: 5490, colour: '#2e9d5b' },
  'camiseta-laranja': { title: 'Camiseta laranja de algodão', priceCents: 5990, colour: '#e8772e' },
};

export interface SeedTarget {
  /** `http://127.0.0.1:8080`: the partner API is under `/v1`, the shopper search at `/api/search`. */
  serviceUrl: string;
  /** `http://127.0.0.1:8081/admin/v1` */
  adminApi: string;
  adminToken: string;
  /** Where the cover of `sku` is served (on DEMO_DOMAIN). */
  coverUrl(sku: string): string;
  /** A file of the data directory keeping the ids of the keys this seed issued, to revoke them on the next run. */
  keysFile: string;
  /** How long the products may take to be searchable (their covers are checked first). */
  waitMs: number;
}

export interface Seeded {
  partnerId: string;
  testKey: string;
  liveKey: string;
  /** The live products' offer pages (`svc_url`, as the partner API answered them), by sku. */
  offers: Record<string, string>;
}

type Json = Record<string, unknown>;

async function call(method: string, url: string, bearer: string, body?: Json): Promise<{ status: number; body: Json }> {
  const res = await fetch(url, {
    method,
    headers: {
      Authorization: `Bearer ${bearer}`,
      ...(body ? { 'Content-Type': 'application/json' } : {}),
    },
    ...(body ? { body: JSON.stringify(body) } : {}),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Json) : {} };
}

/** The answer's body when its status is one of `expected`; else an error naming the request and the answer. */
async function expectStatus(
  method: string,
  url: string,
  bearer: string,
  expected: number[],
  body?: Json,
): Promise<Json> {
  const answer = await call(method, url, bearer, body);
  if (!expected.includes(answer.status))
    throw new Error(`${method} ${url} answered ${answer.status}: ${JSON.stringify(answer.body)}`);
  return answer.body;
}

/** Polls `check` every `intervalMs` until it returns a value; throws `what` after `ms`. */
async function poll<T>(check: () => Promise<T | undefined>, ms: number, intervalMs: number, what: string): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what} (waited ${ms} ms)`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

async function demoPartner(target: SeedTarget): Promise<string> {
  const admin = (method: string, path: string, expected: number[], body?: Json) =>
    expectStatus(method, target.adminApi + path, target.adminToken, expected, body);
  let cursor: string | null = null;
  do {
    const page = (await admin(
      'GET',
      `/partners?limit=500${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      [200],
    )) as { partners: { partner_id: string; name: string }[]; next_cursor: string | null };
    const found = page.partners.find((p) => p.name === DEMO_PARTNER);
    if (found) return found.partner_id;
    cursor = page.next_cursor;
  } while (cursor);
  const created = await admin('POST', '/partners', [201], { name: DEMO_PARTNER, partner_type: 'store' });
  return created.partner_id as string;
}

/** Revokes the keys of the last run, issues a test and a live key, and keeps their ids for the next run. */
async function freshKeys(target: SeedTarget, partnerId: string): Promise<{ test: string; live: string }> {
  let previous: string[] = [];
  try {
    previous = JSON.parse(fs.readFileSync(target.keysFile, 'utf8')) as string[];
  } catch {
    /* the first run */
  }
  for (const keyId of previous)
    await expectStatus('DELETE', `${target.adminApi}/keys/${encodeURIComponent(keyId)}`, target.adminToken, [204, 404]);
  const issue = (environment: string) =>
    expectStatus('POST', `${target.adminApi}/partners/${partnerId}/keys`, target.adminToken, [201], { environment });
  const test = await issue('test');
  const live = await issue('live');
  fs.writeFileSync(target.keysFile, JSON.stringify([test.key_id, live.key_id]), { mode: 0o600 });
  return { test: test.api_key as string, live: live.api_key as string };
}

export async function seedDemo(target: SeedTarget): Promise<Seeded> {
  const partnerId = await demoPartner(target);
  const keys = await freshKeys(target, partnerId);
  const partner = (method: string, path: string, expected: number[], body?: Json) =>
    expectStatus(method, `${target.serviceUrl}/v1${path}`, keys.live, expected, body);

  await partner('PUT', `/stores/${DEMO_STORE}`, [200, 201], {
    name: 'Loja Demo',
    cnpj: '11222333000181',
    website_url: `https://${DEMO_DOMAIN}`,
    domains: [DEMO_DOMAIN],
  });
  await expectStatus(
    'POST',
    `${target.adminApi}/partners/${partnerId}/live/stores/${DEMO_STORE}/approve`,
    target.adminToken,
    [200],
  );

  const sent = new Map<string, string>(); // sku → received_at of this run's write
  const updatedAt = new Date().toISOString();
  for (const [sku, product] of Object.entries(DEMO_PRODUCTS)) {
    const answer = await partner('PUT', `/products/${sku}`, [200, 201], {
      store_id: DEMO_STORE,
      title: product.title,
      product_url: `https://${DEMO_DOMAIN}/p/${sku}`,
      image_urls: [target.coverUrl(sku)],
      price_cents: product.priceCents,
      available: true,
      updated_at: updatedAt,
      commission: { type: 'percentage', rate: 10 },
      shipping: { type: 'fixed', cost_cents: 1500 },
    });
    sent.set(sku, answer.received_at as string);
  }

  // Each product's verdict on this run's write (its cover is checked), then the search that shoppers see.
  const offers: Record<string, string> = {};
  for (const [sku, receivedAt] of sent) {
    offers[sku] = await poll(
      async () => {
        const view = await partner('GET', `/products/${sku}`, [200]);
        if (view.received_at !== receivedAt || view.state === 'pending') return undefined;
        if (view.state !== 'accepted')
          throw new Error(`the demo product ${sku} is ${String(view.state)}: ${JSON.stringify(view.reasons)}`);
        return view.svc_url as string;
      },
      target.waitMs,
      250,
      `the demo product ${sku} was not accepted in time`,
    );
  }
  await poll(
    async () => {
      const res = await fetch(`${target.serviceUrl}/api/search?q=${DEMO_QUERY}&limit=50`, {
        signal: AbortSignal.timeout(30_000),
      });
      if (res.status !== 200) return undefined;
      type Offer = { offer_url: string };
      const page = (await res.json()) as { results: { offers: Offer[]; alternatives: Offer[] }[] };
      const found = new Set(page.results.flatMap((r) => [...r.offers, ...r.alternatives].map((o) => o.offer_url)));
      return Object.values(offers).every((url) => found.has(url)) ? true : undefined;
    },
    target.waitMs,
    700, // under the public search's brake (120 a minute per address), which the shopper's browser shares
    'the demo products did not appear in the search in time',
  );
  return { partnerId, testKey: keys.test, liveKey: keys.live, offers };
}
