/**
 * The sentences of FEEDS.md the first feed suites left unasserted (docs/spec-coverage/feeds.md maps every sentence to
 * its test): what the full feed holds beyond the search's answer (rule 5's outliers, every offer of one gtin), the
 * offer's exact JSON shape and its nulls, no commission, the TSV's CR, `refurbished` and shipping to be calculated,
 * the ids across channels and partners, the changes a field change, a rejection, an unavailability and a dropped
 * domain make, the `limit` default and maximum, the token on the changes feed, and a streamed body.
 */
import { expect } from 'chai';
import { portOf } from '../../infra/http/gateway.js';
import { storeBody, startTestService, type Partner, type TestService } from '../support/service.js';
import { streams } from '../../shared-schema/domain/streams.js';
import { HOUR, registerStore } from './commerce-support.js';
import { until } from '../support/deadline.js';
import { getFrom, offer, rootOf, settle, shopperWorld } from './shopper-support.js';
import { allChanges, feed, newChannel, tsvRows, type Change, type Channel } from './feeds-support.js';

const T0 = Date.parse('2026-08-03T09:00:00.000Z');

describe('channel feeds: the rules of FEEDS.md sentence by sentence', function () {
  let t: TestService;
  let hub: Partner;
  let other: Partner;
  let channel: Channel;

  before(async () => {
    t = await startTestService();
    ({ hub, other } = await shopperWorld(t, T0));
    channel = await newChannel(t, 'Regras');
  });
  after(() => t?.close());
  // Each test its own minute of the brake (60 feed requests a minute per channel); far from the 48 h rule.
  beforeEach(() => t.clock.advance(60_000));

  const rowsOf = async (c: Channel = channel) => tsvRows((await feed(t, '/feeds/offers.tsv', c.token)).text);
  const ops = (changes: Change[]) =>
    changes.map((c) => (c.op === 'delete' ? `delete ${c.id}` : `upsert ${c.offer.id}`));
  const cursorNow = async () => (await allChanges(t, channel.token, null)).cursor;

  describe('what a feed holds', () => {
    it('every searchable offer, rule 5 and grouping aside: an outlier left out of search and each offer of one gtin are in it', async () => {
      const gtin = '7890000000017';
      await offer(t, hub, 'Loja-A', 'r5-a', { title: 'Panela de pressão', gtin, price_cents: 10000 });
      await offer(t, hub, 'Loja-B', 'r5-b', { title: 'Panela de pressão', gtin, price_cents: 10400 });
      await offer(t, other, 'Loja-C', 'r5-c', { title: 'Panela de pressão', gtin, price_cents: 4000 }); // < half
      await settle(t);
      const search = JSON.parse((await getFrom(`${rootOf(t)}/api/search?q=panela&limit=50`, '127.0.0.61')).text) as {
        results: { offers: { sku: string }[] }[];
      };
      const searched = search.results.flatMap((p) => p.offers.map((o) => o.sku)).sort();
      expect(searched, 'rule 5 leaves the outlier out of the search answer').to.deep.equal(['r5-a', 'r5-b']);
      const rows = (await rowsOf()).filter((r) => r.title === 'Panela de pressão');
      expect(rows.map((r) => r.price).sort()).to.deep.equal(['100.00 BRL', '104.00 BRL', '40.00 BRL']);
      expect(new Set(rows.map((r) => r.id)).size).to.equal(3);
    });

    it('none that is rejected, removed, unavailable, of a suspended store or of an unapproved domain; a stock of 0 with available true stays in', async () => {
      await offer(t, hub, 'Loja-A', 'out-rejected', { title: 'Fora rejeitada' });
      const stream = streams.product({ partnerId: hub.partnerId, env: 'live' }, 'out-rejected');
      const now = t.clock.now().toISOString();
      await t.service.events.appendToStream(stream, [
        {
          type: 'CoverChecked',
          data: {
            sku: 'out-rejected',
            url: 'https://cdn.shop.test/1.jpg',
            ok: false,
            reasons: [{ code: 'image_too_small', field: 'image_urls', message: 'too small' }],
            checked_at: now,
          },
          metadata: { recorded_at: now, actor: 'test' },
        },
      ]);
      await offer(t, hub, 'Loja-A', 'out-removed', { title: 'Fora removida' });
      expect((await hub.api.delete('/products/out-removed')).status).to.equal(204);
      await offer(t, hub, 'Loja-A', 'out-unavailable', { title: 'Fora indisponível', available: false });
      // A domain declared after the store's approval: not approved until the operator approves it.
      const storeF = storeBody({ name: 'Loja F', domains: ['shop.test'] });
      expect((await other.api.put('/stores/Loja-F', storeF)).status).to.equal(200);
      expect((await t.approveStore(other, 'Loja-F', 'live')).status).to.equal(200);
      const declared = await other.api.put('/stores/Loja-F', { ...storeF, domains: ['shop.test', 'fora.test'] });
      expect(declared.status, JSON.stringify(declared.body)).to.equal(200);
      await offer(t, other, 'Loja-F', 'out-domain', { title: 'Fora domínio', product_url: 'https://fora.test/x' });
      await offer(t, other, 'Loja-F', 'out-suspended', { title: 'Fora suspensa' });
      await offer(t, hub, 'Loja-A', 'in-stock-0', { title: 'Dentro sem estoque', stock_quantity: 0 });
      await settle(t);
      expect((await rowsOf()).map((r) => r.title).filter((x) => x.startsWith('Fora'))).to.deep.equal(['Fora suspensa']);
      const suspend = await t.admin.post(`/partners/${other.partnerId}/live/stores/Loja-F/suspend`, {});
      expect(suspend.status, JSON.stringify(suspend.body)).to.equal(200);
      const titles = (await rowsOf()).map((r) => r.title);
      expect(titles.filter((x) => x.startsWith('Fora'))).to.deep.equal([]);
      expect(titles).to.include('Dentro sem estoque');
    });

    it('each offer once, with the same id in every feed and every read, and never the id of another offer', async () => {
      // Two partners' stores of the same store_id selling the same SKU are two offers.
      await registerStore(other, 'Loja-A', { name: 'Loja A da outra' });
      expect((await t.approveStore(other, 'Loja-A', 'live')).status).to.equal(200);
      const start = await cursorNow();
      await offer(t, hub, 'Loja-A', 'twin', { title: 'Gêmeo' });
      await offer(t, other, 'Loja-A', 'twin', { title: 'Gêmeo' });
      await settle(t);
      const second = await newChannel(t, 'Segunda');
      const mine = (await rowsOf()).filter((r) => r.title === 'Gêmeo');
      const theirs = (await rowsOf(second)).filter((r) => r.title === 'Gêmeo');
      expect(mine).to.have.length(2);
      expect(mine[0].id).to.not.equal(mine[1].id);
      expect(theirs.map((r) => r.id).sort()).to.deep.equal(mine.map((r) => r.id).sort());
      const changed = (await allChanges(t, channel.token, start)).changes;
      expect(ops(changed).sort()).to.deep.equal(mine.map((r) => `upsert ${r.id}`).sort());
      const all = await rowsOf();
      expect(new Set(all.map((r) => r.id)).size, 'each offer once').to.equal(all.length);
    });
  });

  describe('an offer as a channel receives it', () => {
    it('carries exactly the fields listed, null when not sent, and never its commission', async () => {
      const start = await cursorNow();
      await offer(t, other, 'Loja-C', 'shape-1', {
        title: 'Cafeteira italiana',
        commission: { type: 'percentage', rate: 17.77 },
      });
      await settle(t);
      const [change] = (await allChanges(t, channel.token, start)).changes;
      expect(change.op).to.equal('upsert');
      const o = (change as { offer: Record<string, unknown> }).offer;
      expect(o).to.deep.include({ description: null, brand: null, gtin: null, category: null });
      expect(Object.keys(o.store as object).sort()).to.deep.equal(['name', 'store_id']);
      expect(Object.keys(o.shipping as object).sort()).to.deep.equal([
        'cost_cents',
        'delivery_days_max',
        'delivery_days_min',
        'kind',
      ]);
      const page = await feed(t, `/feeds/changes?cursor=${encodeURIComponent(start)}`, channel.token);
      expect(Object.keys(JSON.parse(page.text) as object).sort()).to.deep.equal(['changes', 'next_cursor']);
      const tsv = (await feed(t, '/feeds/offers.tsv', channel.token)).text;
      for (const text of [page.text, tsv]) expect(text).to.not.match(/commission|17\.77|1777/);
    });
  });

  describe('the full feed as text', () => {
    // A CR cannot come in through /v1 (a control character, 422): tests/unit/feeds-tsv.unit.spec.ts writes one.
    it('UTF-8; a line break inside a value is a space; refurbished; shipping empty when to be calculated', async () => {
      await offer(t, other, 'Loja-D', 'txt-1', {
        title: 'Café em grão',
        description: 'Torra\nmédia',
        condition: 'refurbished',
      });
      await settle(t);
      const r = await feed(t, '/feeds/offers.tsv', channel.token);
      expect(r.body.includes(Buffer.from('Café em grão', 'utf8')), 'UTF-8 bytes').to.equal(true);
      const row = tsvRows(r.text).find((x) => x.title === 'Café em grão');
      expect(row, r.text).to.not.equal(undefined);
      expect(row).to.deep.include({ description: 'Torra média', condition: 'refurbished', shipping: '' });
    });

    it('is streamed: no Content-Length, sent in chunks', async () => {
      const r = await feed(t, '/feeds/offers.tsv', channel.token);
      expect(r.status).to.equal(200);
      expect(r.headers['content-length']).to.equal(undefined);
      expect(r.headers['transfer-encoding']).to.equal('chunked');
    });

    it('Feed-Cursor: the changes after it are exactly what happened after the snapshot', async () => {
      // Changes before the snapshot: a cursor from the beginning would give them again.
      await offer(t, hub, 'Loja-B', 'before-snapshot', { title: 'Antes do retrato' });
      await settle(t);
      const snapshot = await feed(t, '/feeds/offers.tsv', channel.token);
      expect(tsvRows(snapshot.text).map((r) => r.title)).to.include('Antes do retrato');
      const at = snapshot.headers['feed-cursor'] as string;
      expect((await allChanges(t, channel.token, at)).changes).to.deep.equal([]);
      await offer(t, hub, 'Loja-B', 'after-snapshot', { title: 'Depois do retrato' });
      await settle(t);
      const after = (await allChanges(t, channel.token, at)).changes;
      expect(after.map((c) => (c.op === 'upsert' ? c.offer.title : c.op))).to.deep.equal(['Depois do retrato']);
    });
  });

  describe('the changes feed', () => {
    it('an upsert when a field changes; a delete when rejected, made unavailable or its domain dropped', async () => {
      const storeG = storeBody({ name: 'Loja G', domains: ['shop.test', 'gira.test'] });
      expect((await hub.api.put('/stores/Loja-G', storeG)).status).to.equal(200);
      expect((await t.approveStore(hub, 'Loja-G', 'live')).status).to.equal(200);
      const approve = await t.admin.post(`/partners/${hub.partnerId}/live/stores/Loja-G/domains/gira.test/approve`, {});
      expect(approve.status, JSON.stringify(approve.body)).to.equal(200);
      await offer(t, hub, 'Loja-G', 'chg-price', { title: 'Muda preço', price_cents: 5000 });
      await offer(t, hub, 'Loja-G', 'chg-off', { title: 'Fica indisponível' });
      await offer(t, hub, 'Loja-G', 'chg-reject', { title: 'Será rejeitada' });
      await offer(t, hub, 'Loja-G', 'chg-domain', { title: 'Perde domínio', product_url: 'https://gira.test/x' });
      await settle(t);
      const ids = new Map((await rowsOf()).map((r) => [r.title, r.id]));
      const start = await cursorNow();

      const patched = await hub.api.patch('/products/chg-price', {
        price_cents: 4500,
        updated_at: t.clock.now().toISOString(),
      });
      expect(patched.status, JSON.stringify(patched.body)).to.equal(200);
      await settle(t);
      const priced = await allChanges(t, channel.token, start);
      expect(priced.changes).to.have.length(1);
      expect(priced.changes[0]).to.deep.include({ op: 'upsert' });
      expect((priced.changes[0] as { offer: Record<string, unknown> }).offer).to.deep.include({
        id: ids.get('Muda preço'),
        price_cents: 4500,
      });

      const off = await hub.api.patch('/products/chg-off', {
        available: false,
        updated_at: t.clock.now().toISOString(),
      });
      expect(off.status, JSON.stringify(off.body)).to.equal(200);
      const now = t.clock.now().toISOString();
      await t.service.events.appendToStream(streams.product({ partnerId: hub.partnerId, env: 'live' }, 'chg-reject'), [
        {
          type: 'CoverChecked',
          data: {
            sku: 'chg-reject',
            url: 'https://cdn.shop.test/1.jpg',
            ok: false,
            reasons: [{ code: 'image_too_small', field: 'image_urls', message: 'too small' }],
            checked_at: now,
          },
          metadata: { recorded_at: now, actor: 'test' },
        },
      ]);
      await settle(t);
      const dropped = await hub.api.put('/stores/Loja-G', { ...storeG, domains: ['shop.test'] });
      expect(dropped.status, JSON.stringify(dropped.body)).to.equal(200);
      await settle(t);
      const gone = await allChanges(t, channel.token, priced.cursor);
      expect(ops(gone.changes)).to.deep.equal([
        `delete ${ids.get('Fica indisponível')}`,
        `delete ${ids.get('Será rejeitada')}`,
        `delete ${ids.get('Perde domínio')}`,
      ]);
      expect((await rowsOf()).map((r) => r.title))
        .to.include('Muda preço')
        .and.not.include('Perde domínio');
    });

    it("a store's new name: its offers leave with the store's review (DECISIONS) and come back with the name", async () => {
      const storeH = storeBody({ name: 'Loja H', domains: ['shop.test'] });
      expect((await other.api.put('/stores/Loja-H', storeH)).status).to.equal(200);
      expect((await t.approveStore(other, 'Loja-H', 'live')).status).to.equal(200);
      await offer(t, other, 'Loja-H', 'name-1', { title: 'Nome um' });
      await offer(t, other, 'Loja-H', 'name-2', { title: 'Nome dois' });
      await settle(t);
      const ids = (await rowsOf()).filter((r) => r.title.startsWith('Nome ')).map((r) => r.id);
      expect(ids).to.have.length(2);
      const start = await cursorNow();
      const renamed = await other.api.put('/stores/Loja-H', { ...storeH, name: 'Loja H renomeada' });
      expect(renamed.status, JSON.stringify(renamed.body)).to.equal(200);
      await settle(t);
      const left = await allChanges(t, channel.token, start);
      expect(ops(left.changes).sort()).to.deep.equal(ids.map((id) => `delete ${id}`).sort());
      expect((await t.approveStore(other, 'Loja-H', 'live')).status).to.equal(200);
      await settle(t);
      const back = (await allChanges(t, channel.token, left.cursor)).changes;
      const named = back.map((c) =>
        c.op === 'upsert' ? `${c.offer.id} @ ${(c.offer.store as { name: string }).name}` : c.op,
      );
      expect(named.sort()).to.deep.equal(ids.map((id) => `${id} @ Loja H renomeada`).sort());
    });

    it('limit: 500 changes when not sent, up to 1000 when asked', async () => {
      for (let i = 0; i < 40; i++) await offer(t, other, 'Loja-D', `lim-${i}`, { title: `Limite ${i}` });
      await settle(t);
      const start = await cursorNow();
      // 40 deletes and 40 upserts a cycle: 1120 changes after `start`.
      for (let i = 0; i < 14; i++) {
        expect((await t.admin.post(`/partners/${other.partnerId}/live/stores/Loja-D/suspend`, {})).status).to.equal(
          200,
        );
        expect((await t.admin.post(`/partners/${other.partnerId}/live/stores/Loja-D/reinstate`, {})).status).to.equal(
          200,
        );
      }
      await settle(t);
      const q = `cursor=${encodeURIComponent(start)}`;
      const count = async (extra: string) => {
        const r = await feed(t, `/feeds/changes?${q}${extra}`, channel.token);
        expect(r.status, r.text).to.equal(200);
        return (JSON.parse(r.text) as { changes: unknown[] }).changes.length;
      };
      expect(await count('')).to.equal(500);
      expect(await count('&limit=1000')).to.equal(1000);
      expect(await count('&limit=1')).to.equal(1);
    });
  });

  describe('cursors and other doors', () => {
    it('refuses a cursor the service issued for another list (422 Problem on cursor)', async () => {
      await offer(t, hub, 'Loja-A', 'cur-1', { title: 'Cursor um' });
      await offer(t, hub, 'Loja-A', 'cur-2', { title: 'Cursor dois' });
      const listed = await hub.api.get('/products?limit=1');
      const foreign = listed.body.next_cursor as string;
      expect(foreign).to.be.a('string');
      const r = await feed(t, `/feeds/changes?cursor=${encodeURIComponent(foreign)}`, channel.token);
      expect(r.status, r.text).to.equal(422);
      expect(r.headers['content-type']).to.contain('application/problem+json');
      const errors = (JSON.parse(r.text) as { errors: { field: string; code: string }[] }).errors;
      expect(errors.map((e) => `${e.field}:${e.code}`)).to.deep.equal(['cursor:invalid']);
    });

    it("a channel's token opens neither the operator's channel list nor a partner's clicks", async () => {
      const admin = `http://127.0.0.1:${portOf(t.service.admin)}/admin/v1/channels`;
      const listed = await fetch(admin, { headers: { Authorization: `Bearer ${channel.token}` } });
      expect(listed.status).to.equal(401);
      const clicks = await getFrom(`${t.api}/clicks`, '127.0.0.62', { Authorization: `Bearer ${channel.token}` });
      expect(clicks.status).to.equal(401);
    });
  });

  describe('tokens', () => {
    it('the changes feed answers 401 Problem without a valid token too; a revocation answers no token; no channel sees another channel', async () => {
      const gone = await newChannel(t, 'Revogado');
      const revoked = await t.admin.post(`/channels/${gone.channel_id}/revoke`, {});
      expect(revoked.status).to.equal(200);
      expect(JSON.stringify(revoked.body)).to.not.contain(gone.token);
      for (const token of [null, 'fct_nope', gone.token]) {
        const r = await feed(t, '/feeds/changes', token);
        expect(r.status, String(token)).to.equal(401);
        expect(r.headers['content-type']).to.contain('application/problem+json');
        expect((JSON.parse(r.text) as { status: number }).status).to.equal(401);
      }
      const spy = await newChannel(t, 'Curioso');
      const seen =
        (await feed(t, '/feeds/offers.tsv', spy.token)).text + (await feed(t, '/feeds/changes', spy.token)).text;
      expect(seen).to.contain(`canal=${spy.channel_id}`);
      for (const secret of [channel.token, channel.channel_id, gone.token]) expect(seen).to.not.contain(secret);
    });
  });
});

describe('channel feeds: the 48 h delete needs no request', function () {
  let t: TestService;
  before(async () => {
    // A scan every 50 ms of real time: the lapse comes from the timer, not from a request moving the clock.
    t = await startTestService({ FRESHNESS_SCAN_MS: '50' });
  });
  after(() => t?.close());

  it('the clock alone, with no request, deletes an offer 48 h after its last write', async () => {
    const { other } = await shopperWorld(t, T0);
    const channel = await newChannel(t, 'Relógio');
    await offer(t, other, 'Loja-C', 'tick-1', { title: 'Relógio de parede' });
    await settle(t);
    const { cursor } = await allChanges(t, channel.token, null);
    const [row] = tsvRows((await feed(t, '/feeds/offers.tsv', channel.token)).text);
    expect(row.title).to.equal('Relógio de parede');
    // The injected clock moved in-process: no request reaches the service until the lapse is in the log.
    t.clock.advance(48 * HOUR + 1);
    const stream = streams.product({ partnerId: other.partnerId, env: 'live' }, 'tick-1');
    await until(
      async () => (await t.service.events.readStream(stream)).some((e) => e.type === 'ProductFreshnessLapsed'),
      30_000,
      'the lapse recorded by the periodic scan',
      20,
    );
    await settle(t);
    expect((await allChanges(t, channel.token, cursor)).changes).to.deep.equal([{ op: 'delete', id: row.id }]);
  });
});
