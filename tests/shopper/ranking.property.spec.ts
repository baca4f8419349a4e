/**
 * Rule 1, as a property: commission never changes a search answer, order included. Random stores and offers go as
 * events through the real offers projector (into an in-memory unit of work), then through the search pipeline the
 * route uses (searchable at a clock time, ranking, views). The same history with every commission changed — product
 * level (PUT and PATCH) and store level (`default_commission`) — must give the same answers for every query.
 * The ranking's input type (SearchOffer) has no commission field at all: the compiler keeps it out; this checks
 * that nothing on the way (projector, views) lets one through.
 */
import { expect } from 'chai';
import fc from 'fast-check';
import type { Commission } from '../../shared-schema/domain/commission.js';
import type { RecordedEvent } from '../../shared-schema/ports/event-store.js';
import type { Doc, ReadTx } from '../../shared-schema/ports/read-store.js';
import { offersProjector } from '../../projections/projectors/offers.js';
import { OFFER_STORES, OFFERS } from '../../shared-schema/read-models/offers.js';
import { isSearchable, type OfferDoc, type OfferStoreDoc } from '../../shared-schema/shopper/offer-facts.js';
import { rankProducts, type SearchOffer } from '../../shared-schema/shopper/ranking.js';
import { productView, searchOfferOf } from '../../shared-schema/shopper/search-view.js';
import { textWords, MIN_PREFIX_LENGTH } from '../../shared-schema/ports/text-search.js';

/** A unit of work over Maps (the offers projector only gets and puts by id). */
function memoryTx(data: Map<string, Map<string, Doc>>): ReadTx {
  const coll = (c: string) => data.get(c) ?? data.set(c, new Map()).get(c)!;
  const clone = <T>(x: T): T => structuredClone(x);
  return {
    get: async <T extends Doc>(c: string, id: string) => (coll(c).has(id) ? clone(coll(c).get(id)! as T) : null),
    find: async () => {
      throw new Error('not used by the offers projector');
    },
    count: async (c: string) => coll(c).size,
    sum: async () => [],
    put: async (c: string, doc: Doc) => void coll(c).set(doc._id, clone(doc)),
    delete: async (c: string, id: string) => void coll(c).delete(id),
    setCheckpoint: async () => undefined,
  };
}

/** Compile-time: the ranking input has no commission field (this line fails to compile if one is added). */
const noCommissionField: 'commission' extends keyof SearchOffer ? never : true = true;
void noCommissionField;

const T0 = Date.parse('2026-03-01T12:00:00.000Z');
const WORDS = ['camiseta', 'azul', 'cafe', 'melao', 'pera'];
const STORES = ['S1', 'S2', 'S3'];

const commission: fc.Arbitrary<Commission> = fc.oneof(
  fc.constant(null),
  fc.record({ type: fc.constant('percentage' as const), rate: fc.integer({ min: 0, max: 10000 }).map((n) => n / 100) }),
  fc.record({ type: fc.constant('fixed' as const), amount_cents: fc.integer({ min: 0, max: 1_000_000 }) }),
);

const offerArb = fc.record({
  store: fc.constantFrom(...STORES),
  title: fc
    .array(fc.constantFrom(...WORDS, 'Café', 'MELÃO', 'x'), { minLength: 1, maxLength: 3 })
    .map((w) => w.join(' ')),
  gtin: fc.option(fc.constantFrom('7891234567895', '7890000000017'), { nil: undefined }),
  price: fc.integer({ min: 1, max: 50_000 }),
  condition: fc.constantFrom('new', 'new', 'used', 'refurbished'),
  shipping: fc.option(
    fc.oneof(
      fc.constant({ type: 'free' as const }),
      fc.integer({ min: 0, max: 3000 }).map((c) => ({ type: 'fixed' as const, cost_cents: c })),
    ),
    { nil: undefined },
  ),
  rating: fc.option(
    fc.record({ average: fc.integer({ min: 0, max: 50 }).map((n) => n / 10), count: fc.integer({ min: 0, max: 100 }) }),
    { nil: undefined },
  ),
  cover: fc.boolean(),
  ageHours: fc.integer({ min: 0, max: 60 }),
  patchPrice: fc.option(fc.integer({ min: 1, max: 50_000 }), { nil: undefined }),
  commission,
  patchCommission: commission,
});

type OfferCase = typeof offerArb extends fc.Arbitrary<infer T> ? T : never;
type Commissions = { products: Commission[]; patches: Commission[]; stores: Commission[] };

function history(offers: readonly OfferCase[], c: Commissions): RecordedEvent[] {
  const events: RecordedEvent[] = [];
  const add = (stream: string, type: string, data: unknown, at: number) =>
    events.push({
      id: `e${events.length}`,
      stream,
      revision: 0,
      position: events.length + 1,
      type,
      data,
      metadata: { recorded_at: new Date(at).toISOString(), actor: 'test' },
    });
  STORES.forEach((s, i) => {
    const store = {
      name: `Loja ${s}`,
      cnpj: '00000000000191',
      website_url: 'https://shop.test',
      domains: ['shop.test'],
      default_commission: c.stores[i],
    };
    add(
      `store-live:pt_1:${s}`,
      'StoreRegistered',
      { store_id: s, store, registered_at: new Date(T0 - 100 * 3600e3).toISOString() },
      T0 - 100 * 3600e3,
    );
    if (i < 2) add(`store-live:pt_1:${s}`, 'StoreApproved', { store_id: s, domains: ['shop.test'] }, T0 - 99 * 3600e3);
  });
  offers.forEach((o, i) => {
    const sku = `sku-${i}`;
    const at = T0 - o.ageHours * 3600e3;
    const product = {
      commission: c.products[i],
      store_id: o.store,
      title: o.title,
      ...(o.gtin ? { gtin: o.gtin } : {}),
      condition: o.condition,
      product_url: `https://shop.test/p/${i}`,
      image_urls: [`https://shop.test/i/${i}.jpg`],
      price_cents: o.price,
      available: true,
      ...(o.shipping ? { shipping: o.shipping } : {}),
      ...(o.rating ? { rating: o.rating } : {}),
      updated_at: new Date(at).toISOString(),
    };
    const stream = `product-live:pt_1:${sku}`;
    add(stream, 'ProductUpserted', { sku, product, received_at: new Date(at).toISOString() }, at);
    if (o.cover)
      add(
        stream,
        'CoverChecked',
        { sku, url: product.image_urls[0], ok: true, reasons: [], checked_at: new Date(at).toISOString() },
        at,
      );
    const patch = {
      commission: c.patches[i],
      ...(o.patchPrice !== undefined ? { price_cents: o.patchPrice } : {}),
      updated_at: new Date(at).toISOString(),
    };
    add(stream, 'ProductPatched', { sku, patch, received_at: new Date(at).toISOString() }, at);
  });
  return events;
}

async function answers(offers: readonly OfferCase[], c: Commissions): Promise<unknown[]> {
  const data = new Map<string, Map<string, Doc>>();
  const tx = memoryTx(data);
  for (const e of history(offers, c)) await offersProjector.apply(e, tx);
  const docs = [...(data.get(OFFERS)?.values() ?? [])] as unknown as OfferDoc[];
  expect(JSON.stringify([...data.values()].map((m) => [...m.values()]))).not.to.include('commission'); // the model holds none
  const stores = data.get(OFFER_STORES) ?? new Map();
  const now = new Date(T0 + 1);
  const out: unknown[] = [];
  for (const q of ['camiseta', 'cafe', 'melao azul', 'per', 'x']) {
    const words = textWords(q);
    // What the text index would find: every word in a title/other word, the last as a prefix.
    const found = docs.filter((d) => {
      const have = textWords(`${d.text_title} ${d.text_other}`);
      return words.every((w, i) =>
        have.some((h) => h === w || (i === words.length - 1 && w.length >= MIN_PREFIX_LENGTH && h.startsWith(w))),
      );
    });
    const searchable = found.flatMap((d) => {
      const store = (stores.get(d.store_key) ?? null) as OfferStoreDoc | null;
      return store && isSearchable(d, store, now) ? [searchOfferOf(d, store)] : [];
    });
    out.push(rankProducts(words, searchable, MIN_PREFIX_LENGTH).map((p) => productView(p, 'https://svc.test')));
  }
  return out;
}

describe('rule 1 (property): changing any commission never changes any search answer, order included', () => {
  it('product-level (PUT, PATCH) and store-level commissions', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(offerArb, { minLength: 1, maxLength: 12 }),
        fc.array(commission, { minLength: 3, maxLength: 3 }),
        fc.array(commission, { minLength: 3, maxLength: 3 }),
        fc.array(commission, { minLength: 24, maxLength: 24 }),
        async (offers, storesA, storesB, changed) => {
          const a = {
            products: offers.map((o) => o.commission),
            patches: offers.map((o) => o.patchCommission),
            stores: storesA,
          };
          const b = {
            products: changed.slice(0, offers.length),
            patches: changed.slice(12, 12 + offers.length),
            stores: storesB,
          };
          expect(await answers(offers, b)).to.deep.equal(await answers(offers, a));
        },
      ),
      { numRuns: 200 },
    );
  });

  it('answers are not trivially empty (the generator reaches searchable offers)', async () => {
    const sample = fc.sample(fc.array(offerArb, { minLength: 8, maxLength: 12 }), { numRuns: 20, seed: 17 });
    let nonEmpty = 0;
    for (const offers of sample) {
      const none: Commissions = {
        products: offers.map(() => null),
        patches: offers.map(() => null),
        stores: [null, null, null],
      };
      if ((await answers(offers, none)).some((a) => (a as unknown[]).length > 0)) nonEmpty++;
    }
    expect(nonEmpty).to.be.greaterThan(10);
  });
});
