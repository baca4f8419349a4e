/**
 * The orders read model, written by projections/projectors/orders.ts, served by `GET /conversions` and
 * `GET /conversions/{order_id}`: one document per order holding the OrderView of its last event applied to the
 * balance. Ids sort by store then order inside one partner and environment, so `_id` is the list's last tie-breaker.
 */
import type { CollectionSpec } from '../ports/read-store.js';
import type { OrderView } from '../events/order.js';
import type { Tenant } from '../domain/streams.js';
import { scopedId, type ScopedDoc } from './scoped-id.js';

export const ORDERS = 'orders';

export type OrderDoc = ScopedDoc & {
  store_id: string;
  order_id: string;
  paid_at: string;
  order: OrderView;
};

export const orderDocId = (t: Tenant, storeId: string, orderId: string): string => scopedId(t, `${storeId}:${orderId}`);

export const ORDER_COLLECTIONS: readonly CollectionSpec[] = [
  {
    name: ORDERS,
    indexes: [
      ['partner_id', 'env', 'paid_at', 'store_id'],
      ['partner_id', 'env', 'store_id', 'paid_at'],
    ],
    applyIndexes: [], // the projector reads orders by `_id` only
  },
];
