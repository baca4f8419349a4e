/**
 * The real SQLite stores with the products projection running, a manual clock, and one approved store `s` on
 * shop.test: the ground the product scans (freshness, cover re-check) are tested on. Every write waits until the
 * projection has it, so a scan reads what was written whatever the machine's speed.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { SqliteEventStore } from '../../infra/adapters/sqlite/event-store.js';
import { SqliteReadStore } from '../../infra/adapters/sqlite/read-store.js';
import { ProjectionRunner } from '../../projections/runner.js';
import { productsProjector } from '../../projections/projectors/products.js';
import { ManualClock } from '../../shared-schema/ports/clock.js';
import { streams, type Tenant } from '../../shared-schema/domain/streams.js';
import { SPARSE_POSITIONS } from './sparse-positions.js';

export interface ProductsOnSqlite {
  events: SqliteEventStore;
  reads: SqliteReadStore;
  runner: ProjectionRunner;
  clock: ManualClock;
  /** The clock's time, as events record it. */
  now(): string;
  /** Appends one event and waits until the projection has it. */
  append(stream: string, type: string, data: Record<string, unknown>): Promise<void>;
  /** A product of store `s` whose cover is `https://shop.test/{sku}.jpg`. */
  send(sku: string): Promise<void>;
  /** The cover check's verdict on that cover. */
  cover(sku: string, ok: boolean): Promise<void>;
  close(): Promise<void>;
}

export async function startProductsOnSqlite(tenant: Tenant, prefix: string): Promise<ProductsOnSqlite> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  // Byte-offset-like positions: nothing may count on `position - 1`.
  const events = SqliteEventStore.open({ path: path.join(dir, 'events.db'), positionSpacing: SPARSE_POSITIONS });
  const reads = SqliteReadStore.open({ path: path.join(dir, 'read.db') });
  const runner = new ProjectionRunner(events, reads, [productsProjector]);
  await runner.start();
  const clock = new ManualClock(new Date('2026-01-02T00:00:00Z'));
  const now = () => clock.now().toISOString();
  const append = async (stream: string, type: string, data: Record<string, unknown>) => {
    const r = await events.appendToStream(stream, [{ type, data, metadata: { recorded_at: now() } }]);
    expect(await runner.waitFor(r.position, 30_000), `projected up to ${r.position}`).to.equal(true);
  };
  await append(streams.store(tenant, 's'), 'StoreRegistered', {
    store_id: 's',
    store: { name: 'S', cnpj: '11222333000181', website_url: 'https://shop.test', domains: ['shop.test'] },
    registered_at: now(),
  });
  await append(streams.store(tenant, 's'), 'StoreApproved', { store_id: 's', domains: ['shop.test'] });
  return {
    events,
    reads,
    runner,
    clock,
    now,
    append,
    send: (sku) =>
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
      }),
    cover: (sku, ok) =>
      append(streams.product(tenant, sku), 'CoverChecked', {
        sku,
        url: `https://shop.test/${sku}.jpg`,
        ok,
        reasons: ok ? [] : [{ code: 'image_type', message: 'no' }],
        checked_at: now(),
      }),
    close: async () => {
      await runner.stop();
      await events.close();
      await reads.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
