/**
 * Projection level: given the events of clicks and orders (orders decided by the real decider), then the documents.
 * Replaying every event changes nothing; every hour bucket equals the sum of its items.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { SqliteReadStore } from '../../infra/sqlite/read-store.js';
import type { RecordedEvent } from '../../shared-schema/ports/event-store.js';
import type { Doc } from '../../shared-schema/ports/read-store.js';
import { streams } from '../../shared-schema/streams.js';
import { decide, evolve, initialState, type OrderState } from '../../command-api/deciders/order.js';
import { clicksProjector } from '../../projections/projectors/clicks.js';
import { ordersProjector } from '../../projections/projectors/orders.js';
import { reportProjector, REPORT_DAYS, REPORT_HOURS, REPORT_ITEMS } from '../../projections/projectors/report.js';
import { combine, figuresOf, periodOf, zeroFigures } from '../../shared-schema/report.js';
import { CLICK, CLICK_ID, PAID_AT, command, paid, refund, cancel, tenant, at, DAY } from '../orders/order-given.js';

const PROJECTORS = [clicksProjector, ordersProjector, reportProjector];

describe('commerce projections (SQLite read store)', () => {
  let dir: string;
  let reads: SqliteReadStore;
  const log: RecordedEvent[] = [];
  let position = 0;
  const record = (stream: string, type: string, data: unknown) => {
    position += 1;
    log.push({ id: `e${position}`, stream, revision: 0, position, type, data, metadata: { recorded_at: at(PAID_AT, position) } });
  };
  const apply = (events: readonly RecordedEvent[]) =>
    reads.transact(async (tx) => {
      for (const e of events) for (const p of PROJECTORS) if (p.categories.includes(e.stream.slice(0, e.stream.indexOf('-')))) await p.apply(e, tx);
    });
  const all = async () => {
    const out: Record<string, Doc[]> = {};
    for (const c of ['clicks', 'orders', REPORT_ITEMS, REPORT_HOURS, REPORT_DAYS]) out[c] = await reads.find(c, { orderBy: [{ field: '_id' }] });
    return out;
  };

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-commerce-proj-'));
    reads = SqliteReadStore.open({ path: path.join(dir, 'read.db'), sweepIntervalMs: 0 });
    await reads.ensureCollections(PROJECTORS.flatMap((p) => p.collections));
    record(streams.click(tenant, CLICK_ID), 'ClickRecorded', { ...CLICK, sku: 'sku-a', price_cents: 1000, source: 'sandbox' });
    // order-1: paid, refunded, cancelled; order-2: paid in the same hour; order-3: paid the day after
    const run = (orderId: string, inputs: ReturnType<typeof paid>[]) => {
      let state: OrderState = initialState();
      for (const input of inputs) {
        for (const e of decide(command({ ...input, order_id: orderId }), state).events) {
          state = evolve(state, e);
          record(streams.order(tenant, 'store-1', orderId), e.type, e.data);
        }
      }
    };
    run('order-1', [paid(), refund('ev-r', at(PAID_AT, 1000), { 'sku-a': 500 }), cancel('ev-c', at(PAID_AT, 2000))]);
    run('order-2', [paid({ event_id: 'ev-2', paid_at: at(PAID_AT, 60_000), occurred_at: at(PAID_AT, 60_000) })]);
    run('order-3', [paid({ event_id: 'ev-3', paid_at: at(PAID_AT, DAY), occurred_at: at(PAID_AT, DAY) })]);
  });
  after(async () => {
    await reads.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('keeps one document per click and order, the order in its latest state', async () => {
    await apply(log);
    const docs = await all();
    expect(docs.clicks.map((d) => d.click_id)).to.deep.equal([CLICK_ID]);
    const orders = docs.orders.map((d) => [d.order_id, (d.order as { status: string }).status]);
    expect(orders).to.deep.equal([['order-1', 'cancelled'], ['order-2', 'paid'], ['order-3', 'paid']]);
    expect(docs[REPORT_ITEMS]).to.have.length(4);
  });

  it('changes nothing when every event is applied again', async () => {
    const before = await all();
    await apply(log);
    expect(await all()).to.deep.equal(before);
  });

  it('holds in each hour and day bucket exactly the sum of its items', async () => {
    const docs = await all();
    for (const [level, collection, field] of [[1, REPORT_HOURS, 'hour'], [2, REPORT_DAYS, 'day']] as const) {
      const expected = new Map<string, ReturnType<typeof zeroFigures>>();
      for (const item of docs[REPORT_ITEMS]) {
        const key = `${item.store_id as string}:${periodOf(level, item.at as string)}`;
        expected.set(key, combine(expected.get(key) ?? zeroFigures(), figuresOf(item)));
      }
      const buckets = new Map(docs[collection].map((b) => [`${b.store_id as string}:${b[field] as string}`, figuresOf(b)]));
      expect(buckets).to.deep.equal(expected);
    }
    const hours = new Map(docs[REPORT_HOURS].map((b) => [`${b.store_id as string}:${b.hour as string}`, figuresOf(b)]));
    expect(hours.get(`store-1:${periodOf(1, PAID_AT)}`)).to.include({ clicks: 0, orders: 2, paid_orders: 1, cancelled_orders: 1 });
    const days = new Map(docs[REPORT_DAYS].map((b) => [`${b.store_id as string}:${b.day as string}`, figuresOf(b)]));
    expect(days.get(`store-1:${periodOf(2, PAID_AT)}`)).to.include({ orders: 2 });
  });
});
