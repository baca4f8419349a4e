import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { expect } from 'chai';
import { fieldOfColumn } from '../../infra/adapters/sqlite/read-store-sql.js';
import { PRODUCT_COLLECTIONS, PRODUCTS } from '../../shared-schema/read-models/products.js';
import { canonical } from '../../projections/verify.js';
import type { Doc } from '../../shared-schema/ports/read-store.js';
import type { ProjectionStatus } from '../../infra/ops/projection-status.js';
import { productBody, startTestService, storeBody, type Partner, type TestService } from '../support/service.js';
import { until } from '../support/deadline.js';

const SKUS = Array.from({ length: 40 }, (_, i) => `sku-r${i}`);
/** A 100 % commission makes `expected_commission_cents` show the price (the product view has no price field). */
const FULL = { type: 'percentage', rate: 100 };
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('projection rebuild without downtime', function () {
  this.timeout(30_000);
  let t: TestService;
  let hub: Partner;
  let reader: Partner;

  /** While set, a rebuild that caught up waits here before it switches (the test holds it in flight). */
  let hold: { reached: boolean; release: () => void; released: Promise<void> } | null = null;
  const holdNextRebuild = () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    hold = { reached: false, release, released };
    return hold;
  };

  before(async () => {
    const rebuildBeforeSwitch = async () => {
      if (!hold) return;
      hold.reached = true;
      await hold.released;
    };
    t = await startTestService({}, undefined, {
      operations: { rebuildPageSize: 5, rebuildMaxEventsPerSecond: 70, generationDropGraceMs: 50, rebuildBeforeSwitch },
    });
    t.clock.set(new Date('2026-01-02T00:00:00Z'));
    hub = await t.partner({ type: 'hub' });
    reader = await t.key(hub.partnerId, 'live');
    expect((await hub.api.put('/stores/loja-r', storeBody())).status).to.equal(200);
    expect((await t.approveStore(hub, 'loja-r')).status).to.equal(200);
    for (const [i, sku] of SKUS.entries()) {
      const r = await hub.api.put(
        `/products/${sku}`,
        productBody('loja-r', { price_cents: 1000 + i, commission: FULL }),
      );
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
    }
  });
  after(async () => t.close());

  const projections = async (): Promise<ProjectionStatus[]> => {
    const r = await t.admin.get('/projections');
    expect(r.status).to.equal(200);
    return r.body.projections;
  };
  const statusOf = async (name: string) => (await projections()).find((p) => p.name === name)!;
  const snapshot = async (collections: string[]) => {
    const out: Record<string, string[]> = {};
    for (const c of collections)
      out[c] = (await t.service.reads.find<Doc>(c, { orderBy: [{ field: '_id' }] })).map(canonical);
    return out;
  };
  const caughtUp = async () =>
    expect(
      await t.service.runner.waitFor(await t.service.events.headPosition(), 30_000),
      'projections caught up',
    ).to.equal(true);

  it('lists each projection with its checkpoint, lag and state', async () => {
    await caughtUp();
    const all = await projections();
    expect(all.map((p) => p.name)).to.include.members(['partners', 'stores', 'products']);
    const head = await t.service.events.headPosition();
    for (const p of all)
      expect(p).to.include({
        generation: 0,
        checkpoint: head,
        head,
        lag_positions: 0,
        lag_events: 0,
        state: 'live',
        rebuild: null,
      });
    expect((await t.admin.post('/projections/nope/rebuild', {})).status).to.equal(404);
  });

  it('builds a new generation equal to the current one, shows progress, switches, then drops the old one', async () => {
    await caughtUp();
    const collections = ['products', 'product_counts', 'product_store_facts'];
    const before = await snapshot(collections);
    expect(before.products).to.have.length(SKUS.length);
    const started = await t.admin.post('/projections/products/rebuild', {});
    expect(started.status).to.equal(202);
    expect(started.body).to.include({ projection: 'products', state: 'rebuilding', from_generation: 0, generation: 1 });
    const again = await t.admin.post('/projections/products/rebuild', {});
    expect(again.status).to.equal(409);
    let sawProgress = false;
    await until(
      async () => {
        const s = await statusOf('products');
        if (s.state === 'rebuilding' && s.rebuild!.position > 0) {
          sawProgress = true;
          expect(s.rebuild).to.have.property('events_per_second').that.is.a('number');
          expect(s.rebuild!.head).to.be.at.least(s.rebuild!.position);
        }
        return s.rebuild?.state === 'done';
      },
      10_000,
      'rebuild done',
    );
    expect(sawProgress, 'progress visible while rebuilding').to.equal(true);
    const s = await statusOf('products');
    expect(s).to.include({ generation: 1, state: 'live' });
    expect(s.collections).to.deep.equal([
      'products__g1',
      'product_counts__g1',
      'product_store_facts__g1',
      'product_fanouts__g1',
    ]);
    expect(await snapshot(collections)).to.deep.equal(before);
    const raw = t.service.operations.reads.inner;
    // The old generation is dropped, not emptied: its table goes with its indexes.
    const gone = (name: string) =>
      raw.count(name).then(
        () => false,
        (err: Error) => /unknown collection|no such table/.test(err.message),
      );
    await until(() => gone('products'), 30_000, 'old generation dropped');
    expect(await gone('product_store_facts')).to.equal(true);
    expect(await gone('product_fanouts')).to.equal(true);
    expect(await gone('product_counts')).to.equal(true);
    expect(await raw.count('products__g1')).to.equal(SKUS.length);
    const list = await hub.api.get('/products?limit=100');
    expect(list.body.data.map((p: { sku: string }) => p.sku)).to.have.members(SKUS);
  });

  it('ends a rebuild with every index the products declare, though its catch-up loaded them with one (SQLite)', function () {
    const file = path.join(t.dataDir, 'read.db');
    if (!fs.existsSync(file)) this.skip();
    const db = new Database(file, { readonly: true, fileMustExist: true });
    try {
      const fieldsOf = (index: string) =>
        (db.prepare(`PRAGMA index_info("${index}")`).all() as { name: string }[])
          .map((c) => fieldOfColumn(c.name) ?? c.name)
          .filter((f) => f !== '_id')
          .join(',');
      const held = (db.prepare('PRAGMA index_list("coll_products__g1")').all() as { name: string; origin: string }[])
        .filter((i) => i.origin === 'c')
        .map((i) => fieldsOf(i.name));
      const declared = PRODUCT_COLLECTIONS.find((c) => c.name === PRODUCTS)!.indexes.map((f) => f.join(','));
      expect(held.sort()).to.deep.equal([...declared].sort());
    } finally {
      db.close();
    }
  });

  it('keeps answering reads, never older, under continuous writes, and ends equal to a fresh replay', async () => {
    const last = new Map<string, number>(SKUS.map((sku, i) => [sku, 1000 + i]));
    const seen = new Map<string, number>();
    const failures: string[] = [];
    let stop = false;
    let writesDuring = 0;
    let readsDuring = 0;
    let rebuilding = false;
    let duringRebuild: { writes: number; reads: number };
    const writer = (async () => {
      for (let n = 0; !stop; n++) {
        const sku = SKUS[n % 8];
        const price = last.get(sku)! + 1;
        const r = await hub.api.patch(`/products/${sku}`, { price_cents: price, updated_at: '2026-01-01T00:00:00Z' });
        if (r.status !== 200) failures.push(`PATCH ${sku}: ${r.status} ${JSON.stringify(r.body)}`);
        else last.set(sku, price);
        if (rebuilding) writesDuring++;
        await pause(20); // pacing the traffic, not waiting for a result
      }
    })();
    const readerLoop = (async () => {
      for (let n = 0; !stop; n++) {
        const sku = SKUS[n % 8];
        const r = await reader.api.get(`/products/${sku}`);
        if (r.status !== 200) failures.push(`GET ${sku}: ${r.status} ${JSON.stringify(r.body)}`);
        else {
          const price = r.body.expected_commission_cents as number;
          if (price < (seen.get(sku) ?? 0))
            failures.push(`GET ${sku} went back in time: ${price} after ${seen.get(sku)}`);
          seen.set(sku, Math.max(price, seen.get(sku) ?? 0));
        }
        const list = await reader.api.get('/products?limit=100');
        if (list.status !== 200 || list.body.data.length !== SKUS.length)
          failures.push(`GET /products: ${list.status} ${list.body.data?.length}`);
        if (rebuilding) readsDuring += 2;
        await pause(2);
      }
    })();
    try {
      await until(() => last.get(SKUS[0])! > 1000, 30_000, 'traffic started');
      rebuilding = true;
      // The rebuild is held in flight once it caught up, until the traffic it must not disturb has happened.
      const held = holdNextRebuild();
      const started = await t.admin.post('/projections/products/rebuild', {});
      expect(started.status).to.equal(202);
      expect(started.body).to.include({ from_generation: 1, generation: 2 });
      await until(() => held.reached, 30_000, 'rebuild caught up and held before its switch');
      await until(() => writesDuring > 5 && readsDuring > 5, 30_000, 'writes and reads while the rebuild is in flight');
      hold = null;
      held.release();
      await until(
        async () => (await statusOf('products')).rebuild?.state === 'done',
        30_000,
        'rebuild under traffic done',
      );
      rebuilding = false;
      duringRebuild = { writes: writesDuring, reads: readsDuring };
      await until(() => readsDuring > 0 && writesDuring > 0, 30_000, 'traffic after the switch');
      const more = writesDuring + 3;
      rebuilding = true;
      await until(() => writesDuring >= more, 30_000, 'writes after the switch');
    } finally {
      stop = true;
      await Promise.all([writer, readerLoop]);
    }
    if (process.env.DEBUG_REBUILD) console.log(duringRebuild, writesDuring, readsDuring);
    expect(failures).to.deep.equal([]);
    expect(duringRebuild.writes, 'writes while rebuilding').to.be.greaterThan(5);
    expect(duringRebuild.reads, 'reads while rebuilding').to.be.greaterThan(5);
    expect(writesDuring - duringRebuild.writes, 'writes after the switch').to.be.greaterThan(2);
    expect((await statusOf('products')).generation).to.equal(2);
    await caughtUp();
    for (const sku of SKUS.slice(0, 8)) {
      const r = await reader.api.get(`/products/${sku}`);
      expect(r.body.expected_commission_cents, sku).to.equal(last.get(sku));
    }
    const verify = await t.admin.post('/audit/verify', {});
    expect(verify.status).to.equal(200);
    expect(verify.body.differences).to.deep.equal([]);
    expect(verify.body.documents_compared).to.be.greaterThan(SKUS.length);
  });

  it('rebuilds the offers with their text index: the same offers found after the switch, and one written after it', async () => {
    await caughtUp();
    const search = async (word: string) =>
      (await t.service.operations.reads.textSearch('offers', { words: [word], prefixLast: false, limit: 100 }))
        .map((d) => d._id)
        .sort();
    const before = await search('camiseta');
    expect(before).to.have.length(SKUS.length);
    const started = await t.admin.post('/projections/offers/rebuild', {});
    expect(started.status).to.equal(202);
    await until(async () => (await statusOf('offers')).rebuild?.state === 'done', 30_000, 'offers rebuild done');
    expect((await statusOf('offers')).generation).to.equal(1);
    expect(await search('camiseta')).to.deep.equal(before);
    const put = await hub.api.put('/products/sku-after', productBody('loja-r', { title: 'Bermuda listrada' }));
    expect(put.status).to.equal(200);
    await caughtUp();
    expect(await search('bermuda')).to.have.length(1);
  });

  it('keeps the switched generation across a restart', async () => {
    await t.restart();
    const s = (await t.admin.get('/projections')).body.projections.find((p: ProjectionStatus) => p.name === 'products');
    expect(s).to.include({ generation: 2, state: 'live' });
    const r = await t.as(hub.key).get(`/products/${SKUS[20]}`);
    expect(r.status).to.equal(200);
    expect(r.body.expected_commission_cents).to.equal(1020);
  });
});
