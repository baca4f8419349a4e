import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SqliteReadStore } from '../../infra/adapters/sqlite/read-store.js';
import { startHeldSearch, type HeldSearch } from '../../infra/adapters/sqlite/held-search.js';
import { GenerationalReadStore, MappedReadStore, physicalName } from '../../projections/generations.js';
import { offersProjector } from '../../projections/projectors/offers.js';
import { resultsPage } from '../../query-api/public/product-search.js';
import type { ResultsPage } from '../../shared-schema/shopper/search-policy.js';
import { StoreFactsCopy } from '../../query-api/public/store-facts.js';
import { OFFER_COLLECTIONS, OFFER_STORES, OFFERS } from '../../shared-schema/read-models/offers.js';
import { offerProduct, otherText, type OfferDoc, type OfferStoreDoc } from '../../shared-schema/shopper/offer-facts.js';
import type { ProductView } from '../../shared-schema/shopper/search-view.js';
import { MAX_QUERY_WORDS } from '../../shared-schema/ports/text-search.js';

const HOUR = 3600_000;
/** The service's public address, for the views' links. */
const BASE = 'http://127.0.0.1:8080';
const written = new Date('2026-03-01T12:00:00.000Z');

function offer(n: number, title: string, gtin: string | null, price: number): OfferDoc {
  const product = offerProduct({
    store_id: 'loja',
    title,
    ...(gtin ? { gtin } : {}),
    product_url: `https://loja.example/p/${n}`,
    image_urls: [`https://loja.example/i/${n}.jpg`],
    price_cents: price,
    available: true,
    updated_at: written.toISOString(),
  });
  return {
    _id: `live:pt_a:sku-${n}`,
    partner_id: 'pt_a',
    sku: `sku-${n}`,
    store_id: 'loja',
    store_key: 'live:pt_a:loja',
    gtin,
    product,
    removed: false,
    cover: { url: product.image_urls[0], ok: true, reasons: [], checked_at: written.toISOString() },
    last_write_at: written.toISOString(),
    text_title: product.title,
    text_other: otherText(product),
    position: 0,
  };
}

const storeDoc: OfferStoreDoc = {
  _id: 'live:pt_a:loja',
  store_id: 'loja',
  name: 'Loja',
  status: 'active',
  domains: ['loja.example'],
  domains_approved: ['loja.example'],
  position: 0,
};

describe('the held search of the embedded default', () => {
  let dir: string;
  let store: SqliteReadStore;
  let reads: GenerationalReadStore;
  let reader: HeldSearch;
  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-held-search-'));
    store = SqliteReadStore.open({ path: path.join(dir, 'read.db'), sweepIntervalMs: 0 });
    reads = new GenerationalReadStore(store, [offersProjector]);
    await reads.load();
    // The offers projection serves from generation 2: the search must read the tables the process resolves.
    reads.setGeneration(offersProjector.name, 2);
    await reads.ensureCollections(OFFER_COLLECTIONS);
    await reads.transact(async (tx) => {
      await tx.put(OFFER_STORES, storeDoc);
      await tx.put(OFFERS, offer(1, 'Chaleira inox', '7891234567895', 10_000));
      await tx.put(OFFERS, offer(2, 'Panela', '7891234567895', 12_000));
      await tx.put(OFFERS, offer(3, 'Chaleira elétrica', null, 9_000));
    });
    reader = startHeldSearch(store.file, reads);
  });
  afterEach(async () => {
    reader.close();
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const skus = (page: ResultsPage) =>
    (JSON.parse(page.results) as ProductView[]).map((p) => p.offers.map((o) => o.sku));

  it('answers like the search in the process, from the generation the process resolves, at the caller’s clock', async () => {
    expect(await store.count(physicalName(OFFERS, 2))).to.equal(3);
    for (const now of [written.getTime() + HOUR, written.getTime() + 48 * HOUR, written.getTime() + 48 * HOUR + 1]) {
      const here = await resultsPage(reads, ['chaleira'], new Date(now), 0, 20, BASE);
      const there = await reader.search(['chaleira'], new Date(now), 0, 20, BASE);
      expect(there).to.deep.equal(here);
    }
    // The views' links are made with the address the caller passed, and each offer's store address holds its partner.
    const views = JSON.parse(
      (await reader.search(['chaleira'], new Date(written.getTime() + HOUR), 0, 20, BASE)).results,
    );
    expect((views as ProductView[]).flatMap((p) => p.offers.map((o) => o.buy_url))).to.deep.equal([
      `${BASE}/r/pt_a/loja/sku-3`,
      `${BASE}/r/pt_a/loja/sku-1`,
      `${BASE}/r/pt_a/loja/sku-2`,
    ]);
    // Rule 3 by the clock passed, to the millisecond: 48 h after the write the offers are in, 1 ms later out.
    expect(skus(await reader.search(['chaleira'], new Date(written.getTime() + 48 * HOUR), 0, 20, BASE))).to.deep.equal(
      [['sku-3'], ['sku-1', 'sku-2']],
    );
    expect(await reader.search(['chaleira'], new Date(written.getTime() + 48 * HOUR + 1), 0, 20, BASE)).to.deep.equal({
      total: 0,
      count: 0,
      results: '[]',
    });
    // Paging: the page asked for, and the count of the whole answer.
    const second = await reader.search(['chaleira'], new Date(written.getTime() + HOUR), 1, 1, BASE);
    expect(second.total).to.equal(2);
    expect(second.count).to.equal(1);
    expect(skus(second)).to.deep.equal([['sku-1', 'sku-2']]);
  });

  it('reads the documents for a query of more distinct words than the text index takes, with the same answer', async () => {
    const now = new Date(written.getTime() + HOUR);
    const words = [...Array.from({ length: MAX_QUERY_WORDS }, (_, i) => `palavra${i}`), 'chaleira'];
    await reads.transact((tx) => tx.put(OFFERS, offer(5, `${words.join(' ')} inox`, null, 7_000)));
    const answer = await reader.search(words, now, 0, 20, BASE);
    expect(skus(answer)).to.deep.equal([['sku-5']]);
    expect(answer).to.deep.equal(await resultsPage(reads, words, now, 0, 20, BASE));
  });

  it('sees what the process commits after it started', async () => {
    const now = new Date(written.getTime() + HOUR);
    expect((await reader.search(['vermelha'], now, 0, 20, BASE)).total).to.equal(0);
    await reads.transact((tx) => tx.put(OFFERS, offer(4, 'Chaleira vermelha', null, 8_000)));
    expect(skus(await reader.search(['vermelha'], now, 0, 20, BASE))).to.deep.equal([['sku-4']]);
  });

  it("follows the stores' facts the process commits: a suspension, a reinstatement, another generation", async () => {
    const now = new Date(written.getTime() + HOUR);
    const found = async () => (await reader.search(['chaleira'], now, 0, 20, BASE)).total;
    // The search has its copy of the stores before the store changes.
    expect(await Promise.all([found(), found(), found(), found()])).to.deep.equal([2, 2, 2, 2]);
    await reads.transact((tx) => tx.put(OFFER_STORES, { ...storeDoc, status: 'suspended', position: 10 }));
    expect(await Promise.all([found(), found(), found(), found()])).to.deep.equal([0, 0, 0, 0]);
    await reads.transact((tx) => tx.put(OFFER_STORES, { ...storeDoc, status: 'active', position: 11 }));
    expect(await Promise.all([found(), found(), found(), found()])).to.deep.equal([2, 2, 2, 2]);
    // A rebuilt generation whose store document is older than the copy's newest: read anew, not missed.
    reads.setGeneration(offersProjector.name, 3);
    await reads.ensureCollections(OFFER_COLLECTIONS);
    await reads.transact(async (tx) => {
      await tx.put(OFFER_STORES, { ...storeDoc, status: 'suspended', position: 5 });
      await tx.put(OFFERS, offer(1, 'Chaleira inox', '7891234567895', 10_000));
    });
    expect(await Promise.all([found(), found(), found(), found()])).to.deep.equal([0, 0, 0, 0]);
  });

  it('a copy of the stores made anew in place (older newest document) is read again', async () => {
    const copy = new StoreFactsCopy();
    const C = physicalName(OFFER_STORES, 2);
    const plain = new MappedReadStore(store, (name) => (name === OFFER_STORES ? C : name));
    const key = storeDoc._id;
    const other = { ...storeDoc, _id: 'live:pt_b:loja', position: 3 };
    expect((await copy.facts(plain, [key, other._id])).get(key)?.status).to.equal('active');
    await store.transact(async (tx) => {
      await tx.put(C, other);
      await tx.put(C, { ...storeDoc, status: 'suspended', position: 4 });
    });
    const later = await copy.facts(plain, [key, other._id, 'live:pt_c:none']);
    expect([...later.keys()].sort()).to.deep.equal([other._id, key].sort());
    expect(later.get(key)?.status).to.equal('suspended');
    await store.drop(C);
    await store.ensureCollections([{ name: C, indexes: [['position']] }]);
    await store.transact((tx) => tx.put(C, { ...storeDoc, name: 'Loja nova', position: 1 }));
    const anew = await copy.facts(plain, [key, other._id]);
    expect([...anew.keys()]).to.deep.equal([key]);
    expect(anew.get(key)?.name).to.equal('Loja nova');
  });

  it('opens the file read only: a write through such a store fails and changes nothing', async () => {
    const readOnly = SqliteReadStore.open({ path: store.file, readOnly: true, sweepIntervalMs: 0 });
    try {
      const collection = physicalName(OFFERS, 2);
      const failure = await readOnly
        .transact((tx) => tx.put(collection, offer(9, 'Bule', null, 5_000)))
        .then(
          () => null,
          (err: unknown) => err,
        );
      expect(String(failure)).to.match(/readonly|read-only|query_only|attempt to write/i);
      expect(await readOnly.count(collection)).to.equal(3);
    } finally {
      await readOnly.close();
    }
  });
});
