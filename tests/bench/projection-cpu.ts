/**
 * CPU per product write of the live projectors alone (not a test; run after building):
 *
 *   node dist/tests/bench/projection-cpu.js [unit sizes, default 1,8,64] [events per round, default 4000]
 *   PROJECTION_CPU_ONLY=products,feed   (only these projectors; default every live one)
 *   PROJECTION_CPU_NEW=1                (a new SKU each write, its cover checked and accepted: what `make bench-scale`
 *                                        phase A sends; a figure is then per item, two events, and a unit of n events
 *                                        holds n / 2 items, at least one)
 *
 * What `make bench` phase (a) sends, without HTTP, the command side or the event log: one live store (registered,
 * approved), then `ProductUpserted` events over 1,024 SKUs (64 connections × 16, a new price and write time each),
 * applied through `applyInUnits` as the live runner applies them (the same projectors, generation map and unit gate,
 * every projector's checkpoint in each unit) to a fresh `read.db`, in units of each size. Prints the CPU time of this
 * process per event for each size (median of 3 rounds, the rounds alternating between sizes): the figure moves little
 * with the machine's load, so two builds can be compared by running each in turn.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SqliteReadStore } from '../../infra/adapters/sqlite/read-store.js';
import { PROJECTORS as ALL } from '../../infra/wiring/projectors.js';
import { GenerationalReadStore } from '../../projections/generations.js';
import { UnitGate } from '../../projections/unit-gate.js';
import { applyInUnits, projectorCollections } from '../../projections/parking.js';
import { categoryOf, type RecordedEvent } from '../../shared-schema/ports/event-store.js';

const sizes = (process.argv[2] ?? '1,8,64').split(',').map(Number);
const perRound = Number(process.argv[3] ?? 4000);
const only = process.env.PROJECTION_CPU_ONLY?.split(',');
const newItems = process.env.PROJECTION_CPU_NEW === '1';
const projectors = only ? ALL.filter((p) => only.includes(p.name)) : ALL;

const PARTNER = 'pt_01HBENCHPROJECTIONCPU0000';
const STORE = 'loja-bench';
const T0 = Date.parse('2026-11-01T00:00:00Z');
const PRODUCT = {
  title: 'Camiseta azul de algodão, tamanho M',
  description: 'Camiseta de algodão penteado, gola careca, manga curta.',
  brand: 'Marca',
  image_urls: ['https://cdn.shop.test/1.jpg', 'https://cdn.shop.test/2.jpg'],
  available: true,
  stock_quantity: 12,
  commission: { type: 'percentage', rate: 10 },
};

let position = 0;
function recorded(stream: string, type: string, data: unknown): RecordedEvent {
  position += 1;
  const at = new Date(T0 + position).toISOString();
  return { id: `ev-${position}`, stream, revision: 0, position, type, data, metadata: { recorded_at: at } };
}

let written = 0;
function productWrite(): RecordedEvent {
  const sku = newItems ? `n-${written}` : `a-${written % 64}-${Math.floor(written / 64) % 16}`;
  written += 1;
  const product = {
    store_id: STORE,
    ...PRODUCT,
    product_url: `https://shop.test/p/${sku}`,
    price_cents: 10_000 + (written % 5000),
    updated_at: new Date(T0 + written).toISOString(),
  };
  const received = new Date(T0 + position + 1).toISOString();
  return recorded(`product-live:${PARTNER}:${sku}`, 'ProductUpserted', { sku, product, received_at: received });
}

/** A write of a new SKU and its accepted cover check. */
function newItem(): RecordedEvent[] {
  const upserted = productWrite();
  const { sku, product } = upserted.data as { sku: string; product: { image_urls: string[] } };
  const checked = recorded(upserted.stream, 'CoverChecked', {
    sku,
    url: product.image_urls[0],
    ok: true,
    reasons: [],
    checked_at: new Date(T0 + position + 1).toISOString(),
  });
  return [upserted, { ...checked, revision: 1 }];
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-projection-cpu-'));
  const store = SqliteReadStore.open({ path: path.join(dir, 'read.db'), synchronous: 'NORMAL', sweepIntervalMs: 0 });
  try {
    const reads = new GenerationalReadStore(store, projectors);
    await reads.load();
    const gate = new UnitGate(reads);
    await gate.ensureCollections(projectors.flatMap(projectorCollections));
    const apply = (events: RecordedEvent[]) =>
      applyInUnits(events, events[events.length - 1].position, {
        store: gate,
        projectors,
        applies: (p, e) => p.categories.includes(categoryOf(e.stream)),
        close: async (tx, through) => {
          for (const p of projectors) await tx.setCheckpoint(p.name, through);
        },
        now: () => new Date(T0).toISOString(),
      });
    const storeStream = `store-live:${PARTNER}:${STORE}`;
    const storeInput = {
      name: 'Loja',
      cnpj: '11222333000181',
      website_url: 'https://shop.test',
      domains: ['shop.test'],
      image_hosts: ['cdn.shop.test'],
      default_commission: { type: 'percentage', rate: 10 },
    };
    const at = new Date(T0).toISOString();
    await apply([recorded(storeStream, 'StoreRegistered', { store_id: STORE, store: storeInput, registered_at: at })]);
    await apply([recorded(storeStream, 'StoreApproved', { store_id: STORE, domains: ['shop.test'] })]);
    const round = async (size: number, count: number): Promise<number> => {
      const before = process.cpuUsage();
      let measured = 0; // writes, or new items (two events each, at least one a unit)
      for (let i = 0; i < count; i += size) {
        const events = newItems
          ? Array.from({ length: Math.max(1, size >> 1) }, newItem).flat()
          : Array.from({ length: size }, productWrite);
        await apply(events);
        measured += newItems ? events.length / 2 : events.length;
      }
      const used = process.cpuUsage(before);
      return (used.user + used.system) / measured;
    };
    await round(8, 2048); // every SKU written once
    const figures = new Map<number, number[]>(sizes.map((s) => [s, []]));
    for (let r = 0; r < 3; r++) for (const s of sizes) figures.get(s)!.push(await round(s, perRound));
    const line = [...figures]
      .map(([s, v]) => {
        const sorted = [...v].sort((a, b) => a - b);
        return `unit of ${s}: ${sorted[1].toFixed(1)} µs (${v.map((x) => x.toFixed(1)).join(', ')})`;
      })
      .join('; ');
    process.stdout.write(`CPU per product write, ${only ? only.join('+') : 'every live projector'}: ${line}\n`);
  } finally {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

await main();
