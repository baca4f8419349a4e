/**
 * The freshness reactor on the real SQLite stores and the products projection, by a manual clock: the lapse of each
 * accepted product's last write once the clock is past it + 48 h, found in pages, never twice, and a write that
 * races the lapse's append wins (the decision is taken again on it, and nothing is due).
 */
import { expect } from 'chai';
import { SqliteEventStore } from '../../infra/adapters/sqlite/event-store.js';
import { SqliteReadStore } from '../../infra/adapters/sqlite/read-store.js';
import { InProcessMessaging } from '../../infra/adapters/messaging/in-process.js';
import { ProjectionRunner } from '../../projections/runner.js';
import { AggregateRepository } from '../../command-api/aggregate-repository.js';
import { CachedAggregateStates } from '../../infra/adapters/event-store/cached-state.js';
import { startProductsOnSqlite, type ProductsOnSqlite } from '../support/products-on-sqlite.js';
import { FreshnessReactor } from '../../command-api/reactors/freshness.js';
import { ManualClock, type Clock } from '../../shared-schema/ports/clock.js';
import { until } from '../support/deadline.js';
import type { EventStore, NewEvent } from '../../shared-schema/ports/event-store.js';
import { streams, type Tenant } from '../../shared-schema/domain/streams.js';

const tenant: Tenant = { env: 'live', partnerId: 'pt_F' };
const HOUR = 3_600_000;

describe('freshness reactor (SQLite stores, products projection)', () => {
  let products: ProductsOnSqlite;
  let inner: SqliteEventStore;
  let reads: SqliteReadStore;
  let runner: ProjectionRunner;
  let clock: ManualClock;
  let messaging: InProcessMessaging;
  /** Runs once before the next append of a lapse reaches the store (a write racing it). */
  let beforeLapse: (() => Promise<void>) | null;

  const patch = (sku: string) =>
    products.append(streams.product(tenant, sku), 'ProductPatched', {
      sku,
      patch: { price_cents: 2, updated_at: '2026-01-01T00:00:00Z' },
      received_at: products.now(),
    });
  const lapses = async (sku: string) =>
    (await inner.readStream(streams.product(tenant, sku)))
      .filter((e) => e.type === 'ProductFreshnessLapsed')
      .map((e) => e.data);

  function reactor(batch?: number, own: { clock?: Clock; wakeAtDue?: boolean } = {}): FreshnessReactor {
    const events: EventStore = {
      async appendToStream(stream, batchOfEvents: readonly NewEvent[], expected) {
        const hook = beforeLapse;
        if (hook && batchOfEvents.some((e) => e.type === 'ProductFreshnessLapsed')) {
          beforeLapse = null;
          await hook();
        }
        return inner.appendToStream(stream, batchOfEvents, expected);
      },
      readStream: (stream, options) => inner.readStream(stream, options),
      readAll: (options) => inner.readAll(options),
      headPosition: () => inner.headPosition(),
      subscribeToAll: (options) => inner.subscribeToAll(options),
      close: () => inner.close(),
    };
    const deps = {
      events,
      reads,
      messaging,
      clock: own.clock ?? clock,
      repo: new AggregateRepository(new CachedAggregateStates(events)),
      publicBaseUrl: 'https://example.test',
    };
    return new FreshnessReactor({
      deps,
      intervalMs: 3_600_000,
      ...(batch ? { batch } : {}),
      ...(own.wakeAtDue ? { wakeAtDue: true } : {}),
    });
  }
  async function scan(r: FreshnessReactor): Promise<number> {
    const position = await r.scan();
    if (position > 0) expect(await runner.waitFor(position, 30_000)).to.equal(true);
    return position;
  }

  beforeEach(async () => {
    products = await startProductsOnSqlite(tenant, 'freshness-');
    ({ events: inner, reads, runner, clock } = products);
    messaging = new InProcessMessaging(clock);
    beforeLapse = null;
  });
  afterEach(async () => {
    await messaging.close();
    await products.close();
  });

  it('records each accepted product’s lapse once the clock is past its last write + 48 h, in pages, once', async () => {
    const written = products.now();
    for (const sku of ['a', 'b', 'c', 'd', 'e']) {
      await products.send(sku);
      await products.cover(sku, true);
    }
    await products.send('pending'); // no cover verdict: never accepted, never lapses
    const r = reactor(2);
    clock.advance(48 * HOUR);
    expect(await scan(r), 'exactly 48 h: not yet').to.equal(0);
    clock.advance(1);
    expect(await scan(r)).to.be.above(0);
    const lapsedAt = new Date(Date.parse(written) + 48 * HOUR).toISOString();
    for (const sku of ['a', 'b', 'c', 'd', 'e'])
      expect(await lapses(sku), sku).to.deep.equal([{ sku, store_id: 's', lapsed_at: lapsedAt }]);
    expect(await lapses('pending')).to.deep.equal([]);
    clock.advance(HOUR);
    expect(await scan(r), 'nothing new').to.equal(0);
    await r.stop();
  });

  it('with a clock that follows real time, wakes at the next lapse due instead of waiting for its periodic scan', async () => {
    const written = products.now();
    await products.send('soon');
    await products.cover('soon', true);
    // The reactor's clock runs in real time from 1 s before the lapse is due; its periodic scan is an hour away.
    const due = Date.parse(written) + 48 * HOUR;
    const from = Date.now();
    const realTime: Clock = { now: () => new Date(due - 1000 + (Date.now() - from)) };
    const r = reactor(undefined, { clock: realTime, wakeAtDue: true });
    r.start();
    await until(async () => (await lapses('soon')).length > 0, 20_000, 'the lapse recorded at its instant', 20);
    expect(await lapses('soon')).to.deep.equal([
      { sku: 'soon', store_id: 's', lapsed_at: new Date(due).toISOString() },
    ]);
    await r.stop();
  });

  it('with a clock that follows real time, a lapse that comes due while a scan runs is recorded at once, not at the next periodic scan', async () => {
    const written = products.now();
    await products.send('during');
    await products.cover('during', true);
    // The scan judges at its first reading, 1 s before the lapse is due; every later reading is past it (the scan
    // took that long).
    const due = Date.parse(written) + 48 * HOUR;
    let readings = 0;
    const slowScan: Clock = { now: () => new Date(readings++ === 0 ? due - 1000 : due + 5) };
    const r = reactor(undefined, { clock: slowScan, wakeAtDue: true });
    r.start();
    await until(async () => (await lapses('during')).length > 0, 20_000, 'the lapse recorded after the scan', 20);
    expect(await lapses('during')).to.deep.equal([
      { sku: 'during', store_id: 's', lapsed_at: new Date(due).toISOString() },
    ]);
    await r.stop();
  });

  it('lets a write that races the lapse win: the lapse is decided again, and the new write lapses later', async () => {
    await products.send('raced');
    await products.cover('raced', true);
    const r = reactor();
    clock.advance(48 * HOUR + 1);
    let patchedAt = '';
    beforeLapse = async () => {
      patchedAt = products.now();
      await patch('raced');
    };
    expect(await scan(r)).to.equal(0);
    expect(patchedAt).to.not.equal('');
    expect(await lapses('raced'), 'the write won').to.deep.equal([]);
    clock.advance(48 * HOUR + 1);
    expect(await scan(r)).to.be.above(0);
    expect(await lapses('raced')).to.deep.equal([
      { sku: 'raced', store_id: 's', lapsed_at: new Date(Date.parse(patchedAt) + 48 * HOUR).toISOString() },
    ]);
    await r.stop();
  });
});
