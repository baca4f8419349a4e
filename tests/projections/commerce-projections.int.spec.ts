/**
 * Projection level: given the events of clicks and orders (orders decided by the real decider), then the documents,
 * through the projection runner (tests/support/projector-spec.ts). Replaying every event changes nothing; every hour
 * bucket equals the sum of its items.
 */
import { expect } from 'chai';
import type { Doc } from '../../shared-schema/ports/read-store.js';
import { streams } from '../../shared-schema/domain/streams.js';
import { orderDecider } from '../../command-api/deciders/order.js';
import { clicksProjector } from '../../projections/projectors/clicks.js';
import { ordersProjector } from '../../projections/projectors/orders.js';
import { reportProjector } from '../../projections/projectors/report.js';
import { CLICKS, clickDocId } from '../../shared-schema/read-models/clicks.js';
import { ORDERS } from '../../shared-schema/read-models/orders.js';
import { REPORT, combine, figuresOf, periodOf, zeroFigures } from '../../shared-schema/read-models/report.js';

const { items: REPORT_ITEMS, hours: REPORT_HOURS, days: REPORT_DAYS } = REPORT;
import { CLICK, CLICK_ID, PAID_AT, command, paid, refund, cancel, tenant, at, DAY } from '../support/order-fixtures.js';
import { recorded } from '../support/decider-given.js';
import { ProjectorSpec, type GivenEvent } from '../support/projector-spec.js';

describe('commerce projections (SQLite read store, projection runner)', () => {
  let spec: ProjectorSpec;
  const click = { ...CLICK, sku: 'sku-a', price_cents: 1000, source: 'sandbox' as const };
  const all = async () => {
    const out: Record<string, Doc[]> = {};
    for (const c of [CLICKS, ORDERS, REPORT_ITEMS, REPORT_HOURS, REPORT_DAYS]) out[c] = await spec.documents(c);
    return out;
  };

  before(async () => {
    spec = await ProjectorSpec.open(clicksProjector, ordersProjector, reportProjector);
    // order-1: paid, refunded, cancelled; order-2: paid in the same hour; order-3: paid the day after
    const order = (orderId: string, inputs: ReturnType<typeof paid>[]): GivenEvent[] =>
      recorded(orderDecider, ...inputs.map((input) => command({ ...input, order_id: orderId }))).map((e) => ({
        stream: streams.order(tenant, 'store-1', orderId),
        ...e,
      }));
    await spec.given(
      { stream: streams.click(tenant, CLICK_ID), type: 'ClickRecorded', data: click },
      ...order('order-1', [
        paid(),
        refund('ev-r', at(PAID_AT, 1000), { 'sku-a': 500 }),
        cancel('ev-c', at(PAID_AT, 2000)),
      ]),
      ...order('order-2', [paid({ event_id: 'ev-2', paid_at: at(PAID_AT, 60_000), occurred_at: at(PAID_AT, 60_000) })]),
      ...order('order-3', [paid({ event_id: 'ev-3', paid_at: at(PAID_AT, DAY), occurred_at: at(PAID_AT, DAY) })]),
    );
  });
  after(async () => {
    await spec.close();
  });

  it('keeps the click as GET /clicks lists it, and its channel (none here)', async () => {
    await spec.thenDocuments(CLICKS, [
      {
        _id: clickDocId(tenant, CLICK_ID),
        partner_id: tenant.partnerId,
        env: tenant.env,
        click_id: CLICK_ID,
        store_id: click.store_id,
        sku: 'sku-a',
        price_cents: 1000,
        occurred_at: click.occurred_at,
        channel_id: null,
        position: 1,
      },
    ]);
  });

  it('keeps one document per click and order, the order in its latest state', async () => {
    const docs = await all();
    expect(docs[CLICKS].map((d) => d.click_id)).to.deep.equal([CLICK_ID]);
    const orders = docs[ORDERS].map((d) => [d.order_id, (d.order as { status: string }).status]);
    expect(orders).to.deep.equal([
      ['order-1', 'cancelled'],
      ['order-2', 'paid'],
      ['order-3', 'paid'],
    ]);
    expect(docs[REPORT_ITEMS]).to.have.length(4);
  });

  it('changes nothing when every event is applied again', async () => {
    const before = await all();
    await spec.replayAll();
    expect(await all()).to.deep.equal(before);
  });

  it('holds in each hour and day bucket exactly the sum of its items', async () => {
    const docs = await all();
    for (const [level, collection, field] of [
      [1, REPORT_HOURS, 'hour'],
      [2, REPORT_DAYS, 'day'],
    ] as const) {
      const expected = new Map<string, ReturnType<typeof zeroFigures>>();
      for (const item of docs[REPORT_ITEMS]) {
        const key = `${item.store_id as string}:${periodOf(level, item.at as string)}`;
        expected.set(key, combine(expected.get(key) ?? zeroFigures(), figuresOf(item)));
      }
      const buckets = new Map(
        docs[collection].map((b) => [`${b.store_id as string}:${b[field] as string}`, figuresOf(b)]),
      );
      expect(buckets).to.deep.equal(expected);
    }
    const hours = new Map(docs[REPORT_HOURS].map((b) => [`${b.store_id as string}:${b.hour as string}`, figuresOf(b)]));
    expect(hours.get(`store-1:${periodOf(1, PAID_AT)}`)).to.include({
      clicks: 0,
      orders: 2,
      paid_orders: 1,
      cancelled_orders: 1,
    });
    const days = new Map(docs[REPORT_DAYS].map((b) => [`${b.store_id as string}:${b.day as string}`, figuresOf(b)]));
    expect(days.get(`store-1:${periodOf(2, PAID_AT)}`)).to.include({ orders: 2 });
  });
});
