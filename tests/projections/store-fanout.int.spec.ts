/**
 * The store → products fan-out, through the projection runner (tests/support/projector-spec.ts) with pages of one
 * product, so that every store event spans several units: a store event re-derives every product of its store, and
 * only of its store, before the runner reports its position committed.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { createProductsProjector } from '../../projections/projectors/products.js';
import {
  COUNTS_KEPT,
  PRODUCT_COUNTS,
  PRODUCTS,
  countId,
  countKeyOf,
  productDocId,
  reasonCodesKey,
  type ProductCountDoc,
  type ProductDoc,
} from '../../shared-schema/read-models/products.js';
import type { ProductInput } from '../../shared-schema/events/product.js';
import type { StoreInput } from '../../shared-schema/events/store.js';
import type { RejectionReason } from '../../shared-schema/events/product.js';
import { streams, type Tenant } from '../../shared-schema/domain/streams.js';
import { freshUntil } from '../../shared-schema/domain/product-status.js';
import { projectorCollections } from '../../projections/parking.js';
import { replay } from '../../projections/replay.js';
import { SqliteReadStore } from '../../infra/adapters/sqlite/read-store.js';
import type { ReadStore } from '../../shared-schema/ports/read-store.js';
import { ProjectorSpec, RECORDED_AT, type GivenEvent } from '../support/projector-spec.js';

const T: Tenant = { env: 'live', partnerId: 'pt_F' };
const CHECKED_AT = '2026-01-01T01:00:00.000Z';
const APPROVED_AT = '2026-01-02T00:00:00.000Z';
const SUSPENDED_AT = '2026-01-03T00:00:00.000Z';
const NOT_ACTIVE: RejectionReason = {
  code: 'store_not_active',
  field: 'store_id',
  message: 'The store is not approved, or is suspended.',
};
const NOT_APPROVED: RejectionReason = {
  code: 'domain_not_approved',
  field: 'product_url',
  message: 'The domain of product_url is not approved yet.',
};

const store = (storeId: string, domain: string): StoreInput => ({
  name: storeId,
  cnpj: '11222333000181',
  website_url: `https://${domain}`,
  domains: [domain],
});
const product = (storeId: string, domain: string, sku: string): ProductInput => ({
  store_id: storeId,
  title: sku,
  product_url: `https://${domain}/${sku}`,
  image_urls: [`https://${domain}/${sku}.jpg`],
  price_cents: 100,
  available: true,
  updated_at: RECORDED_AT,
});
const registered = (storeId: string, domain: string): GivenEvent => ({
  stream: streams.store(T, storeId),
  type: 'StoreRegistered',
  data: { store_id: storeId, store: store(storeId, domain), registered_at: RECORDED_AT },
});
const sent = (storeId: string, domain: string, sku: string): GivenEvent[] => [
  {
    stream: streams.product(T, sku),
    type: 'ProductUpserted',
    data: { sku, product: product(storeId, domain, sku), received_at: RECORDED_AT },
  },
  {
    stream: streams.product(T, sku),
    type: 'CoverChecked',
    data: { sku, url: `https://${domain}/${sku}.jpg`, ok: true, reasons: [], checked_at: CHECKED_AT },
  },
];

/** The whole document of a product sent and checked as above, in the state the store makes it. */
const doc = (
  storeId: string,
  domain: string,
  sku: string,
  o: Pick<ProductDoc, 'base_state' | 'reasons' | 'published_at' | 'position'>,
): ProductDoc => ({
  _id: productDocId(T, sku),
  partner_id: T.partnerId,
  env: T.env,
  sku,
  store_id: storeId,
  product: product(storeId, domain, sku),
  removed: false,
  cover: { url: `https://${domain}/${sku}.jpg`, ok: true, reasons: [], checked_at: CHECKED_AT },
  cover_checked_at: CHECKED_AT,
  received_at: RECORDED_AT,
  last_write_at: RECORDED_AT,
  lapse_due_at: freshUntil(RECORDED_AT),
  page_host: domain,
  available: true,
  reason_codes: reasonCodesKey(o.reasons),
  ...o,
});

/** The count rows of a products read model, by id (`COUNTS_KEPT` aside), and its products' own grouping. */
async function countsOf(reads: ReadStore): Promise<{ kept: Record<string, number>; want: Record<string, number> }> {
  const want: Record<string, number> = {};
  for (const d of await reads.find<ProductDoc>(PRODUCTS)) {
    const id = countId(countKeyOf(d));
    want[id] = (want[id] ?? 0) + 1;
  }
  const rows = await reads.find<ProductCountDoc>(PRODUCT_COUNTS);
  expect(rows.map((r) => r._id)).to.include(COUNTS_KEPT);
  const kept = Object.fromEntries(rows.filter((r) => r._id !== COUNTS_KEPT).map((r) => [r._id, r.n]));
  return { kept, want };
}

describe('store → products fan-out (products projector, projection runner, SQLite)', function () {
  this.timeout(30_000);
  let spec: ProjectorSpec;
  /** Position of each product's last event (its cover check). */
  let checked: Record<string, number>;

  beforeEach(async () => {
    spec = await ProjectorSpec.open(createProductsProjector({ fanOutPage: 1 }));
    const p = await spec.given(
      registered('s', 'shop.test'),
      registered('o', 'other.test'),
      ...sent('s', 'shop.test', 'a'),
      ...sent('s', 'shop.test', 'b'),
      ...sent('s', 'shop.test', 'c'),
      ...sent('o', 'other.test', 'x'),
    );
    checked = { a: p[3], b: p[5], c: p[7], x: p[9] };
  });
  // Whatever the fan-out's pages and units, the count rows the projector keeps are its products' own grouping.
  afterEach(async function () {
    try {
      if (this.currentTest?.state !== 'passed') return;
      const { kept, want } = await countsOf(spec.reads);
      expect(kept, 'count rows').to.deep.equal(want);
    } finally {
      await spec.close();
    }
  });

  const waiting = (storeId: string, domain: string, sku: string) =>
    doc(storeId, domain, sku, {
      base_state: 'pending',
      reasons: [NOT_ACTIVE, NOT_APPROVED],
      published_at: null,
      position: checked[sku],
    });
  const pendingX = () => waiting('o', 'other.test', 'x');

  it('before approval, every product waits for its store', async () => {
    await spec.thenDocuments(PRODUCTS, [
      waiting('s', 'shop.test', 'a'),
      waiting('s', 'shop.test', 'b'),
      waiting('s', 'shop.test', 'c'),
      pendingX(),
    ]);
  });

  it('an approval publishes every product of the store at the approval time, and touches no other store’s', async () => {
    const [approved] = await spec.given({
      stream: streams.store(T, 's'),
      type: 'StoreApproved',
      data: { store_id: 's', domains: ['shop.test'] },
      metadata: { recorded_at: APPROVED_AT },
    });
    const accepted = (sku: string) =>
      doc('s', 'shop.test', sku, {
        base_state: 'accepted',
        reasons: [],
        published_at: APPROVED_AT,
        position: approved,
      });
    await spec.thenDocuments(PRODUCTS, [accepted('a'), accepted('b'), accepted('c'), pendingX()]);
  });

  const approve = (): GivenEvent => ({
    stream: streams.store(T, 's'),
    type: 'StoreApproved',
    data: { store_id: 's', domains: ['shop.test'] },
    metadata: { recorded_at: APPROVED_AT },
  });
  const suspend = (): GivenEvent => ({
    stream: streams.store(T, 's'),
    type: 'StoreSuspended',
    data: { store_id: 's' },
    metadata: { recorded_at: SUSPENDED_AT },
  });
  const held = (sku: string, position: number) =>
    doc('s', 'shop.test', sku, { base_state: 'pending', reasons: [NOT_ACTIVE], published_at: APPROVED_AT, position });

  it('a suspension takes every product of the store back to pending, keeping when it was first published', async () => {
    await spec.given(approve());
    const [suspended] = await spec.given(suspend());
    await spec.thenDocuments(PRODUCTS, [held('a', suspended), held('b', suspended), held('c', suspended), pendingX()]);
  });

  it('a suspension that comes before the approval reached every product: each product still passes through the approval, and a replay gives the same documents', async () => {
    // Appended together, the two events may fall in one unit (the approval's pages of one product are then owed when
    // the suspension restarts the fan-out); a replay from the start applies them in units of its own.
    const [, suspended] = await spec.given(approve(), suspend());
    const expected = [held('a', suspended), held('b', suspended), held('c', suspended), pendingX()];
    await spec.thenDocuments(PRODUCTS, expected);
    await spec.replayAll();
    await spec.thenDocuments(PRODUCTS, expected);
  });

  it('a product written while the fan-out of an approval still owes it is published at the approval, not at its own write', async () => {
    const patched = (sku: string): GivenEvent => ({
      stream: streams.product(T, sku),
      type: 'ProductPatched',
      data: { sku, patch: { price_cents: 100 }, received_at: RECORDED_AT },
      metadata: { recorded_at: SUSPENDED_AT },
    });
    const [approved, written] = await spec.given(approve(), patched('c'));
    const accepted = (sku: string, position: number) =>
      doc('s', 'shop.test', sku, { base_state: 'accepted', reasons: [], published_at: APPROVED_AT, position });
    const expected = [accepted('a', approved), accepted('b', approved), accepted('c', written), pendingX()];
    await spec.thenDocuments(PRODUCTS, expected);
    await spec.replayAll();
    await spec.thenDocuments(PRODUCTS, expected);
  });
});

describe('count rows of products that move within one unit (products projector, replay, SQLite)', function () {
  this.timeout(30_000);
  const approved: GivenEvent = {
    stream: streams.store(T, 's'),
    type: 'StoreApproved',
    data: { store_id: 's', domains: ['shop.test'] },
  };
  const removed = (sku: string): GivenEvent => ({
    stream: streams.product(T, sku),
    type: 'ProductRemoved',
    data: { sku, store_id: 's', removed_at: RECORDED_AT },
  });

  // Three products are sent (pending: their covers are unchecked), then their covers are accepted and one is removed.
  // Replayed plain, the sends are one unit (the pending row holds 3) and the rest another, which moves all three out
  // of that row (it falls to 0 and is deleted) and into the accepted one; traced, each event writes its own moves.
  for (const traced of [false, true]) {
    it(`keeps its products' own grouping, a row that falls to 0 deleted${traced ? ' (traced: each event its own writes)' : ''}`, async () => {
      const spec = await ProjectorSpec.open(createProductsProjector());
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-counts-unit-'));
      const target = SqliteReadStore.open({ path: path.join(dir, 'read.db'), sweepIntervalMs: 0 });
      try {
        const skus = ['a', 'b', 'c'];
        const [upserts, covers] = [0, 1].map((i) => skus.map((sku) => sent('s', 'shop.test', sku)[i]));
        const positions = await spec.given(registered('s', 'shop.test'), approved, ...upserts, ...covers, removed('b'));
        const projector = createProductsProjector();
        await target.ensureCollections(projectorCollections(projector));
        const traces: string[] = [];
        const sentThrough = positions[2 + upserts.length - 1];
        const head = positions[positions.length - 1];
        const trace = (collection: string, id: string) => traces.push(`${collection} ${id}`);
        if (traced) await replay(spec.events, target, [projector], { after: 0, upTo: head, pageSize: 1000, trace });
        else {
          await replay(spec.events, target, [projector], { after: 0, upTo: sentThrough, pageSize: 1000 });
          const pending = await countsOf(target);
          expect(Object.values(pending.kept), 'the pending row after the sends').to.deep.equal([3]);
          await replay(spec.events, target, [projector], { after: sentThrough, upTo: head, pageSize: 1000 });
        }
        const { kept, want } = await countsOf(target);
        expect(kept, 'count rows').to.deep.equal(want);
        expect(Object.values(want).reduce((a, b) => a + b, 0)).to.equal(3);
        const pending = (await target.find<ProductDoc>(PRODUCTS)).filter((d) => d.base_state === 'pending');
        expect(pending, 'no product left pending').to.deep.equal([]);
        expect(kept, 'the same rows as the live projection').to.deep.equal((await countsOf(spec.reads)).kept);
        if (traced) expect(traces.filter((t) => t.startsWith(`${PRODUCT_COUNTS} `)).length).to.be.above(0);
      } finally {
        await target.close();
        fs.rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
        await spec.close();
      }
    });
  }
});
