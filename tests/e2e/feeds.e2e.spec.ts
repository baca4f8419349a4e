/**
 * Channel feeds over HTTP (FEEDS.md): channels made and revoked by the operator (admin API and `ops channels`), the
 * full feed (`/feeds/offers.tsv`: exactly the searchable offers, the columns and formats, gzip, ETag / 304,
 * `Feed-Cursor`), its token and brake, and the changes feed.
 */
import { expect } from 'chai';
import { portOf } from '../../infra/http/gateway.js';
import { startTestService, type Partner, type TestService } from '../support/service.js';
import { expectInvalid, expectProblem, rebuildProjection, runOps, type FieldErr } from '../support/e2e.js';
import { HOUR, publish, putProduct, registerStore } from './commerce-support.js';
import { getFrom, offer, rootOf, settle, shopperWorld } from './shopper-support.js';
import {
  allChanges,
  feed,
  newChannel,
  servedFeedsDocument,
  tsvRows,
  type Change,
  type Channel,
} from './feeds-support.js';
import type { Json } from '../../shared-schema/contract/openapi-publish.js';
import type { Doc } from '../../shared-schema/ports/read-store.js';
import {
  FEED_CHANGES,
  FEED_OFFERS,
  FEED_STORES,
  type FeedChangeDoc,
  type FeedOfferDoc,
} from '../../shared-schema/read-models/feed.js';
import { changeTemplate, feedEntryOf, type FeedEntry } from '../../shared-schema/feeds/feed-offer.js';
import type { OfferStoreDoc } from '../../shared-schema/shopper/offer-facts.js';

const T0 = Date.parse('2026-06-01T12:00:00.000Z');
const TSV_1 = {
  title: 'Camiseta azul lisa',
  description: 'Algodão\tpenteado\nmacio',
  brand: 'Marca',
  gtin: '7891234567895',
  category: 'Roupas > Camisetas',
  price_cents: 123456,
  original_price_cents: 150000,
  condition: 'used',
  shipping: { type: 'fixed', cost_cents: 1234 },
  product_url: 'https://shop.test/p/tsv-1',
};

describe('channel feeds over HTTP', function () {
  let t: TestService;
  let hub: Partner;
  let other: Partner;
  let channel: Channel;

  before(async () => {
    t = await startTestService();
    ({ hub, other } = await shopperWorld(t, T0));
    channel = await newChannel(t, 'Vitrine');
  });
  after(() => t?.close());

  describe('channels', () => {
    it('creates a channel with a token shown once, lists it without the token, and revokes it', async () => {
      const made = await newChannel(t, 'Bot de mensagens');
      expect(Object.keys(made).sort()).to.deep.equal(['channel_id', 'name', 'token']);
      expect(made.channel_id).to.match(/^ch_[A-Za-z0-9_-]{22}$/);
      const listed = await t.admin.get('/channels');
      expect(listed.status).to.equal(200);
      expect(JSON.stringify(listed.body)).to.not.contain(made.token);
      const mine = (listed.body.channels as { channel_id: string }[]).find((c) => c.channel_id === made.channel_id);
      expect(mine).to.deep.include({ name: 'Bot de mensagens', revoked_at: null, clicks: 0 });

      expect((await feed(t, '/feeds/offers.tsv', made.token)).status).to.equal(200);
      const revoked = await t.admin.post(`/channels/${made.channel_id}/revoke`, {});
      expect(revoked.status, JSON.stringify(revoked.body)).to.equal(200);
      expect(revoked.body.revoked_at).to.be.a('string');
      const refused = await feed(t, '/feeds/offers.tsv', made.token);
      expect(refused.status).to.equal(401);
      expect(refused.headers['content-type']).to.contain('application/problem+json');
    });

    it('refuses a bad name with every invalid field, and an unknown channel with 404', async () => {
      expectInvalid(await t.admin.post('/channels', { name: 'x', extra: 1 }), ['extra:unknown_field', 'name:required']);
      expectProblem(await t.admin.post('/channels/ch_AAAAAAAAAAAAAAAAAAAAAA/revoke', {}), 404);
      expectProblem(await t.admin.post('/channels/nope/revoke', {}), 404);
    });

    it('ops channels create, list and revoke', async () => {
      const adminUrl = `http://127.0.0.1:${portOf(t.service.admin)}`;
      const token = t.service.adminToken;
      const made = await runOps(adminUrl, token, ['channels', 'create', '--name', 'Comparador', '--json']);
      expect(made.code, made.stderr).to.equal(0);
      expect(made.json.token).to.be.a('string');
      const listed = await runOps(adminUrl, token, ['channels', 'list']);
      expect(listed.code, listed.stderr).to.equal(0);
      expect(listed.stdout).to.contain(made.json.channel_id).and.not.contain(made.json.token);
      const revoked = await runOps(adminUrl, token, ['channels', 'revoke', made.json.channel_id, '--json']);
      expect(revoked.code, revoked.stderr).to.equal(0);
      expect(revoked.json.revoked_at).to.be.a('string');
    });

    it('answers 401 without a valid token, and brakes a channel at 60 requests a minute', async () => {
      for (const token of [null, 'fct_nope']) {
        const r = await feed(t, '/feeds/offers.tsv', token);
        expect(r.status).to.equal(401);
        expect(JSON.parse(r.text).status).to.equal(401);
      }
      // The feeds are the query side's whatever the method (the gateway, nginx in the topology): only GET and HEAD.
      const post = await feed(t, '/feeds/changes', channel.token, {}, 'POST');
      expect(post.status).to.equal(405);
      expect(post.headers.allow).to.equal('GET, HEAD');
      expect((await feed(t, '/feeds/nothing', channel.token)).status).to.equal(404);
      const braked = await newChannel(t, 'Apressado');
      t.clock.set(new Date(Math.ceil(t.clock.now().getTime() / 60_000) * 60_000));
      for (let i = 0; i < 60; i++) expect((await feed(t, '/feeds/changes?limit=1', braked.token)).status).to.equal(200);
      const refused = await feed(t, '/feeds/changes?limit=1', braked.token);
      expect(refused.status).to.equal(429);
      expect(Number(refused.headers['retry-after'])).to.be.within(1, 60);
      // Another channel is not braked by this one.
      expect((await feed(t, '/feeds/changes?limit=1', channel.token)).status).to.equal(200);
      t.clock.advance(60_000);
      expect((await feed(t, '/feeds/changes?limit=1', braked.token)).status).to.equal(200);
    });
  });

  describe('the full feed', () => {
    it('holds exactly the searchable offers, with the columns and formats of FEEDS.md', async () => {
      await offer(t, hub, 'Loja-A', 'tsv-1', TSV_1);
      await offer(t, other, 'Loja-C', 'tsv-2', { price_cents: 5, shipping: { type: 'free' } });
      await offer(t, hub, 'Loja-B', 'tsv-3', { available: false });
      await putProduct(t, hub, 'Loja-B', 'tsv-4', {}); // no cover check yet: pending
      // The test area: accepted, and seen by no channel.
      const test = await t.key(hub.partnerId, 'test');
      await registerStore(test, 'Loja-T');
      await putProduct(t, test, 'Loja-T', 'tsv-test', { title: 'Camiseta de teste' });
      await publish(t, test, 'test', 'Loja-T', 'tsv-test');
      expect((await test.api.get('/products/tsv-test')).body.state).to.equal('accepted');
      await settle(t);
      const r = await feed(t, '/feeds/offers.tsv', channel.token);
      expect(r.status, r.text).to.equal(200);
      expect(r.headers['content-type']).to.equal('text/tab-separated-values; charset=utf-8');
      expect(r.text.split('\n')[0]).to.equal(
        'id\ttitle\tdescription\tlink\timage_link\tavailability\tprice\tsale_price\tcondition\tbrand\tgtin\tproduct_type\tshipping',
      );
      const rows = tsvRows(r.text);
      const search = JSON.parse((await getFrom(`${rootOf(t)}/api/search?q=camiseta&limit=50`)).text) as {
        results: { offers: { sku: string }[]; alternatives: { sku: string }[] }[];
      };
      const searched = search.results.flatMap((p) => [...p.offers, ...p.alternatives].map((o) => o.sku)).sort();
      expect(searched).to.deep.equal(['tsv-1', 'tsv-2']);
      expect(rows).to.have.length(2);
      const one = rows.find((row) => row.title === 'Camiseta azul lisa')!;
      expect(one.id).to.match(/^[A-Za-z0-9_-]{1,50}$/);
      expect(one).to.deep.include({
        description: 'Algodão penteado macio',
        availability: 'in_stock',
        price: '1500.00 BRL',
        sale_price: '1234.56 BRL',
        condition: 'used',
        brand: 'Marca',
        gtin: '7891234567895',
        product_type: 'Roupas > Camisetas',
        shipping: 'BR:::12.34 BRL',
        image_link: 'https://cdn.shop.test/1.jpg',
      });
      expect(one.link).to.match(
        new RegExp(`/p/${hub.partnerId.toLowerCase()}/loja-a/tsv-1\\?canal=${channel.channel_id}$`),
      );
      const two = rows.find((row) => row.id !== one.id)!;
      expect(two).to.deep.include({ price: '0.05 BRL', sale_price: '', shipping: 'BR:::0.00 BRL', description: '' });
      expect(two).to.deep.include({ brand: '', gtin: '', product_type: '', condition: 'new' });
      const everyChange = JSON.stringify((await allChanges(t, channel.token, null)).changes);
      expect(everyChange).to.contain('tsv-1').and.not.contain('tsv-test').and.not.contain('Camiseta de teste');
      // The same ids in a second read.
      const again = tsvRows((await feed(t, '/feeds/offers.tsv', channel.token)).text);
      expect(again.map((x) => x.id).sort()).to.deep.equal(rows.map((x) => x.id).sort());
    });

    it('serves and judges again the documents of an earlier version (the entry itself, no line, no hash)', async () => {
      const kept = await feed(t, '/feeds/offers.tsv', channel.token);
      expect(tsvRows(kept.text)).to.have.length.greaterThan(0);
      const { cursor } = await allChanges(t, channel.token, null);
      // The documents as an earlier version wrote them: the entry held (the offer's with its store), no line.
      const stripped = await t.service.reads.transact(async (tx) => {
        let n = 0;
        for (const doc of await tx.find<FeedOfferDoc & Doc>(FEED_OFFERS, { where: { in_feed: true } })) {
          const { tsv: _tsv, feed_id: id, entry_hash: _hash, ...earlier } = doc;
          const store = await tx.get<OfferStoreDoc & Doc>(FEED_STORES, doc.store_key);
          const entry = feedEntryOf(doc, store!, doc.description);
          expect(entry.id).to.equal(id);
          await tx.put(FEED_OFFERS, { ...earlier, entry });
          n += 1;
        }
        return n;
      });
      expect(stripped).to.equal(tsvRows(kept.text).length);
      const made = await feed(t, '/feeds/offers.tsv', channel.token);
      expect(made.text).to.equal(kept.text);
      expect(made.headers.etag).to.equal(kept.headers.etag);
      // Judged again: the same write changes nothing a channel holds; another title is one upsert.
      await offer(t, hub, 'Loja-A', 'tsv-1', { ...TSV_1, title: 'Camiseta azul lisa' });
      await settle(t);
      expect((await allChanges(t, channel.token, cursor)).changes).to.deep.equal([]);
      await offer(t, hub, 'Loja-A', 'tsv-1', { ...TSV_1, title: 'Camiseta azul' });
      await settle(t);
      const moved = (await allChanges(t, channel.token, cursor)).changes;
      expect(moved.map((c) => (c.op === 'upsert' ? `upsert ${String(c.offer.title)}` : c.op))).to.deep.equal([
        'upsert Camiseta azul',
      ]);
      expect(tsvRows((await feed(t, '/feeds/offers.tsv', channel.token)).text).map((r) => r.title)).to.include(
        'Camiseta azul',
      );
    });

    it('is gzip when asked, carries an ETag answered by 304 until something changes, and a Feed-Cursor', async () => {
      const plain = await feed(t, '/feeds/offers.tsv', channel.token);
      const zipped = await feed(t, '/feeds/offers.tsv', channel.token, { 'Accept-Encoding': 'gzip' });
      expect(zipped.headers['content-encoding']).to.equal('gzip');
      expect(zipped.text).to.equal(plain.text);
      // The gzip header's XFL byte says how the deflate was made: 4 is zlib's fastest (level 1, the default).
      expect(zipped.body[8]).to.equal(4);
      const etag = plain.headers.etag!;
      expect(etag).to.match(/^"[^"]+"$/);
      expect(plain.headers['feed-cursor']).to.be.a('string');
      const same = await feed(t, '/feeds/offers.tsv', channel.token, { 'If-None-Match': etag });
      expect(same.status).to.equal(304);
      expect(same.body.length).to.equal(0);
      // Another channel's links differ: so does its ETag.
      const second = await newChannel(t, 'Outra vitrine');
      const theirs = await feed(t, '/feeds/offers.tsv', second.token, { 'If-None-Match': etag });
      expect(theirs.status).to.equal(200);
      expect(theirs.text).to.contain(`canal=${second.channel_id}`).and.not.contain(channel.channel_id);
      await offer(t, hub, 'Loja-A', 'tsv-5', { title: 'Camiseta nova' });
      await settle(t);
      const changed = await feed(t, '/feeds/offers.tsv', channel.token, { 'If-None-Match': etag });
      expect(changed.status).to.equal(200);
      expect(changed.text).to.contain('Camiseta nova');
      // 48 h with no write: the clock alone makes the feed change (and its ETag).
      const before = changed.headers.etag!;
      t.clock.advance(48 * HOUR + 1);
      const later = await feed(t, '/feeds/offers.tsv', channel.token, { 'If-None-Match': before });
      expect(later.status).to.equal(200);
      expect(tsvRows(later.text)).to.deep.equal([]);
    });
  });

  describe('the changes feed', () => {
    it('refuses a cursor it did not issue, a limit out of range and unknown parameters, all at once', async () => {
      const r = await feed(t, '/feeds/changes?cursor=abc.def&limit=0&x=1', channel.token);
      expect(r.status).to.equal(422);
      const errors = (JSON.parse(r.text) as { errors: FieldErr[] }).errors.map((e) => `${e.field}:${e.code}`).sort();
      expect(errors).to.deep.equal(['cursor:invalid', 'limit:out_of_range', 'x:unknown_field']);
      expect((await feed(t, '/feeds/changes?limit=1001', channel.token)).status).to.equal(422);
    });

    it('gives upserts and deletes in order, never a null next_cursor', async () => {
      const start = await allChanges(t, channel.token, null);
      expect(start.changes.length).to.be.greaterThan(0);
      const empty = await allChanges(t, channel.token, start.cursor);
      expect(empty.changes).to.deep.equal([]);
      expect(empty.cursor).to.be.a('string');
      await offer(t, hub, 'Loja-A', 'chg-1', { title: 'Caneca' });
      await settle(t);
      const upserted = await allChanges(t, channel.token, start.cursor, 1);
      expect(upserted.changes.map((c) => c.op)).to.deep.equal(['upsert']);
      const o = (upserted.changes[0] as { offer: Record<string, unknown> }).offer;
      expect(Object.keys(o).sort()).to.deep.equal(
        [
          'store',
          'sku',
          'title',
          'price_cents',
          'original_price_cents',
          'installments',
          'shipping',
          'condition',
          'condition_label',
          'rating',
          'image_url',
          'offer_url',
          'buy_url',
          'updated_at',
          'description',
          'brand',
          'gtin',
          'category',
          'id',
        ].sort(),
      );
      expect(o.buy_url).to.match(new RegExp(`/r/.*/chg-1\\?canal=${channel.channel_id}$`));
      expect(await hub.api.delete('/products/chg-1')).to.include({ status: 204 });
      await settle(t);
      const deleted = await allChanges(t, channel.token, upserted.cursor);
      expect(deleted.changes).to.deep.equal([{ op: 'delete', id: o.id }]);

      // Every answer is what the channels' own document says it is.
      const check = await servedFeedsDocument(t);
      const page = await feed(t, `/feeds/changes?limit=3`, channel.token);
      expect(await check('FeedChangesPage', JSON.parse(page.text) as Json)).to.equal('');
      for (const c of [...upserted.changes, ...deleted.changes])
        expect(await check('FeedChange', c as Json)).to.equal('');
      expect(await check('FeedChange', { op: 'delete', id: 'x', more: 1 })).to.not.equal('');
    });

    it('answers the same bytes for changes kept before their text was, and after a rebuild of the feed', async () => {
      await offer(t, hub, 'Loja-A', 'chg-2', { title: 'Caneca "grande" \\ azul', description: 'Ç\u2028💡\n"x"' });
      await settle(t);
      const pages = async (): Promise<string[]> => {
        const texts: string[] = [];
        for (let cursor: string | null = null; ;) {
          const q = new URLSearchParams({ limit: '3', ...(cursor !== null ? { cursor } : {}) });
          const r = await feed(t, `/feeds/changes?${q.toString()}`, channel.token);
          expect(r.status, r.text).to.equal(200);
          expect(r.headers['content-type']).to.equal('application/json; charset=utf-8');
          texts.push(r.text);
          const page = JSON.parse(r.text) as { changes: Change[]; next_cursor: string };
          if (page.changes.length < 3) return texts;
          cursor = page.next_cursor;
        }
      };
      const kept = await pages();
      expect(kept.join('')).to.contain('chg-2').and.contain('"op":"delete"');
      // In key order: a rebuild writes the rows again, and a read with no order gives them in storage order.
      const changesNow = async () =>
        t.service.reads.find<FeedChangeDoc & Doc>(FEED_CHANGES, { orderBy: [{ field: '_id' }] });
      const written = await changesNow();
      expect(written.every((c) => typeof c.json === 'string')).to.equal(true);
      // Changes as an earlier version wrote them: the change itself, no text. A delete holds its id; an upsert is
      // given its entry where the offer still holds it (an offer's current entry makes the same text). Every other
      // delete, so that pages mix both.
      await t.service.reads.transact(async (tx) => {
        const entries = new Map<string, FeedEntry>();
        for (const doc of await tx.find<FeedOfferDoc & Doc>(FEED_OFFERS, { where: { in_feed: true } })) {
          const store = await tx.get<OfferStoreDoc & Doc>(FEED_STORES, doc.store_key);
          const entry = feedEntryOf(doc, store!, doc.description);
          entries.set(changeTemplate({ op: 'upsert', entry }), entry);
        }
        for (const [i, c] of written.entries()) {
          if (c.op === 'delete' && i % 2 === 0)
            await tx.put(FEED_CHANGES, { _id: c._id, op: 'delete', id: c.id, at: c.at });
          const entry = c.op === 'upsert' && c.json !== undefined ? entries.get(c.json) : undefined;
          if (entry) await tx.put(FEED_CHANGES, { _id: c._id, op: 'upsert', entry, at: c.at });
        }
      });
      const earlier = (await changesNow()).filter((c) => c.json === undefined);
      expect(earlier.map((c) => c.op)).to.include.members(['upsert', 'delete']);
      expect(await pages()).to.deep.equal(kept);
      // A rebuild writes every change again from the log, with its text: the documents and the bytes of before.
      await rebuildProjection(t, 'feed');
      expect(await changesNow()).to.deep.equal(written);
      expect(await pages()).to.deep.equal(kept);
    });
  });

  describe('changes the service makes on its own', () => {
    const clock = async (ms: number) => expect((await t.admin.post('/clock', { advance_ms: ms })).status).to.equal(200);
    const ops = (changes: Change[]) =>
      changes.map((c) => (c.op === 'delete' ? `delete ${c.id}` : `upsert ${c.offer.id}`));

    it('deletes an offer 48 h after its last write, with no request', async () => {
      await offer(t, other, 'Loja-C', 'lapse-1', { title: 'Luminária' });
      await settle(t);
      const { cursor } = await allChanges(t, channel.token, null);
      const row = tsvRows((await feed(t, '/feeds/offers.tsv', channel.token)).text).find(
        (r) => r.title === 'Luminária',
      )!;
      await clock(48 * HOUR - 1); // other offers, older, lapse now; not this one
      expect(ops((await allChanges(t, channel.token, cursor)).changes)).to.not.include(`delete ${row.id}`);
      await clock(2);
      const after = await allChanges(t, channel.token, cursor);
      expect(ops(after.changes)).to.include(`delete ${row.id}`);
      expect(tsvRows((await feed(t, '/feeds/offers.tsv', channel.token)).text).map((r) => r.id)).to.not.include(row.id);
    });

    it('a suspension deletes every offer of the store, a reinstatement brings them back, a domain approval adds its offers', async () => {
      await offer(t, hub, 'Loja-B', 'sus-1', { title: 'Cadeira' });
      await offer(t, hub, 'Loja-B', 'sus-2', { title: 'Mesa de jantar' });
      await settle(t);
      const start = await allChanges(t, channel.token, null);
      const rows = tsvRows((await feed(t, '/feeds/offers.tsv', channel.token)).text).filter((r) =>
        ['Cadeira', 'Mesa de jantar'].includes(r.title),
      );
      expect(rows).to.have.length(2);
      const suspend = await t.admin.post(`/partners/${hub.partnerId}/live/stores/Loja-B/suspend`, {});
      expect(suspend.status, JSON.stringify(suspend.body)).to.equal(200);
      const suspended = await allChanges(t, channel.token, start.cursor);
      expect(ops(suspended.changes).sort()).to.deep.equal(rows.map((r) => `delete ${r.id}`).sort());
      expect((await t.admin.post(`/partners/${hub.partnerId}/live/stores/Loja-B/reinstate`, {})).status).to.equal(200);
      const back = await allChanges(t, channel.token, suspended.cursor);
      expect(ops(back.changes).sort()).to.deep.equal(rows.map((r) => `upsert ${r.id}`).sort());

      // A domain declared later: its offers enter the feed once the operator approves it.
      const store = await hub.api.get('/stores/Loja-B');
      expect(store.status).to.equal(200);
      const { cnpj, name, website_url, image_hosts } = store.body as Record<string, unknown>;
      const replaced = await hub.api.put('/stores/Loja-B', {
        cnpj,
        name,
        website_url,
        image_hosts,
        domains: ['shop.test', 'loja-b.test'],
      });
      expect(replaced.status, JSON.stringify(replaced.body)).to.equal(200);
      await offer(t, hub, 'Loja-B', 'dom-1', { title: 'Sofá-cama', product_url: 'https://loja-b.test/p/dom-1' });
      await settle(t);
      expect((await allChanges(t, channel.token, back.cursor)).changes).to.deep.equal([]);
      const approved = await t.admin.post(
        `/partners/${hub.partnerId}/live/stores/Loja-B/domains/loja-b.test/approve`,
        {},
      );
      expect(approved.status, JSON.stringify(approved.body)).to.equal(200);
      const added = await allChanges(t, channel.token, back.cursor);
      expect(added.changes.map((c) => (c.op === 'upsert' ? c.offer.title : c.op))).to.deep.equal(['Sofá-cama']);
    });
  });

  describe('clicks per channel', () => {
    it('counts a click through a channel link for that channel; the partner sees the same PartnerClick', async () => {
      const shop = await newChannel(t, 'Comparador de preços');
      await offer(t, other, 'Loja-D', 'clk-1', {
        title: 'Garrafa térmica',
        product_url: 'https://shop.test/p/clk-1?x=1',
      });
      await settle(t);
      const row = tsvRows((await feed(t, '/feeds/offers.tsv', shop.token)).text).find(
        (r) => r.title === 'Garrafa térmica',
      )!;
      const page = await getFrom(row.link.replace(/^https?:\/\/[^/]+/, rootOf(t)), '127.0.0.41', {
        Accept: 'application/json',
      });
      expect(page.status, page.text).to.equal(200);
      const buy = (JSON.parse(page.text) as { buy_url: string }).buy_url;
      expect(buy).to.match(new RegExp(`/r/${other.partnerId.toLowerCase()}/loja-d/clk-1\\?canal=${shop.channel_id}$`));
      const html = await getFrom(row.link.replace(/^https?:\/\/[^/]+/, rootOf(t)), '127.0.0.41');
      expect(html.text).to.contain(`/r/${other.partnerId.toLowerCase()}/loja-d/clk-1?canal=${shop.channel_id}`);

      const before = (await other.api.get('/clicks')).body.data as unknown[];
      const go = await getFrom(buy.replace(/^https?:\/\/[^/]+/, rootOf(t)), '127.0.0.42');
      expect(go.status).to.equal(302);
      const location = new URL(go.headers.get('location')!);
      expect([...location.searchParams.keys()].sort()).to.deep.equal(['svc_click', 'x']);
      // Not a valid channel, a revoked one, a repeated canal: the click is recorded without a channel.
      const gone = await newChannel(t, 'Antigo');
      expect((await t.admin.post(`/channels/${gone.channel_id}/revoke`, {})).status).to.equal(200);
      const plain = buy.replace(/^https?:\/\/[^/]+/, rootOf(t)).split('?')[0];
      for (const q of [
        '?canal=nope',
        `?canal=${gone.channel_id}`,
        `?canal=${shop.channel_id}&canal=${shop.channel_id}`,
      ])
        expect((await getFrom(plain + q, '127.0.0.42')).status).to.equal(302);
      await settle(t);
      t.clock.advance(1); // the default window [now − 30 days, now) leaves out a click at exactly now
      const clicks = (await other.api.get('/clicks')).body.data as Record<string, unknown>[];
      expect(clicks.length).to.equal(before.length + 4);
      for (const c of clicks)
        expect(Object.keys(c).sort()).to.deep.equal(['click_id', 'occurred_at', 'price_cents', 'sku', 'store_id']);
      const listed = (await t.admin.get('/channels')).body.channels as { channel_id: string; clicks: number }[];
      expect(listed.find((c) => c.channel_id === shop.channel_id)?.clicks).to.equal(1);
      expect(listed.find((c) => c.channel_id === gone.channel_id)?.clicks).to.equal(0);
      const ops = await runOps(`http://127.0.0.1:${portOf(t.service.admin)}`, t.service.adminToken, [
        'channels',
        'list',
        '--json',
      ]);
      expect(
        (ops.json.channels as { channel_id: string; clicks: number }[]).find((c) => c.channel_id === shop.channel_id)
          ?.clicks,
      ).to.equal(1);
    });
  });

  describe('the retention of the changes', () => {
    // Last in this file: it moves the clock by a month.
    it('drops the changes older than 30 days by the clock; a cursor from before them is 410, a new snapshot goes on', async () => {
      const reader = await newChannel(t, 'Retenção');
      const clock = async (ms: number) =>
        expect((await t.admin.post('/clock', { advance_ms: ms })).status).to.equal(200);
      await offer(t, hub, 'Loja-A', 'ret-1', { title: 'Abajur' });
      await settle(t);
      const first = await feed(t, '/feeds/changes?limit=1', reader.token);
      expect(first.status).to.equal(200);
      const early = (JSON.parse(first.text) as { next_cursor: string }).next_cursor;
      const snapshot = await feed(t, '/feeds/offers.tsv', reader.token);
      const kept = snapshot.headers['feed-cursor'] as string;
      expect(tsvRows(snapshot.text).map((r) => r.title)).to.include('Abajur');

      await clock(60_000); // the oldest changes are days old, not 30: nothing dropped
      expect((await feed(t, `/feeds/changes?cursor=${encodeURIComponent(early)}`, reader.token)).status).to.equal(200);
      await clock(30 * 24 * HOUR);
      const gone = await feed(t, `/feeds/changes?cursor=${encodeURIComponent(early)}`, reader.token);
      expect(gone.status, gone.text).to.equal(410);
      expect(gone.headers['content-type']).to.contain('application/problem+json');
      const problem = JSON.parse(gone.text) as { type: string; status: number; errors: FieldErr[] };
      expect(problem.type).to.match(/\/problemas\/410$/);
      expect(problem.errors.map((e) => `${e.field}:${e.code}`)).to.deep.equal(['cursor:expired']);
      // From the beginning: the first changes are gone too.
      expect((await feed(t, '/feeds/changes', reader.token)).status).to.equal(410);
      // The cursor of the snapshot taken before was at the newest change then: every change after it is kept (the
      // lapses of its offers), and applying them empties the feed, as the feed now is.
      const since = await allChanges(t, reader.token, kept);
      const held = new Set(tsvRows(snapshot.text).map((r) => r.id));
      for (const c of since.changes) {
        if (c.op === 'delete') held.delete(c.id);
        else held.add(c.offer.id);
      }
      const now = await feed(t, '/feeds/offers.tsv', reader.token);
      expect([...held].sort()).to.deep.equal(
        tsvRows(now.text)
          .map((r) => r.id)
          .sort(),
      );
      // A new snapshot's cursor is followed, even when every change was dropped.
      await clock(31 * 24 * HOUR);
      const later = await feed(t, '/feeds/offers.tsv', reader.token);
      const after = await allChanges(t, reader.token, later.headers['feed-cursor'] as string);
      expect(after.changes).to.deep.equal([]);
      // The document says so.
      const check = await servedFeedsDocument(t);
      expect(await check('Problem', problem)).to.equal('');
    });
  });
});

describe('channel feeds: the gzip level a deployment sets', function () {
  let t: TestService;

  before(async () => {
    t = await startTestService({ FEED_GZIP_LEVEL: '9' });
    const { hub } = await shopperWorld(t, T0);
    for (let i = 0; i < 20; i++) await offer(t, hub, 'Loja-A', `gz-${i}`, { title: `Camiseta ${i}` });
    await settle(t);
  });
  after(() => t?.close());

  it('compresses the full feed at FEED_GZIP_LEVEL, the same lines as the plain feed', async () => {
    const channel = await newChannel(t, 'Vitrine');
    const plain = await feed(t, '/feeds/offers.tsv', channel.token);
    const zipped = await feed(t, '/feeds/offers.tsv', channel.token, { 'Accept-Encoding': 'gzip' });
    expect(zipped.headers['content-encoding']).to.equal('gzip');
    expect(zipped.text).to.equal(plain.text);
    expect(tsvRows(plain.text).length).to.equal(20);
    // XFL 2: zlib's strongest (level 9).
    expect(zipped.body[8]).to.equal(2);
  });
});
