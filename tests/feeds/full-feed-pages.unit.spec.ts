/**
 * The full feed's lines over several pages of the feed model (query-api/feeds/offers-tsv.ts `feedLines`), on the
 * embedded read store: every offer once, in order, whatever the page boundaries; and the download lets the event
 * loop turn between pages, so the service's other requests are answered while a channel downloads (the embedded store
 * answers each page synchronously).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { SqliteReadStore } from '../../infra/adapters/sqlite/read-store.js';
import { FEED_PAGE, feedLines } from '../../query-api/feeds/offers-tsv.js';
import { TSV_HEADER, tsvLink, tsvOf } from '../../shared-schema/feeds/feed-offer.js';
import { FEED_COLLECTIONS, FEED_OFFERS } from '../../shared-schema/read-models/feed.js';

const OFFERS = 2 * FEED_PAGE + 1;
const BASE = 'http://loja.test';
const CHANNEL = 'ch_pages';

/** A stored line (`tsvTemplate`'s shape: the link cell, the fourth, holds the page's path). */
const template = (i: number): string =>
  `of_${String(i).padStart(6, '0')}\tTitulo ${i}\t\t/p/pt/loja/sku-${i}\thttps://img.test/${i}.jpg\tin_stock\t10.00 BRL\t\tnew\t\t\t\t\n`;

describe('the full feed over several pages of the feed model', () => {
  let dir: string;
  let store: SqliteReadStore;
  const now = new Date('2026-11-28T12:00:00.000Z');

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-feed-pages-'));
    store = SqliteReadStore.open({ path: path.join(dir, 'read.db'), sweepIntervalMs: 0 });
    await store.ensureCollections(FEED_COLLECTIONS);
    await store.transact(async (tx) => {
      for (let i = 0; i < OFFERS; i++) {
        await tx.put(FEED_OFFERS, {
          _id: `offer-${String(i).padStart(6, '0')}`,
          in_feed: true,
          last_write_at: now.toISOString(),
          tsv: template(i),
        });
      }
      // Out of the feed: never written.
      await tx.put(FEED_OFFERS, { _id: 'offer-x', in_feed: false, last_write_at: now.toISOString(), tsv: null });
    });
  });

  after(async () => {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('writes every offer once, in order, across the page boundaries', async () => {
    let text = '';
    for await (const chunk of feedLines(store, now, BASE, CHANNEL)) text += chunk;
    const link = tsvLink(BASE, CHANNEL);
    const expected = TSV_HEADER + Array.from({ length: OFFERS }, (_, i) => tsvOf(template(i), link)).join('');
    expect(text).to.equal(expected);
  });

  it('lets the event loop turn between pages: work queued when the download starts runs before it ends', async () => {
    const order: string[] = [];
    const lines = feedLines(store, now, BASE, CHANNEL);
    setImmediate(() => order.push('other work'));
    let pages = 0;
    for await (const chunk of lines) {
      if (chunk !== TSV_HEADER) order.push(`page ${++pages}`);
    }
    expect(pages).to.equal(3);
    // The first page is read at once; the others wait for a turn of the loop, where the other work runs.
    expect(order.indexOf('other work')).to.be.greaterThan(0);
    expect(order.indexOf('other work')).to.be.lessThan(order.length - 1);
  });
});
