/** Orders as `GET /conversions` reads them (the model: shared-schema/read-models/orders.ts); audit-only events change nothing. */
import { asUnion } from '../../shared-schema/ports/event-store.js';
import { APPLIED_ORDER_EVENTS, type OrderEvent } from '../../shared-schema/events/order.js';
import { ORDERS, ORDER_COLLECTIONS, orderDocId, type OrderDoc } from '../../shared-schema/read-models/orders.js';
import { alreadyApplied, streamScope, type Projector } from '../projector.js';

export const ordersProjector: Projector = {
  name: 'orders',
  collections: ORDER_COLLECTIONS,
  categories: ['order'],
  async apply(recorded, tx) {
    const e = asUnion<OrderEvent>(recorded);
    if (!APPLIED_ORDER_EVENTS.includes(e.type)) return;
    const { env, partnerId } = streamScope(recorded.stream);
    const order = e.data.order;
    const id = orderDocId({ env, partnerId }, order.store_id, order.order_id);
    if (alreadyApplied(await tx.get<OrderDoc>(ORDERS, id), recorded)) return;
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
