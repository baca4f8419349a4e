/**
 * A page of the changes feed is spliced from the text the feed projector kept with each change (`changeTemplate`),
 * completed with the service's address and the channel (`changeOf`): its bytes must be those of `JSON.stringify` of
 * the changes as `feedOffer` builds them, for every change, base and channel; a change kept before the text was
 * (no `json`) is made at the read, the same bytes. The projector keeps a change's text, not the change a second time.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import fc from 'fast-check';
import { SqliteReadStore } from '../../infra/adapters/sqlite/read-store.js';
import { changesPage } from '../../query-api/feeds/changes.js';
import { feedProjector } from '../../projections/projectors/feed.js';
import {
  changeLink,
  changeOf,
  changeTemplate,
  feedOffer,
  type FeedEntry,
  type FeedEntryChange,
} from '../../shared-schema/feeds/feed-offer.js';
import { feedEntryArbitrary } from './feed-entry-arbitrary.js';
import type { RecordedEvent } from '../../shared-schema/ports/event-store.js';
import type { Doc } from '../../shared-schema/ports/read-store.js';
import {
  FEED_CHANGES,
  FEED_COLLECTIONS,
  FEED_STORES,
  feedChangeKey,
  type EarlierFeedChangeDoc,
  type FeedChangeDoc,
} from '../../shared-schema/read-models/feed.js';

/** The answer's change as it was written before the kept text: the object, for Koa's `JSON.stringify`. */
const objectOf = (c: FeedEntryChange, base: string, channel: string) =>
  c.op === 'upsert' ? { op: 'upsert', offer: feedOffer(c.entry, base, channel) } : { op: 'delete', id: c.id };

/**
 * Text with what JSON escapes (quotes, backslashes, control characters, lone surrogates), what it does not (U+2028,
 * astral characters), what a path encodes, and the keys the splice looks for.
 */
const text = fc.oneof(
  fc.string({
    unit: fc.constantFrom('a', 'Z', ' ', '"', '\\', '\t', '\n', '\u0000', '\u001f', '\u2028', '/', '?', '&', '%', 'é'),
  }),
  fc.string({ unit: fc.constantFrom('💡', '\ud83d', '\udca1', 'x') }),
  fc.constantFrom('"offer_url":"', '","buy_url":"', '{"op":"upsert"', '\\"', ''),
);
const cents = fc.oneof(fc.integer({ min: 0, max: 2 ** 40 }), fc.constant(Number.MAX_SAFE_INTEGER));

const entry = feedEntryArbitrary(text, cents);

const change: fc.Arbitrary<FeedEntryChange> = fc.oneof(
  entry.map((e) => ({ op: 'upsert' as const, entry: e })),
  fc.string({ unit: fc.constantFrom('A', 'z', '0', '_', '-'), minLength: 32, maxLength: 32 }).map((id) => ({
    op: 'delete' as const,
    id,
  })),
);

/** Bases with and without a path or a query, with characters JSON escapes (a lone surrogate at the end, too). */
const BASES = [
  'http://127.0.0.1:8080',
  'https://shop.example/base',
  'https://x.example/?a=1',
  'https://x.example/a"b\\c',
  'https://exemplo.test/lojã/\u2028',
  'https://x.test/💡\ud83d',
];
const CHANNELS = ['ch_AAAAAAAAAAAAAAAAAAAAAA', 'ch_a-b_c', 'canal é/?&"'];

describe('the change text kept by the feed projector', () => {
  it('completed for a channel, is the bytes of JSON.stringify of the change the channel was sent before', () => {
    fc.assert(
      fc.property(change, fc.constantFrom(...BASES), fc.constantFrom(...CHANNELS), (c, base, channel) => {
        expect(changeOf(changeTemplate(c), changeLink(base, channel))).to.equal(
          JSON.stringify(objectOf(c, base, channel)),
        );
      }),
      { seed: 20261129, numRuns: 1000 },
    );
  });

  it('keeps the bytes at the edges: the splice keys inside the texts, the largest cents, a delete', () => {
    const e: FeedEntry = {
      id: 'A'.repeat(32),
      description: '"offer_url":"x","buy_url":"y"',
      category: '\\"offer_url\\":\\"',
      offer: {
        id: 'x',
        partner_id: 'pt_1',
        store_id: 'loja "1"',
        store_name: '{"op":"upsert","offer_url":"',
        sku: 'sku/"ç"?&#',
        gtin: null,
        title: 'Tí\u0000tulo\n\u2028💡',
        brand: '"buy_url":"',
        condition: 'new',
        price_cents: Number.MAX_SAFE_INTEGER,
        original_price_cents: Number.MAX_SAFE_INTEGER,
        installments: null,
        shipping: { type: 'fixed', cost_cents: Number.MAX_SAFE_INTEGER },
        rating: null,
        image_url: 'https://cdn.test/"a".jpg',
        updated_at: '2026-06-01T12:00:00.000Z',
      },
    };
    const cases: FeedEntryChange[] = [
      { op: 'upsert', entry: e },
      { op: 'delete', id: 'z'.repeat(32) },
    ];
    for (const c of cases)
      for (const base of BASES)
        for (const channel of CHANNELS)
          expect(changeOf(changeTemplate(c), changeLink(base, channel))).to.equal(
            JSON.stringify(objectOf(c, base, channel)),
          );
  });
});

describe('a page of the changes feed on the embedded read store', () => {
  let dir: string;
  let store: SqliteReadStore;

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-feed-changes-'));
    store = SqliteReadStore.open({ path: path.join(dir, 'read.db'), sweepIntervalMs: 0 });
    await store.ensureCollections(FEED_COLLECTIONS);
  });

  afterEach(async () => {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /**
   * Every page of `limit` from the start, as the answers' texts, against the same pages built as before from the
   * changes the documents hold (the test writes them with the change, as earlier versions did).
   */
  async function comparePages(limit: number, base: string, channel: string): Promise<number> {
    const docs = await store.find<EarlierFeedChangeDoc & Doc>(FEED_CHANGES, {});
    let after = '';
    let pages = 0;
    for (;;) {
      const page = await changesPage(store, after, limit, base, channel);
      const expected = docs
        .filter((d) => d._id > after)
        .slice(0, limit)
        .map((d) =>
          objectOf(d.op === 'upsert' ? { op: 'upsert', entry: d.entry } : { op: 'delete', id: d.id }, base, channel),
        );
      expect(`[${page.changes}]`).to.equal(JSON.stringify(expected));
      if (page.last === null) return pages;
      pages++;
      after = page.last;
    }
  }

  it('with changes kept with and without their text (written before it was kept), gives the bytes of before', async () => {
    const samples = fc.sample(change, { seed: 20261129, numRuns: 120 });
    await store.transact(async (tx) => {
      for (const [i, c] of samples.entries()) {
        const doc: EarlierFeedChangeDoc = { _id: feedChangeKey(100 + i, 0), ...c, at: '2026-06-01T12:00:00.000Z' };
        // Every third change as an earlier version kept it: no text.
        await tx.put(FEED_CHANGES, i % 3 === 0 ? doc : { ...doc, json: changeTemplate(c) });
      }
    });
    for (const limit of [1, 7, 500])
      for (const base of BASES) expect(await comparePages(limit, base, 'ch_a-b_c')).to.be.greaterThan(0);
    // A page of only earlier changes, and one that starts with one.
    expect((await changesPage(store, '', 1, BASES[0], 'ch_x')).changes).to.equal(
      JSON.stringify(objectOf(samples[0], BASES[0], 'ch_x')),
    );
  });

  it('with the changes the projector writes, gives the bytes of before', async () => {
    const P = 'pt_changes';
    const S = 'loja-changes';
    const at = '2026-06-01T12:00:00.000Z';
    await store.transact((tx) =>
      tx.put(FEED_STORES, {
        _id: `live:${P}:${S}`,
        store_id: S,
        name: 'Loja "Ç"',
        status: 'active',
        domains: ['shop.test'],
        domains_approved: ['shop.test'],
        position: 1,
      }),
    );
    let position = 10;
    const event = (sku: string, type: string, data: object): RecordedEvent => ({
      stream: `product-live:${P}:${sku}`,
      type,
      data: { sku, ...data },
      metadata: { recorded_at: at, actor: 'test' },
      position: ++position,
      revision: 0,
      id: String(position),
    });
    const product = (i: number, cents: number) => ({
      store_id: S,
      title: `Camiseta "azul" ${i}\n`,
      description: i % 2 === 0 ? 'Algodão \\ penteado' : undefined,
      brand: 'Marca',
      product_url: `https://shop.test/p/${i}`,
      image_urls: ['https://shop.test/1.jpg'],
      price_cents: cents,
      condition: 'new',
      shipping: { type: 'fixed', cost_cents: 1234 },
      available: true,
      updated_at: at,
      attributes: { cor: 'azul' },
    });
    const events: RecordedEvent[] = [];
    for (let i = 0; i < 6; i++) {
      const sku = `sku-${i}/"x"`;
      events.push(event(sku, 'ProductUpserted', { product: product(i, 1000 + i), received_at: at }));
      events.push(
        event(sku, 'CoverChecked', { url: 'https://shop.test/1.jpg', ok: true, reasons: [], checked_at: at }),
      );
      events.push(event(sku, 'ProductUpserted', { product: product(i, 2 ** 52 + i), received_at: at }));
      if (i % 2 === 1) events.push(event(sku, 'ProductRemoved', { store_id: S, removed_at: at }));
    }
    await store.transact(async (tx) => {
      for (const e of events) await feedProjector.apply(e, tx);
    });
    // The projector keeps each change's text and time, and not the change a second time.
    const docs = await store.find<FeedChangeDoc & Doc>(FEED_CHANGES, {});
    expect(docs.map((d) => d.op)).to.include.members(['upsert', 'delete']);
    for (const d of docs) {
      expect(d).to.not.have.property('entry');
      expect(Object.keys(d).sort()).to.deep.equal(d.op === 'upsert' ? UPSERT_KEYS : DELETE_KEYS);
      expect(d.at).to.equal(at);
    }
    // What a channel reads, in pages of 4: for each event, the offer as that event left it (the cover accepted: in
    // the feed; a new price: its upsert, to the cent past 2^52; removed: its delete), in the log's order.
    const byPosition = new Map(events.map((e) => [e.position, e]));
    for (const base of BASES) {
      const listed: { op: string; id?: string; offer?: Record<string, unknown> }[] = [];
      for (let after = ''; ;) {
        const page = await changesPage(store, after, 4, base, 'ch_AAAAAAAAAAAAAAAAAAAAAA');
        if (page.changes) listed.push(...(JSON.parse(`[${page.changes}]`) as typeof listed));
        if (page.last === null) break;
        after = page.last;
      }
      expect(listed).to.have.length(docs.length);
      const ids = new Map<string, string>();
      for (const [i, c] of listed.entries()) {
        const e = byPosition.get(Number(docs[i]._id.slice(0, 16)))!;
        const sku = (e.data as { sku: string }).sku;
        if (e.type === 'ProductRemoved') {
          expect(c).to.deep.equal({ op: 'delete', id: ids.get(sku) });
          continue;
        }
        const sent = [...events]
          .reverse()
          .find(
            (x) => x.position <= e.position && x.type === 'ProductUpserted' && (x.data as { sku: string }).sku === sku,
          )!;
        const product = (sent.data as { product: { title: string; price_cents: number } }).product;
        expect(c.op).to.equal('upsert');
        expect(c.offer).to.include({ sku, title: product.title, price_cents: product.price_cents });
        expect(c.offer!.offer_url)
          .to.be.a('string')
          .and.satisfy((u: string) => u.startsWith(base));
        ids.set(sku, c.offer!.id as string);
      }
      expect(listed.filter((c) => c.op === 'delete')).to.have.length(3);
    }
  });
});

const UPSERT_KEYS = ['_id', 'at', 'json', 'op'];
const DELETE_KEYS = ['_id', 'at', 'id', 'json', 'op'];
