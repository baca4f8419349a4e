/**
 * Parked projection events on the real SQLite event store and read store, with the operator surface of one process
 * (Operations: list, retry, metrics, readiness, rebuild). The products projector is wrapped so that it throws on the
 * events the test names (a poison event), until the test "fixes" it.
 *
 * Before parking existed, the runner stopped at the poison event (every read model of every partner stopped) and met
 * it again on each restart.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { expect } from 'chai';
import { SqliteEventStore } from '../../infra/adapters/sqlite/event-store.js';
import { SqliteReadStore } from '../../infra/adapters/sqlite/read-store.js';
import { InProcessMessaging } from '../../infra/adapters/messaging/in-process.js';
import { readStoreHistory } from '../../infra/ops/history.js';
import { Operations } from '../../infra/ops/operations.js';
import { ProjectionRunner } from '../../projections/runner.js';
import { productsProjector } from '../../projections/projectors/products.js';
import { storesProjector } from '../../projections/projectors/stores.js';
import type { Projector } from '../../projections/projector.js';
import type { RecordedEvent } from '../../shared-schema/ports/event-store.js';
import type { Doc } from '../../shared-schema/ports/read-store.js';
import { ManualClock } from '../../shared-schema/ports/clock.js';
import { streams, type Tenant } from '../../shared-schema/domain/streams.js';
import { parsePrometheus } from '../support/prometheus.js';
import { until } from '../support/deadline.js';

const A: Tenant = { env: 'live', partnerId: 'pt_A' };
const B: Tenant = { env: 'live', partnerId: 'pt_B' };
const FAILURE = 'products projector: cannot encode field "a.b"';

/** Streams whose events the products projector throws on (until removed), and apply failures to throw once. */
const poisoned = new Set<string>();
const flakyOnce = new Set<string>();
const faultyProducts: Projector = {
  ...productsProjector,
  async apply(event, tx) {
    if (poisoned.has(event.stream)) throw new Error(FAILURE);
    if (flakyOnce.delete(event.stream)) throw new Error('transient: read timed out');
    return productsProjector.apply(event, tx);
  },
};

/** Counts how many times each product event was applied (no idempotency guard: a second apply shows as 2). */
const SEEN = 'product_events_seen';
const seenProjector: Projector = {
  name: 'product_events',
  collections: [{ name: SEEN, indexes: [] }],
  categories: ['product'],
  async apply(event, tx) {
    const current = await tx.get<Doc & { applied: number }>(SEEN, event.id);
    await tx.put(SEEN, { _id: event.id, stream: event.stream, applied: (current?.applied ?? 0) + 1 });
  },
};

const PROJECTORS = [storesProjector, faultyProducts, seenProjector];

describe('parked projection events (SQLite stores)', function () {
  this.timeout(30_000);
  let dir: string;
  let events: SqliteEventStore;
  let reads: SqliteReadStore;
  let messaging: InProcessMessaging;
  let ops: Operations;
  let runner: ProjectionRunner;
  let stopped: unknown[];
  const clock = new ManualClock(new Date('2026-01-02T00:00:00Z'));
  const log = pino({ level: 'silent' });

  async function open(): Promise<void> {
    events = SqliteEventStore.open({ path: path.join(dir, 'events.db') });
    reads = SqliteReadStore.open({ path: path.join(dir, 'read.db'), sweepIntervalMs: 0 });
    messaging = new InProcessMessaging(clock);
    const history = await readStoreHistory(reads);
    ops = await Operations.create({
      log,
      clock,
      events,
      reads,
      history,
      messaging,
      projectors: PROJECTORS,
      settings: { generationDropGraceMs: 10 },
    });
    stopped = [];
    runner = new ProjectionRunner(events, ops.runnerReads, PROJECTORS, {
      ...ops.runnerHooks(),
      retryPauseMs: 1,
      onError: (err) => stopped.push(err),
    });
  }
  async function close(): Promise<void> {
    await ops.close();
    await runner.stop();
    await messaging.close();
    await events.close();
    await reads.close();
  }

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-parked-'));
    await open();
  });
  after(async () => {
    await close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const now = () => clock.now().toISOString();
  const append = async (stream: string, type: string, data: Record<string, unknown>) =>
    (await events.appendToStream(stream, [{ type, data, metadata: { recorded_at: now() } }])).position;
  const registerStore = async (t: Tenant) => {
    await append(streams.store(t, 's'), 'StoreRegistered', {
      store_id: 's',
      store: { name: 'S', cnpj: '11222333000181', website_url: 'https://shop.test', domains: ['shop.test'] },
      registered_at: now(),
    });
    return append(streams.store(t, 's'), 'StoreApproved', { store_id: 's', domains: ['shop.test'] });
  };
  const upsert = (t: Tenant, sku: string, title = 'Title') =>
    append(streams.product(t, sku), 'ProductUpserted', {
      sku,
      received_at: now(),
      product: {
        store_id: 's',
        title,
        product_url: 'https://shop.test/p',
        image_urls: [`https://shop.test/${sku}.jpg`],
        price_cents: 1,
        available: true,
        updated_at: '2026-01-01T00:00:00Z',
      },
    });
  const caughtUp = async () =>
    expect(await runner.waitFor(await events.headPosition(), 10_000), 'the runner reached the head').to.equal(true);
  const skus = async (t: Tenant) =>
    (
      await ops.reads.find<Doc & { sku: string }>('products', {
        where: { partner_id: t.partnerId },
        orderBy: [{ field: 'sku' }],
      })
    ).map((d) => d.sku);
  const seen = async () =>
    (await ops.reads.find<Doc & { applied: number; stream: string }>(SEEN, { orderBy: [{ field: '_id' }] })).map(
      (d) => [d.stream, d.applied],
    );
  const parked = () => ops.parked({ limit: 100 });
  const gauge = async () => parsePrometheus((await ops.metrics.text()).body);

  let poisonPosition = 0;
  let poisonEvent: RecordedEvent;

  it('parks the one event the products projector cannot apply and applies the rest of the batch and later batches', async () => {
    // Everything is in the log before the runner starts: the catch-up takes it in one batch.
    await registerStore(A);
    await registerStore(B);
    await upsert(A, 'sku-1');
    poisoned.add(streams.product(A, 'sku-2'));
    poisonPosition = await upsert(A, 'sku-2');
    await upsert(A, 'sku-3');
    await upsert(B, 'sku-b');
    await runner.start();
    await caughtUp();
    expect(stopped, 'the runner did not stop').to.deep.equal([]);
    expect(await skus(A)).to.deep.equal(['sku-1', 'sku-3']);
    expect(await skus(B)).to.deep.equal(['sku-b']);
    // The other projector of the category applied the poison event, once.
    expect(await seen()).to.have.deep.members([
      [streams.product(A, 'sku-1'), 1],
      [streams.product(A, 'sku-2'), 1],
      [streams.product(A, 'sku-3'), 1],
      [streams.product(B, 'sku-b'), 1],
    ]);
    [poisonEvent] = await events.readStream(streams.product(A, 'sku-2'));
    const list = await parked();
    expect(list.total).to.equal(1);
    expect(list.parked).to.have.length(1);
    expect(list.parked[0]).to.deep.equal({
      id: `products:${poisonPosition}`,
      projection: 'products',
      event_id: poisonEvent!.id,
      stream: streams.product(A, 'sku-2'),
      position: poisonPosition,
      type: 'ProductUpserted',
      error: FAILURE,
      parked_at: now(),
      retries: 0,
      last_retry_at: null,
    });
    // Checkpoints passed it; a later batch is applied.
    expect(await ops.reads.getCheckpoint('products')).to.equal(await events.headPosition());
    await upsert(A, 'sku-4');
    await caughtUp();
    expect(await skus(A)).to.deep.equal(['sku-1', 'sku-3', 'sku-4']);
  });

  it('does not park an apply that fails once and then succeeds (retried in the unit)', async () => {
    flakyOnce.add(streams.product(B, 'sku-flaky'));
    await upsert(B, 'sku-flaky');
    await caughtUp();
    expect(flakyOnce.size).to.equal(0);
    expect(await skus(B)).to.deep.equal(['sku-b', 'sku-flaky']);
    expect((await parked()).total).to.equal(1);
  });

  it('shows the parked event in the projection status, the metrics and readiness (ready, degraded)', async () => {
    const status = (await ops.projections()).find((p) => p.name === 'products')!;
    expect(status).to.include({ parked_events: 1, state: 'live', lag_events: 0 });
    const metrics = await gauge();
    expect(metrics.value('pc_projection_parked_events', { projection: 'products' })).to.equal(1);
    expect(metrics.value('pc_projection_parked_events', { projection: 'stores' })).to.equal(0);
    const ready = await ops.readiness();
    expect(ready).to.deep.include({ ready: true, degraded: true });
    expect(ready.checks.parked_events).to.equal(1);
    expect(ready.checks.projections.products).to.equal('degraded: 1 parked event(s)');
    expect(ready.checks.projections.stores).to.equal('ok');
  });

  it('after a restart neither applies anything again nor loses the parked event', async () => {
    const before = await seen();
    await close();
    await open();
    await runner.start();
    await caughtUp();
    expect(stopped).to.deep.equal([]);
    expect(await seen()).to.deep.equal(before);
    expect(await skus(A)).to.deep.equal(['sku-1', 'sku-3', 'sku-4']);
    expect((await parked()).parked.map((p) => p.id)).to.deep.equal([`products:${poisonPosition}`]);
  });

  it('a rebuild parks the same event in the new generation instead of aborting, and switches', async () => {
    ops.rebuilder.start('products');
    const done = await ops.rebuilder.finished('products');
    expect(done).to.include({ state: 'done', generation: 1 });
    expect(ops.reads.generationOf('products')).to.equal(1);
    expect(await skus(A)).to.deep.equal(['sku-1', 'sku-3', 'sku-4']);
    const list = await parked();
    expect(list.parked.map((p) => [p.id, p.error])).to.deep.equal([[`products:${poisonPosition}`, FAILURE]]);
  });

  it('a retry while the projector still fails keeps it parked with the new error', async () => {
    clock.advance(1000);
    const r = await ops.retryParked([`products:${poisonPosition}`, 'products:999999', 'nope:1']);
    expect(r.retried).to.deep.equal([]);
    expect(r.not_found).to.deep.equal(['products:999999', 'nope:1']);
    expect(r.still_failing.map((p) => [p.id, p.retries, p.last_retry_at])).to.deep.equal([
      [`products:${poisonPosition}`, 1, now()],
    ]);
    expect((await parked()).parked[0]).to.include({ retries: 1, error: FAILURE });
    expect(await skus(A)).to.not.include('sku-2');
  });

  it('a retry after the fix applies the event once and removes it from the list, metrics and readiness', async () => {
    poisoned.clear();
    const r = await ops.retryParked(undefined);
    expect(r.still_failing).to.deep.equal([]);
    expect(r.retried.map((p) => [p.id, p.rebuild_advised, p.later_events])).to.deep.equal([
      [`products:${poisonPosition}`, false, 0],
    ]);
    expect(await skus(A)).to.deep.equal(['sku-1', 'sku-2', 'sku-3', 'sku-4']);
    const doc = await ops.reads.get<Doc & { position: number }>('products', 'live:pt_A:sku-2');
    expect(doc!.position).to.equal(poisonPosition);
    expect(await parked()).to.deep.equal({ total: 0, parked: [] });
    expect((await gauge()).value('pc_projection_parked_events', { projection: 'products' })).to.equal(0);
    expect(await ops.readiness()).to.deep.include({ ready: true, degraded: false });
    // A retry of an id already applied finds nothing.
    expect((await ops.retryParked([`products:${poisonPosition}`])).not_found).to.deep.equal([
      `products:${poisonPosition}`,
    ]);
  });

  it('advises a rebuild when later events of the stream were applied without the parked one', async () => {
    poisoned.add(streams.product(B, 'sku-late'));
    const first = await upsert(B, 'sku-late', 'First');
    await caughtUp();
    expect((await parked()).parked.map((p) => p.id)).to.deep.equal([`products:${first}`]);
    poisoned.clear();
    await upsert(B, 'sku-late', 'Second');
    await caughtUp();
    const r = await ops.retryParked([`products:${first}`]);
    expect(r.retried.map((p) => [p.id, p.rebuild_advised, p.later_events])).to.deep.equal([
      [`products:${first}`, true, 1],
    ]);
    // The newer state is not regressed by the older event.
    const doc = await ops.reads.get<Doc & { product: { title: string } }>('products', 'live:pt_B:sku-late');
    expect(doc!.product.title).to.equal('Second');
    await until(async () => (await parked()).total === 0, 5000, 'the list emptied');
  });
});
