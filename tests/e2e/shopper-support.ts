/** Fixtures of the shopper-side HTTP tests: offers made searchable, projections settled, requests from an address. */
import http from 'node:http';
import { expect } from 'chai';
import { streams } from '../../shared-schema/streams.js';
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
 * A GET (or `method`) sent from a loopback address of its own (the public brakes count per address; 127.0.0.0/8 is
 * all ours). Follows nothing.
 */
export function getFrom(
  url: string,
  from = '127.0.0.1',
  headers: Record<string, string> = {},
  method = 'GET',
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
          for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') h.set(k, v);
          resolve({ status: res.statusCode ?? 0, headers: h, text });
        });
      },
    );
    req.on('error', reject);
    req.end();
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
