/**
 * Orders as `GET /conversions` and `GET /conversions/{order_id}` read them: one document per order holding the
 * OrderView of its last event applied to the balance (audit-only events change nothing). Ids sort by store then
 * order inside one partner and environment, so `_id` is the list's last tie-breaker.
 */
import { APPLIED_ORDER_EVENTS, type OrderEvent, type OrderView } from '../../shared-schema/events/order.js';
import { scopedId, streamScope, type Projector } from '../projector.js';

export type OrderDoc = {
  _id: string;
  partner_id: string;
  env: 'live' | 'test';
  store_id: string;
  order_id: string;
  paid_at: string;
  order: OrderView;
  position: number;
};

export const ORDERS = 'orders';

export const orderDocId = (env: string, partnerId: string, storeId: string, orderId: string): string =>
  scopedId(env, partnerId, `${storeId}:${orderId}`);

export const ordersProjector: Projector = {
  name: 'orders',
  collections: [
    {
      name: ORDERS,
      indexes: [
        ['partner_id', 'env', 'paid_at', 'store_id'],
        ['partner_id', 'env', 'store_id', 'paid_at'],
      ],
    },
  ],
  categories: ['order'],
  async apply(recorded, tx) {
    const e = { type: recorded.type, data: recorded.data } as OrderEvent;
    if (!APPLIED_ORDER_EVENTS.includes(e.type)) return;
    const { env, partnerId } = streamScope(recorded.stream);
    const order = e.data.order;
    const id = orderDocId(env, partnerId, order.store_id, order.order_id);
    const current = await tx.get<OrderDoc>(ORDERS, id);
    if (current && current.position >= recorded.position) return;
    const doc: OrderDoc = {
      _id: id,
      partner_id: partnerId,
      env,
      store_id: order.store_id,
      order_id: order.order_id,
      paid_at: order.paid_at,
      order,
      position: recorded.position,
    };
    await tx.put(ORDERS, doc);
  },
};
