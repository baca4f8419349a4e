/**
 * The re-check scan on the real SQLite stores and the products projection: which products it finds by the
 * injected clock, with a checker that answers at once.
 */
import { expect } from 'chai';
import { SqliteEventStore } from '../../infra/adapters/sqlite/event-store.js';
import { SqliteReadStore } from '../../infra/adapters/sqlite/read-store.js';
import { ProjectionRunner } from '../../projections/runner.js';
import { AggregateRepository } from '../../command-api/aggregate-repository.js';
import { CachedAggregateStates } from '../../infra/adapters/event-store/cached-state.js';
import { startProductsOnSqlite, type ProductsOnSqlite } from '../support/products-on-sqlite.js';
import { CoverWork } from '../../command-api/reactors/cover-work.js';
import { CoverRecheckScheduler } from '../../command-api/reactors/cover-recheck.js';
import { ManualClock } from '../../shared-schema/ports/clock.js';
import { streams, type Tenant } from '../../shared-schema/domain/streams.js';

const tenant: Tenant = { env: 'test', partnerId: 'pt_R' };
const HOUR = 3_600_000;

describe('cover re-check scan (SQLite stores, products projection)', () => {
  let products: ProductsOnSqlite;
  let events: SqliteEventStore;
  let reads: SqliteReadStore;
  let runner: ProjectionRunner;
  let clock: ManualClock;
  let work: CoverWork;
  let scheduler: CoverRecheckScheduler;
  let checked: string[];

  beforeEach(async () => {
    products = await startProductsOnSqlite(tenant, 'cover-recheck-');
    ({ events, reads, runner, clock } = products);
    checked = [];
    work = new CoverWork({
      repo: new AggregateRepository(new CachedAggregateStates(events)),
      clock,
      checker: async (url) => {
        checked.push(url);
        return { ok: true, reasons: [] };
      },
    });
    scheduler = new CoverRecheckScheduler({ reads, clock, work, intervalMs: 3_600_000 });
  });
  afterEach(async () => {
    await scheduler.stop();
    await work.stop();
    await products.close();
  });

  const scan = async () => {
    checked = [];
    const position = await scheduler.scan();
    if (position > 0) expect(await runner.waitFor(position, 30_000), `projected up to ${position}`).to.equal(true);
    return checked.map((u) => u.slice('https://shop.test/'.length, -4)).sort();
  };

  it('finds rejected covers after 1 hour and sends with no result after 10 minutes, not before; accepted ones wait', async () => {
    await products.send('rejected');
    await products.cover('rejected', false);
    await products.send('accepted');
    await products.cover('accepted', true);
    await products.send('lost');
    expect(await scan()).to.deep.equal([]);
    clock.advance(10 * 60_000);
    expect(await scan(), 'a send with no result after 10 minutes').to.deep.equal(['lost']);
    clock.advance(HOUR - 10 * 60_000 - 1);
    expect(await scan()).to.deep.equal([]);
    clock.advance(1);
    expect(await scan()).to.deep.equal(['rejected']);
    expect(await scan(), 'the new result is not due').to.deep.equal([]);
  });

  it('leaves a stale accepted product alone until it is sent or patched again', async () => {
    await products.send('quiet');
    await products.cover('quiet', true);
    clock.advance(7 * 24 * HOUR);
    expect(await scan(), 'stale: out of search, not re-checked').to.deep.equal([]);
    await products.append(streams.product(tenant, 'quiet'), 'ProductPatched', {
      sku: 'quiet',
      patch: { price_cents: 2, updated_at: '2026-01-01T00:00:00Z' },
      received_at: products.now(),
    });
    expect(await scan()).to.deep.equal(['quiet']);
  });
});
