/**
 * The re-check scan on the real SQLite stores and the products projection: which products it finds by the
 * injected clock, with a checker that answers at once.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { SqliteEventStore } from '../../infra/adapters/sqlite/event-store.js';
import { SPARSE_POSITIONS } from '../support/sparse-positions.js';
import { SqliteReadStore } from '../../infra/adapters/sqlite/read-store.js';
import { ProjectionRunner } from '../../projections/runner.js';
import { productsProjector } from '../../projections/projectors/products.js';
import { AggregateRepository } from '../../command-api/aggregate-repository.js';
import { CachedAggregateStates } from '../../infra/adapters/event-store/cached-state.js';
import { CoverWork } from '../../command-api/reactors/cover-work.js';
import { CoverRecheckScheduler } from '../../command-api/reactors/cover-recheck.js';
import { ManualClock } from '../../shared-schema/ports/clock.js';
import { streams, type Tenant } from '../../shared-schema/domain/streams.js';

const tenant: Tenant = { env: 'test', partnerId: 'pt_R' };
const HOUR = 3_600_000;

describe('cover re-check scan (SQLite stores, products projection)', () => {
  let dir: string;
  let events: SqliteEventStore;
  let reads: SqliteReadStore;
  let runner: ProjectionRunner;
  let clock: ManualClock;
  let work: CoverWork;
  let scheduler: CoverRecheckScheduler;
  let checked: string[];

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cover-recheck-'));
    events = SqliteEventStore.open({ path: path.join(dir, 'events.db'), positionSpacing: SPARSE_POSITIONS }); // byte-offset-like positions: no `position - 1`
    reads = SqliteReadStore.open({ path: path.join(dir, 'read.db') });
    runner = new ProjectionRunner(events, reads, [productsProjector]);
    await runner.start();
    clock = new ManualClock(new Date('2026-01-02T00:00:00Z'));
    checked = [];
    work = new CoverWork({
      events,
      repo: new AggregateRepository(new CachedAggregateStates(events)),
      clock,
      checker: async (url) => {
        checked.push(url);
        return { ok: true, reasons: [] };
      },
    });
    scheduler = new CoverRecheckScheduler({ reads, clock, work, intervalMs: 3_600_000 });
    await append(streams.store(tenant, 's'), 'StoreRegistered', {
      store_id: 's',
      store: { name: 'S', cnpj: '11222333000181', website_url: 'https://shop.test', domains: ['shop.test'] },
      registered_at: now(),
    });
    await append(streams.store(tenant, 's'), 'StoreApproved', { store_id: 's', domains: ['shop.test'] });
  });
  afterEach(async () => {
    await scheduler.stop();
    await work.stop();
    await runner.stop();
    await events.close();
    await reads.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const now = () => clock.now().toISOString();
  async function append(stream: string, type: string, data: Record<string, unknown>) {
    const r = await events.appendToStream(stream, [{ type, data, metadata: { recorded_at: now() } }]);
    expect(await runner.waitFor(r.position, 30_000), `projected up to ${r.position}`).to.equal(true);
  }
  const send = (sku: string) =>
    append(streams.product(tenant, sku), 'ProductUpserted', {
      sku,
      received_at: now(),
      product: {
        store_id: 's',
        title: 'Title',
        product_url: 'https://shop.test/p',
        image_urls: [`https://shop.test/${sku}.jpg`],
        price_cents: 1,
        available: true,
        updated_at: '2026-01-01T00:00:00Z',
      },
    });
  const cover = (sku: string, ok: boolean) =>
    append(streams.product(tenant, sku), 'CoverChecked', {
      sku,
      url: `https://shop.test/${sku}.jpg`,
      ok,
      reasons: ok ? [] : [{ code: 'image_type', message: 'no' }],
      checked_at: now(),
    });
  const scan = async () => {
    checked = [];
    const position = await scheduler.scan();
    if (position > 0) expect(await runner.waitFor(position, 30_000), `projected up to ${position}`).to.equal(true);
    return checked.map((u) => u.slice('https://shop.test/'.length, -4)).sort();
  };

  it('finds rejected covers after 1 hour and sends with no result after 10 minutes, not before; accepted ones wait', async () => {
    await send('rejected');
    await cover('rejected', false);
    await send('accepted');
    await cover('accepted', true);
    await send('lost');
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
    await send('quiet');
    await cover('quiet', true);
    clock.advance(7 * 24 * HOUR);
    expect(await scan(), 'stale: out of search, not re-checked').to.deep.equal([]);
    await append(streams.product(tenant, 'quiet'), 'ProductPatched', {
      sku: 'quiet',
      patch: { price_cents: 2, updated_at: '2026-01-01T00:00:00Z' },
      received_at: now(),
    });
    expect(await scan()).to.deep.equal(['quiet']);
  });
});
