/**
 * The promise of FEEDS.md, as a property over HTTP: the full feed read at cursor X, with every change after X applied
 * in order up to cursor Y, equals the full feed read at Y — the same offers, field for field — whatever happened in
 * between: products sent, checked, patched and removed, stores suspended and
 * reinstated, domains declared and approved, and the clock moved past the 48 h rule (the lapses recorded with no
 * request).
 *
 * Seeded, so a failure replays: FEEDS_PROPERTY_SEED (default below), FEEDS_PROPERTY_RUNS (default 4: the short run
 * of `make test`) and FEEDS_PROPERTY_STEPS (default 10) make a longer run, e.g. FEEDS_PROPERTY_RUNS=60.
 */
import { expect } from 'chai';
import fc from 'fast-check';
import { tsvLine, type FeedOffer } from '../../shared-schema/feeds/feed-offer.js';
import { productBody, startTestService, type Partner, type TestService } from '../support/service.js';
import { HOUR } from './commerce-support.js';
import { coverOk, settle, shopperWorld } from './shopper-support.js';
import { allChanges, feed, newChannel, type Channel } from './feeds-support.js';

const SEED = Number(process.env.FEEDS_PROPERTY_SEED ?? 20261128);
const RUNS = Number(process.env.FEEDS_PROPERTY_RUNS ?? 4);
const STEPS = Number(process.env.FEEDS_PROPERTY_STEPS ?? 10);

type Action =
  | {
      kind: 'put';
      store: number;
      sku: number;
      price: number;
      sale: boolean;
      available: boolean;
      alt: boolean;
      title: number;
      /** A passing cover check follows at once. */
      checked: boolean;
    }
  | { kind: 'cover'; store: number; sku: number }
  | { kind: 'patch'; store: number; sku: number; price: number; available: boolean }
  | { kind: 'remove'; store: number; sku: number }
  | { kind: 'suspend' | 'reinstate' | 'declare' | 'approve'; store: number }
  | { kind: 'clock'; ms: number };

const store = fc.integer({ min: 0, max: 2 });
const sku = fc.integer({ min: 0, max: 2 });
const price = fc.integer({ min: 100, max: 99_999 });
const action: fc.Arbitrary<Action> = fc.oneof(
  {
    arbitrary: fc.record({
      kind: fc.constant('put' as const),
      store,
      sku,
      price,
      sale: fc.boolean(),
      available: fc.boolean(),
      alt: fc.boolean(),
      title: fc.integer({ min: 0, max: 2 }),
      checked: fc.oneof({ arbitrary: fc.constant(true), weight: 3 }, { arbitrary: fc.constant(false), weight: 1 }),
    }),
    weight: 5,
  },
  { arbitrary: fc.record({ kind: fc.constant('cover' as const), store, sku }), weight: 4 },
  {
    arbitrary: fc.record({ kind: fc.constant('patch' as const), store, sku, price, available: fc.boolean() }),
    weight: 2,
  },
  { arbitrary: fc.record({ kind: fc.constant('remove' as const), store, sku }), weight: 1 },
  {
    arbitrary: fc.record({
      kind: fc.constantFrom('suspend' as const, 'reinstate' as const, 'declare' as const, 'approve' as const),
      store,
    }),
    weight: 2,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant('clock' as const),
      ms: fc.constantFrom(60_000, HOUR, 24 * HOUR, 47 * HOUR, 48 * HOUR + 1),
    }),
    weight: 2,
  },
);

const TITLES = ['Camiseta azul', 'Camiseta verde', 'Caneca de louça'];

describe('channel feeds: full feed at X + changes after X up to Y = full feed at Y (property)', function () {
  let t: TestService;
  let channel: Channel;
  /** The three stores the actions pick from: [owner, store id]. Two of one partner: a SKU cannot change store (409). */
  let stores: [Partner, string][];
  const bodies = new Map<string, Record<string, unknown>>();

  before(async () => {
    t = await startTestService();
    const world = await shopperWorld(t, Date.parse('2026-07-01T08:00:00.000Z'));
    stores = [
      [world.hub, 'Loja-A'],
      [world.hub, 'Loja-B'],
      [world.other, 'Loja-C'],
    ];
    for (const [p, id] of stores) bodies.set(id, (await p.api.get(`/stores/${id}`)).body as Record<string, unknown>);
    channel = await newChannel(t, 'Propriedade');
  });
  after(() => t?.close());

  const admin = async (path: string, body: unknown = {}) => {
    const r = await t.admin.post(path, body);
    expect([200, 404, 409, 422], JSON.stringify(r.body)).to.include(r.status);
  };

  async function run(a: Action): Promise<void> {
    if (a.kind === 'clock') {
      // The freshness reactor scans the products model when the clock moves: it must hold what was written.
      await settle(t);
      expect((await t.admin.post('/clock', { advance_ms: a.ms })).status).to.equal(200);
      return;
    }
    const [p, storeId] = stores[a.store];
    const storePath = `/partners/${p.partnerId}/live/stores/${storeId}`;
    const skuId = `prop-${'sku' in a ? a.sku : 0}`;
    const altDomain = `${storeId.toLowerCase()}.alt.test`;
    switch (a.kind) {
      case 'put': {
        // Refused, nothing written: on the other domain before the store declares it (422), a SKU of another store of
        // the partner (409).
        const r = await p.api.put(
          `/products/${skuId}`,
          productBody(storeId, {
            title: TITLES[a.title],
            price_cents: a.price,
            ...(a.sale ? { original_price_cents: a.price + 500 } : {}),
            available: a.available,
            product_url: a.alt ? `https://${altDomain}/p/${skuId}` : `https://shop.test/p/${skuId}`,
            updated_at: t.clock.now().toISOString(),
          }),
        );
        expect([200, 409, 422], JSON.stringify(r.body)).to.include(r.status);
        if (r.status === 200 && a.checked) await coverOk(t, p, skuId);
        return;
      }
      case 'cover':
        if ((await p.api.get(`/products/${skuId}`)).status === 200) await coverOk(t, p, skuId);
        return;
      case 'patch': {
        const r = await p.api.patch(`/products/${skuId}`, {
          price_cents: a.price,
          available: a.available,
          updated_at: t.clock.now().toISOString(),
        });
        // 422: a price above the product's `original_price_cents`; nothing written.
        expect([200, 404, 422], JSON.stringify(r.body)).to.include(r.status);
        return;
      }
      case 'remove': {
        const r = await p.api.delete(`/products/${skuId}`);
        expect([204, 404], JSON.stringify(r.body)).to.include(r.status);
        return;
      }
      case 'suspend':
      case 'reinstate':
        return admin(`${storePath}/${a.kind}`);
      case 'declare': {
        const {
          store_id: _id,
          status: _s,
          domains,
          ...rest
        } = bodies.get(storeId) as Record<string, unknown> & {
          domains: string[];
        };
        const body = { ...pick(rest), domains: [...new Set([...domains, altDomain])] };
        const r = await p.api.put(`/stores/${storeId}`, body);
        expect(r.status, JSON.stringify(r.body)).to.equal(200);
        return;
      }
      case 'approve':
        return admin(`${storePath}/domains/${altDomain}/approve`);
    }
  }

  /** The full feed's lines by id. */
  async function fullFeed(): Promise<{ lines: Map<string, string>; cursor: string }> {
    const r = await feed(t, '/feeds/offers.tsv', channel.token, { 'Accept-Encoding': 'gzip' });
    expect(r.status, r.text).to.equal(200);
    const lines = new Map<string, string>();
    for (const line of r.text.split('\n').slice(1, -1)) lines.set(line.split('\t')[0], `${line}\n`);
    return { lines, cursor: r.headers['feed-cursor'] as string };
  }

  it(`holds for random histories (seed ${SEED}, ${RUNS} runs of up to ${STEPS} steps)`, async function () {
    this.timeout(0);
    const seen = { changes: 0, offers: 0 };
    await fc.assert(
      fc.asyncProperty(
        fc.array(action, { minLength: 1, maxLength: STEPS }),
        fc.integer({ min: 1, max: 7 }),
        async (actions, limit) => {
          // Each run its own minute of the brake (60 feed requests a minute per channel).
          expect((await t.admin.post('/clock', { advance_ms: 60_000 })).status).to.equal(200);
          await settle(t);
          const x = await fullFeed();
          for (const a of actions) await run(a);
          await settle(t);
          const applied = new Map(x.lines);
          const { changes } = await allChanges(t, channel.token, x.cursor, limit);
          for (const c of changes) {
            if (c.op === 'delete') applied.delete(c.id);
            else applied.set(c.offer.id, tsvLine(c.offer as unknown as FeedOffer));
          }
          const y = await fullFeed();
          expect(sorted(applied)).to.deep.equal(sorted(y.lines));
          seen.changes += changes.length;
          seen.offers = Math.max(seen.offers, y.lines.size);
        },
      ),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
    // The histories did something a channel sees: offers in the feed, and changes to apply.
    expect(seen.offers, 'offers in the feed at some Y').to.be.greaterThan(0);
    expect(seen.changes, 'changes applied').to.be.greaterThan(0);
  });
});

const sorted = (m: Map<string, string>): [string, string][] => [...m.entries()].sort(([a], [b]) => (a < b ? -1 : 1));

/** The store's fields a replacement sends (what `GET /stores/{id}` answers beyond them is the service's). */
function pick(s: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of [
    'name',
    'cnpj',
    'website_url',
    'image_hosts',
    'logo_url',
    'default_commission',
    'returns_days',
    'handling_days',
  ])
    if (s[k] !== undefined && s[k] !== null) out[k] = s[k];
  return out;
}
