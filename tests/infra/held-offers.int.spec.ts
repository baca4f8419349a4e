import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { SqliteReadStore } from '../../infra/adapters/sqlite/read-store.js';
import { HeldOffersSearch } from '../../infra/adapters/sqlite/held-offers.js';
import { changeLogOf, textIndexSql } from '../../infra/adapters/sqlite/read-store-sql.js';
import { resultsPage } from '../../query-api/public/product-search.js';
import { CANDIDATES } from '../../shared-schema/shopper/search-policy.js';
import { OFFER_COLLECTIONS, OFFER_STORES, OFFERS } from '../../shared-schema/read-models/offers.js';
import { offerProduct, otherText, type OfferDoc, type OfferStoreDoc } from '../../shared-schema/shopper/offer-facts.js';
import { STALE_AFTER_MS } from '../../shared-schema/domain/product-status.js';
import type { ProductInput } from '../../shared-schema/events/product.js';

const BASE = 'http://127.0.0.1:8080';
const NOW = Date.parse('2026-03-03T12:00:00.000Z');
const HOUR = 3600_000;

/** A small deterministic generator (mulberry32), so a failure can be run again. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// "panela" is in most titles: more matches than CANDIDATES, so the bound, the title tier and the second read count.
const WORDS = ['panela', 'chaleira', 'elétrica', 'inox', 'pressão', 'frigideira', 'antiaderente', 'tampa', 'vidro'];
const STORES: OfferStoreDoc[] = [
  ['loja', 'active', true],
  ['bazar', 'active', true],
  ['outlet', 'active', false], // its domain is not approved
  ['velha', 'suspended', true],
  ['nova', 'pending', true],
].map(([id, status, approved], i) => ({
  _id: `live:pt_${i % 2}:${String(id)}`,
  store_id: String(id),
  name: `Loja ${String(id)}`,
  status: status as OfferStoreDoc['status'],
  domains: [`${String(id)}.example`],
  domains_approved: approved ? [`${String(id)}.example`] : [],
  position: 0,
}));

function offerOf(n: number, pick: () => number, version = 0): OfferDoc {
  const one = <T>(xs: readonly T[]): T => xs[Math.floor(pick() * xs.length)];
  const store = one(STORES);
  const partner = store._id.split(':')[1];
  const title = [one(WORDS), pick() < 0.8 ? 'panela' : one(WORDS), one(WORDS)].join(' ');
  const gtin = pick() < 0.25 ? null : `789${String(1000000000 + Math.floor(pick() * 40)).padStart(10, '0')}`;
  const image = `https://${store.store_id}.example/i/${n}-${version}.jpg`;
  const input: ProductInput = {
    store_id: store.store_id,
    title,
    ...(gtin ? { gtin } : {}),
    ...(pick() < 0.5 ? { brand: one(['Tramontina', 'Inox Já', 'Rochedo']) } : {}),
    ...(pick() < 0.3 ? { condition: one(['new', 'used', 'refurbished'] as const) } : {}),
    product_url: `https://${pick() < 0.9 ? store.store_id : 'outro'}.example/p/${n}`,
    image_urls: [image],
    price_cents: one([1_000, 2_000, 2_000, 4_999, 5_000, 10_000, 12_345, 400]),
    available: pick() < 0.92,
    ...(pick() < 0.6
      ? {
          shipping:
            pick() < 0.5 ? { type: 'free' as const } : { type: 'fixed' as const, cost_cents: one([0, 990, 1500]) },
        }
      : {}),
    ...(pick() < 0.6 ? { rating: { average: one([4, 4.5, 5, 3.2]), count: one([1, 10, 10, 200]) } } : {}),
    updated_at: new Date(NOW - 100 * HOUR).toISOString(),
  };
  const product = offerProduct(input);
  const coverRoll = pick();
  const cover =
    coverRoll < 0.8
      ? { url: image, ok: true, reasons: [], checked_at: new Date(NOW - 50 * HOUR).toISOString() }
      : coverRoll < 0.88
        ? { url: image, ok: false, reasons: [{ code: 'cover_too_small', message: 'small' }], checked_at: '' }
        : coverRoll < 0.94
          ? { url: `${image}.old`, ok: true, reasons: [], checked_at: '' } // a check of another address
          : null;
  // Most written in the last 48 h; some just at the bound, some past it (stale).
  const age = one([1 * HOUR, 5 * HOUR, 20 * HOUR, 47 * HOUR, STALE_AFTER_MS, STALE_AFTER_MS + 1, 60 * HOUR]);
  const removed = pick() < 0.04;
  return {
    _id: `live:${partner}:sku-${n}`,
    partner_id: partner,
    sku: `sku-${n}`,
    store_id: store.store_id,
    store_key: store._id,
    gtin: gtin ?? null,
    product,
    removed,
    cover,
    last_write_at: new Date(NOW - age).toISOString(),
    text_title: removed ? '' : product.title,
    text_other: removed ? '' : otherText(product),
    position: version,
  };
}

const QUERIES: string[][] = [
  ['panela'],
  ['panela', 'inox'],
  ['chaleira', 'ele'],
  ['pan'],
  ['tramontina'],
  ['panela', 'tampa', 'vid'],
  ['frigideira', 'antiaderente'],
  ['inox', 'pressao'],
  ['nada'],
];

// The layout of the service, and a small one under which these few offers span many pages and chunks of strings.
for (const [layout, geometry] of [
  ['', undefined],
  [', in pages of 8 rows and strings in chunks of 128 bytes', { pageBits: 3, poolChunk: 128 }],
] as const)
  describe(`the search on the offers a search thread holds (held-offers.ts)${layout}`, () => {
    let dir: string;
    let store: SqliteReadStore;
    let held: HeldOffersSearch;
    const stores = new Map<string, OfferStoreDoc>();

    beforeEach(async () => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-held-offers-'));
      store = SqliteReadStore.open({ path: path.join(dir, 'read.db'), sweepIntervalMs: 0 });
      await store.ensureCollections(OFFER_COLLECTIONS);
      stores.clear();
      const pick = random(17);
      await store.transact(async (tx) => {
        for (const s of STORES) {
          await tx.put(OFFER_STORES, s);
          stores.set(s._id, s);
        }
        for (let n = 0; n < 600; n++) await tx.put(OFFERS, offerOf(n, pick));
      });
      held = new HeldOffersSearch(store.file, geometry);
    });
    afterEach(async () => {
      held.close();
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    /** Every query, at a few times and pages: the held search's answer is the documents' answer, byte for byte. */
    async function sameAnswers(times: readonly number[] = [NOW]): Promise<number> {
      let compared = 0;
      for (const t of times)
        for (const words of QUERIES)
          for (const [offset, limit] of [
            [0, 20],
            [20, 50],
            [190, 50],
          ]) {
            const now = new Date(t);
            const expected = await resultsPage(store, words, now, offset, limit, BASE);
            const got = held.resultsPage(OFFERS, words, now, offset, limit, BASE, (k) => stores.get(k));
            expect(got, `${words.join(' ')} at ${now.toISOString()}, ${offset}+${limit}`).to.deep.equal(expected);
            compared += expected.count;
          }
      return compared;
    }

    it('answers every query as the documents do: candidates, their gtins, the rules, the order, the page', async () => {
      // Around the 48-hour bound of the offers written exactly 48 h before NOW.
      const listed = await sameAnswers([NOW, NOW - 1, NOW + 1, NOW + 30 * HOUR]);
      expect(listed).to.be.greaterThan(300);
      expect(held.heldBytes, 'the offers read are held').to.be.greaterThan(0);
      // More than CANDIDATES offers hold the common word in their title: the answer is bounded as the documents' is.
      const common = held.resultsPage(OFFERS, ['panela'], new Date(NOW), 0, 1, BASE, (k) => stores.get(k))!;
      expect(common.total).to.be.greaterThan(10).and.at.most(CANDIDATES);
    });

    it('sees every write since its last search: offers changed, moved, removed, stores suspended', async () => {
      await sameAnswers();
      const pick = random(99);
      for (let round = 1; round <= 4; round++) {
        await store.transact(async (tx) => {
          // Rewritten offers (new title, gtin, store, price, cover…), and new ones.
          for (let i = 0; i < 80; i++) await tx.put(OFFERS, offerOf(Math.floor(pick() * 700), pick, round));
          if (round === 2) {
            const suspended = { ...stores.get(STORES[1]._id)!, status: 'suspended' as const, position: round };
            await tx.put(OFFER_STORES, suspended);
          }
        });
        for (const s of await store.find<OfferStoreDoc>(OFFER_STORES, {})) stores.set(s._id, s);
        await sameAnswers([NOW, NOW + 2 * HOUR]);
      }
    });

    it('forgets everything when it is further behind than the change log keeps, or the log is made anew', async () => {
      await sameAnswers();
      const before = held.heldBytes;
      const db = new Database(store.file);
      try {
        const pick = random(5);
        await store.transact(async (tx) => {
          for (let i = 0; i < 50; i++) await tx.put(OFFERS, offerOf(i, pick, 9));
        });
        // The log let go of the first changes since the last search (as its trigger does past CHANGE_LOG_KEEP).
        db.prepare(
          `DELETE FROM ${changeLogOf(OFFERS)} WHERE seq > 0 AND seq < (SELECT max(seq) FROM ${changeLogOf(OFFERS)}) - 10`,
        ).run();
        held.resultsPage(OFFERS, ['nada'], new Date(NOW), 0, 20, BASE, (k) => stores.get(k));
        expect(held.heldBytes, 'all forgotten').to.be.lessThan(before);
        await sameAnswers();
        // A log made anew (the collection dropped and made again): a new token.
        const rebuilt = held.heldBytes;
        db.prepare(`UPDATE ${changeLogOf(OFFERS)} SET r = r + 1 WHERE seq = 0`).run();
        const pick2 = random(6);
        await store.transact(async (tx) => {
          for (let i = 0; i < 50; i++) await tx.put(OFFERS, offerOf(i, pick2, 10));
        });
        held.resultsPage(OFFERS, ['nada'], new Date(NOW), 0, 20, BASE, (k) => stores.get(k));
        expect(held.heldBytes).to.be.lessThan(rebuilt);
        await sameAnswers();
      } finally {
        db.close();
      }
    });

    it('leaves a query of more distinct words than the text index takes to the documents', () => {
      const words = 'a1 b2 c3 d4 e5 f6 g7 h8 i9 j10 k11 l12 m13'.split(' ');
      expect(held.resultsPage(OFFERS, words, new Date(NOW), 0, 20, BASE, (k) => stores.get(k))).to.equal(undefined);
    });

    it('the change log keeps the last changes it is made to keep, and its token', () => {
      const db = new Database(path.join(dir, 'log.db'));
      try {
        db.exec('CREATE TABLE coll_things (_id TEXT PRIMARY KEY, doc TEXT NOT NULL)');
        for (const sql of textIndexSql('things', ['name'], 3)) db.exec(sql);
        const put = db.prepare(
          'INSERT INTO coll_things (_id, doc) VALUES (?, ?) ON CONFLICT(_id) DO UPDATE SET doc = excluded.doc',
        );
        for (let i = 0; i < 10; i++) put.run(`t${i % 4}`, JSON.stringify({ name: `n${i}` }));
        db.prepare('DELETE FROM coll_things WHERE _id = ?').run('t1');
        const rows = db
          .prepare(`SELECT seq, r FROM ${changeLogOf('things')} ORDER BY seq`)
          .raw()
          .all() as number[][];
        const rowid = (id: string) => db.prepare('SELECT rowid FROM coll_things WHERE _id = ?').pluck().get(id);
        expect(rows.map((r) => r[0])).to.deep.equal([0, 9, 10, 11]);
        expect(Number.isSafeInteger(rows[0][1])).to.equal(true);
        // The last three changes: t0 and t1 written (the 9th and 10th puts), t1 deleted (its rowid was 2).
        expect(rows.slice(1).map((r) => r[1])).to.deep.equal([rowid('t0'), 2, 2]);
      } finally {
        db.close();
      }
    });
  });
