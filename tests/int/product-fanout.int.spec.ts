/**
 * A store event reaches every product of the store: with 10^5 products its one unit passed
 * MongoDB's transaction limits and failed forever. The products projector now re-saves them in pages, one unit per
 * page, the cursor kept in the read store with the checkpoint. Here with pages of 3 products and SQLite stores.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { SqliteEventStore } from '../../infra/adapters/sqlite/event-store.js';
import { SqliteReadStore } from '../../infra/adapters/sqlite/read-store.js';
import { ProjectionRunner } from '../../projections/runner.js';
import { MappedReadStoreBase } from '../../projections/generations.js';
import { createProductsProjector } from '../../projections/projectors/products.js';
import { FANOUTS, PRODUCTS, type FanOutDoc, type ProductDoc } from '../../shared-schema/read-models/products.js';
import type { Doc, ReadStore, ReadTx } from '../../shared-schema/ports/read-store.js';
import { streams, type Tenant } from '../../shared-schema/domain/streams.js';
import { until } from '../support/deadline.js';

const T: Tenant = { env: 'live', partnerId: 'pt_F' };
const PAGE = 3;
const SKUS = Array.from({ length: 10 }, (_, i) => `sku-${String(i).padStart(2, '0')}`);

/** Counts the products each unit writes, and can fail units from a given one on (a crash of the store). */
class CountingStore extends MappedReadStoreBase {
  readonly productPutsPerUnit: number[] = [];
  failFromUnit = Infinity;
  private units = 0;
  constructor(inner: ReadStore) {
    super(inner);
  }
  protected mapName(name: string): string {
    return name;
  }
  override async transact<T>(work: (tx: ReadTx) => Promise<T>): Promise<T> {
    this.units += 1;
    if (this.units >= this.failFromUnit) throw new Error('the read store went away');
    return super.transact(async (tx) => {
      let puts = 0;
      const counting: ReadTx = Object.assign(Object.create(tx) as ReadTx, {
        put: (collection: string, doc: Doc) => {
          if (collection === PRODUCTS) puts += 1;
          return tx.put(collection, doc);
        },
      });
      const result = await work(counting);
      this.productPutsPerUnit.push(puts);
      return result;
    });
  }
}

describe('a store event fans out to its products in bounded units (SQLite stores)', function () {
  this.timeout(30_000);
  let dir: string;
  let events: SqliteEventStore;
  let reads: SqliteReadStore;
  const projector = createProductsProjector({ fanOutPage: PAGE });

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-fanout-'));
    events = SqliteEventStore.open({ path: path.join(dir, 'events.db') });
    reads = SqliteReadStore.open({ path: path.join(dir, 'read.db'), sweepIntervalMs: 0 });
  });
  afterEach(async () => {
    await events.close();
    await reads.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const at = '2026-01-02T00:00:00.000Z';
  const append = async (stream: string, type: string, data: Record<string, unknown>) =>
    (await events.appendToStream(stream, [{ type, data, metadata: { recorded_at: at } }])).position;
  async function storeWithProducts(): Promise<void> {
    await append(streams.store(T, 's'), 'StoreRegistered', {
      store_id: 's',
      store: { name: 'S', cnpj: '11222333000181', website_url: 'https://shop.test', domains: ['shop.test'] },
      registered_at: at,
    });
    await append(streams.store(T, 's'), 'StoreApproved', { store_id: 's', domains: ['shop.test'] });
    for (const sku of SKUS) {
      await append(streams.product(T, sku), 'ProductUpserted', {
        sku,
        received_at: at,
        product: {
          store_id: 's',
          title: 'T',
          product_url: 'https://shop.test/p',
          image_urls: [`https://shop.test/${sku}.jpg`],
          price_cents: 1,
          available: true,
          updated_at: at,
        },
      });
    }
  }
  const products = async () => reads.find<ProductDoc>(PRODUCTS, { orderBy: [{ field: 'sku' }] });
  const fanOuts = async () => reads.find<FanOutDoc>(FANOUTS);

  it('re-saves every product of the store, at most one page per unit, before the position is reported committed', async () => {
    await storeWithProducts();
    const store = new CountingStore(reads);
    const runner = new ProjectionRunner(events, store, [projector], { retryPauseMs: 1 });
    await runner.start();
    expect(await runner.waitFor(await events.headPosition(), 10_000)).to.equal(true);
    expect((await products()).map((p) => p.sku)).to.deep.equal(SKUS);
    store.productPutsPerUnit.length = 0;
    const suspended = await append(streams.store(T, 's'), 'StoreSuspended', { store_id: 's' });
    expect(await runner.waitFor(suspended, 10_000)).to.equal(true);
    // Reported committed only once every product follows the suspension.
    const after = await products();
    expect(after.map((p) => p.position)).to.deep.equal(SKUS.map(() => suspended));
    expect(new Set(after.map((p) => p.base_state)).size).to.equal(1);
    expect(await fanOuts()).to.deep.equal([]);
    expect(Math.max(...store.productPutsPerUnit)).to.be.at.most(PAGE);
    expect(store.productPutsPerUnit.reduce((a, b) => a + b, 0)).to.equal(SKUS.length);
    await runner.stop();
  });

  it('after a crash between pages the checkpoint has passed the event, the cursor is kept, and a restart finishes the pages once', async () => {
    await storeWithProducts();
    const before = new ProjectionRunner(events, reads, [projector], { retryPauseMs: 1 });
    await before.start();
    expect(await before.waitFor(await events.headPosition(), 10_000)).to.equal(true);
    await before.stop();
    const suspended = await append(streams.store(T, 's'), 'StoreSuspended', { store_id: 's' });
    // The store event's unit commits (first page + cursor + checkpoint), then the store fails for good.
    const failing = new CountingStore(reads);
    failing.failFromUnit = 3; // 1: the check for left work at start, 2: the store event's unit, 3: its second page
    const errors: unknown[] = [];
    const crashed = new ProjectionRunner(events, failing, [projector], {
      retryPauseMs: 1,
      storeAttempts: 2,
      onError: (err) => errors.push(err),
    });
    await crashed.start();
    await until(() => errors.length > 0, 30_000, 'the runner reported its failure');
    expect(errors.map((e) => (e as Error).message)).to.deep.equal(['the read store went away']);
    expect(crashed.position).to.be.below(suspended);
    await crashed.stop();
    expect(await reads.getCheckpoint('products')).to.equal(suspended);
    const half = await products();
    expect(half.filter((p) => p.position === suspended).map((p) => p.sku)).to.deep.equal(SKUS.slice(0, PAGE));
    expect(await fanOuts()).to.deep.equal([
      {
        _id: `live:pt_F:s`,
        partner_id: 'pt_F',
        env: 'live',
        store_id: 's',
        position: suspended,
        at,
        after: [SKUS[PAGE - 1], `live:pt_F:${SKUS[PAGE - 1]}`],
      },
    ]);
    // A new process: the runner finishes the fan-out at start, page by page, and applies no event again.
    const counted = new CountingStore(reads);
    const restarted = new ProjectionRunner(events, counted, [projector], { retryPauseMs: 1 });
    await restarted.start();
    expect(restarted.position).to.equal(suspended);
    expect((await products()).map((p) => p.position)).to.deep.equal(SKUS.map(() => suspended));
    expect(counted.productPutsPerUnit.slice(0, 3)).to.deep.equal([3, 3, 1]);
    expect(await fanOuts()).to.deep.equal([]);
    const sameAsFresh = await products();
    await restarted.stop();
    // Pages are idempotent: a fresh projection of the same log gives the same documents.
    const fresh = SqliteReadStore.open({ path: path.join(dir, 'fresh.db'), sweepIntervalMs: 0 });
    const replay = new ProjectionRunner(events, fresh, [projector], { retryPauseMs: 1 });
    await replay.start();
    expect(await replay.waitFor(suspended, 10_000)).to.equal(true);
    expect(await fresh.find<ProductDoc>(PRODUCTS, { orderBy: [{ field: 'sku' }] })).to.deep.equal(sameAsFresh);
    await replay.stop();
    await fresh.close();
  });
});
