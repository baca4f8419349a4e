/**
 * The commercial cycle: what a partner sends to `POST /conversions`, what the service answers, and the events
 * of the order stream (`streams.order`) and of the event_id reservation stream (`streams.conversionEvent`).
 *
 * Every order event carries the normalized event that caused it and the order as it stood right after it
 * (`order`). So the answer to a repeat is the stored one, forever, and a projection takes `order` as it is.
 * The facts needed to recompute it (normalized events, the rule snapshot inside `order.items`) are kept too.
 */
import type { Commission, CommissionSource } from '../domain/commission.js';
import type { BigCents } from '../domain/order-math.js';

export type ConversionStatus = 'paid' | 'refunded' | 'cancelled';

export interface ConversionItem {
  sku: string;
  quantity: number;
  unit_price_cents: number;
  /** Cumulative refund of the whole line (not per unit, not this event's increment). */
  refunded_cents: number;
}

/** Body of `POST /conversions` as received (after JSON Schema validation; item order and date forms as sent). */
export interface ConversionInput {
  event_id: string;
  order_id: string;
  store_id: string;
  click_id: string;
  status: ConversionStatus;
  currency: string;
  paid_at: string;
  occurred_at: string;
  items: ConversionItem[];
}

/**
 * A ConversionInput normalized: items sorted by `sku` (code-unit order), `paid_at` and `occurred_at` rewritten as
 * UTC ISO 8601 with milliseconds (`2026-01-02T03:04:05.000Z`). Two bodies are "the same normalized input" when
 * their normalized forms are equal.
 */
export interface NormalizedConversion extends ConversionInput {
  currency: 'BRL';
}

export interface CommissionSnapshotItem {
  sku: string;
  quantity: number;
  unit_price_cents: number;
  refunded_cents: number;
  /** Effective rule at the first `paid` receipt; later catalog changes do not alter it. */
  commission: Commission;
  commission_source: CommissionSource;
  expected_commission_cents: BigCents | null;
}

export interface OrderView {
  /** Last event applied to the balance. */
  event_id: string;
  order_id: string;
  store_id: string;
  click_id: string;
  status: ConversionStatus;
  currency: 'BRL';
  paid_at: string;
  /** `occurred_at` of the last event applied to the balance. */
  occurred_at: string;
  /** Sorted by sku. */
  items: CommissionSnapshotItem[];
  gross_cents: number;
  refunded_cents: number;
  net_cents: number;
  expected_commission_cents: BigCents | null;
  known_expected_commission_cents: BigCents;
  commission_snapshot_at: string;
  /** When the first `paid` was received (equals `commission_snapshot_at`). */
  recorded_at: string;
  /** When the last event applied to the balance was received. */
  updated_at: string;
}

export interface ConversionReceipt extends OrderView {
  duplicate: boolean;
  ignored_stale: boolean;
}

export interface OrderEventData {
  /** The normalized event received. */
  event: NormalizedConversion;
  /** conversionHash(event): what a later repeat of `event.event_id` must match. */
  body_hash: string;
  /** When the service received it (the injected clock). */
  received_at: string;
  /** The order right after this event (unchanged by the two audit-only events). */
  order: OrderView;
}

export type OrderEvent =
  /** First `paid`: the order exists; `order.items` hold the rule snapshot. */
  | { type: 'OrderPaid'; data: OrderEventData }
  | { type: 'OrderRefunded'; data: OrderEventData }
  | { type: 'OrderCancelled'; data: OrderEventData }
  /** Audit only: an event older than the last applied one; answered with `ignored_stale: true`. */
  | { type: 'ConversionIgnoredStale'; data: OrderEventData }
  /**
   * Audit only: a new event_id that changes nothing — a second `paid` with the same immutable fields, the same
   * content at the instant of the last applied event, or a newer `cancelled` of a cancelled order.
   */
  | { type: 'ConversionRepeated'; data: OrderEventData };

export type OrderEventType = OrderEvent['type'];

/** Event types that change the balance (and `event_id` / `occurred_at` of the view). */
export const APPLIED_ORDER_EVENTS: readonly OrderEventType[] = ['OrderPaid', 'OrderRefunded', 'OrderCancelled'];

/** The answer given when this event was received (a later repeat answers it with `duplicate: true`). */
export function receiptOf(event: OrderEvent): ConversionReceipt {
  return { ...event.data.order, duplicate: false, ignored_stale: event.type === 'ConversionIgnoredStale' };
}

/**
 * Events of `convevent-{env}:{partner}:{event_id}`: the event_id is taken, for this body, by this order.
 * Appended with expected revision "no stream" before the order events. It carries no receipt on purpose: if the
 * order append then loses a race the decision is taken again and may answer differently, so the receipt of a
 * repeat always comes from the order stream. What a crash between the two appends leaves, and how a repeat then
 * fares: docs/adr/0016-conversions.md.
 */
export type ConversionEventReservationEvent = {
  type: 'ConversionEventReserved';
  data: ConversionEventReservation & { reserved_at: string };
};

export interface ConversionEventReservation {
  event_id: string;
  body_hash: string;
  store_id: string;
  order_id: string;
  /** streams.order(tenant, store_id, order_id) */
  order_stream: string;
}
