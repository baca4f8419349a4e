/**
 * The order decider: `POST /conversions` as pure functions. State and `evolve` first, then `decide`, which
 * follows DECISIONS.md "Conversions" check by check: (0) the input rules a schema cannot express (422, every
 * field at once); (1) event_id seen before; (2) no order yet; (3) immutable fields; (4) a `paid` on an existing
 * order; (5) stale; (6) same instant; (7) the transition.
 *
 * Everything that needs I/O is resolved by the caller and passed in: the clock's `now`, the event_id reservation,
 * the click and the catalog's rules (only for a first `paid`, see requiresCreationData).
 *
 * The decider's shape is every aggregate's (`orderDecider`, see decider.ts); its answer is the receipt and the
 * event_id reservation to append first (command-api/services/conversions.ts runs it).
 */
import { invalid, conflict, fieldError, ProblemError, type FieldError } from '../../shared-schema/contract/problems.js';
import { streams, type Tenant } from '../../shared-schema/domain/streams.js';
import type { Commission, CommissionSource, EffectiveCommission } from '../../shared-schema/domain/commission.js';
import { orderFigures, toBigCents } from '../../shared-schema/domain/order-math.js';
import {
  receiptOf,
  type NormalizedConversion,
  type ConversionEventReservation,
  type ConversionInput,
  type ConversionReceipt,
  type OrderEvent,
  type OrderView,
} from '../../shared-schema/events/order.js';
import {
  validateConversion,
  normalizeConversion,
  conversionHash,
  canonicalDate,
  attributionFailure,
  ATTRIBUTION_MESSAGES,
  type AttributionClick,
} from './order-input.js';
import type { Decider, Decision } from './decider.js';

export * from './order-input.js';

// ---------------------------------------------------------------- state

export interface SeenEvent {
  body_hash: string;
  receipt: ConversionReceipt;
}

export interface OrderState {
  /** null until the first `paid`. */
  order: OrderView | null;
  /** Every event_id this order answered with 200, with the answer given then. A Map: ids may be `__proto__`. */
  seen: ReadonlyMap<string, SeenEvent>;
}

export const initialState = (): OrderState => ({ order: null, seen: new Map() });

export function evolve(state: OrderState, event: OrderEvent): OrderState {
  const seen = new Map(state.seen);
  seen.set(event.data.event.event_id, { body_hash: event.data.body_hash, receipt: receiptOf(event) });
  switch (event.type) {
    case 'OrderPaid':
    case 'OrderRefunded':
    case 'OrderCancelled':
      return { order: event.data.order, seen };
    case 'ConversionIgnoredStale':
    case 'ConversionRepeated':
      return { order: state.order, seen };
    default: {
      const unknown: never = event;
      throw new Error(`unknown order event ${JSON.stringify(unknown)}`);
    }
  }
}

// ---------------------------------------------------------------- command

export interface RecordConversion {
  type: 'RecordConversion';
  data: {
    tenant: Tenant;
    /** The body as received, after JSON Schema validation (error paths refer to its item indexes). */
    input: ConversionInput;
    /** ISO time from the injected clock. */
    now: string;
    /** The event of streams.conversionEvent(tenant, input.event_id), if any. */
    existingReservation: ConversionEventReservation | null;
    /** Needed when requiresCreationData: the click of input.click_id in this tenant, null when unknown. */
    click?: AttributionClick | null;
    /** Needed when requiresCreationData: each SKU's effective rule and source as of `now`. */
    rulesBySku?: Readonly<Record<string, EffectiveCommission>>;
  };
}

/** The answer of a decision; its events (empty for a repeat of a known event_id) go to the order stream. */
export interface OrderAnswer {
  receipt: ConversionReceipt;
  /** To append first to streams.conversionEvent with "no stream"; null when already reserved. */
  reserve: ConversionEventReservation | null;
}

export type OrderDecision = Decision<OrderEvent, OrderAnswer>;

/** True when decide will create the order, so the caller must load the click and the catalog's rules. */
export function requiresCreationData(state: OrderState, input: ConversionInput): boolean {
  return state.order === null && input.status === 'paid';
}

// ---------------------------------------------------------------- decide

/** Records one order event of `type` carrying `order`: the decision's only event, and its receipt. */
type Recorder = (type: OrderEvent['type'], order: OrderView) => OrderDecision;

export function decide(command: RecordConversion, state: OrderState): OrderDecision {
  const { tenant, input, existingReservation } = command.data;
  // (0) what the schema cannot say
  const errors = validateConversion(input, command.data.now);
  if (errors.length > 0) throw invalid(errors);

  const now = canonicalDate(command.data.now);
  const event = normalizeConversion(input);
  const bodyHash = conversionHash(event);
  const indexOf = new Map(input.items.map((item, i) => [item.sku, i]));
  const reserve: ConversionEventReservation | null = existingReservation
    ? null
    : {
        event_id: event.event_id,
        body_hash: bodyHash,
        store_id: event.store_id,
        order_id: event.order_id,
        order_stream: streams.order(tenant, event.store_id, event.order_id),
      };
  const record: Recorder = (type, order) => {
    const e = { type, data: { event, body_hash: bodyHash, received_at: now, order } };
    return { events: [e], result: { receipt: receiptOf(e), reserve } };
  };

  // (1) event_id seen before: the first answer, or event_conflict
  // (the body holds store_id and order_id, so an equal hash is this order; a reservation whose order never
  // learnt the event — a crash between the two appends — lets the same body through to be applied now)
  if (existingReservation && existingReservation.body_hash !== bodyHash) throw eventConflict();
  const seen = state.seen.get(event.event_id);
  if (seen) {
    if (seen.body_hash !== bodyHash) throw eventConflict();
    return { events: [], result: { receipt: { ...seen.receipt, duplicate: true }, reserve } };
  }

  // (2) no order yet: a paid creates it, anything else needs the payment first
  const order = state.order;
  if (order === null) return createOrder(command, event, now, record);

  // (3) immutable fields
  const differences = immutableDifferences(order, event, indexOf);
  if (differences.length > 0) throw new ProblemError(409, differences);

  // (4) a paid on an existing order
  if (event.status === 'paid') {
    if (order.status !== 'paid')
      throw invalidTransition('status', `the order is ${order.status}; it cannot be paid again`);
    return record('ConversionRepeated', order);
  }

  // (5) older than the last applied event
  const eventMs = Date.parse(event.occurred_at);
  const lastMs = Date.parse(order.occurred_at);
  if (eventMs < lastMs) return record('ConversionIgnoredStale', order);

  // (6) the same instant as the last applied event
  const refundedOf = new Map(order.items.map((item) => [item.sku, item.refunded_cents]));
  const sameRefunds = event.items.every((item) => refundedOf.get(item.sku) === item.refunded_cents);
  if (eventMs === lastMs) {
    if (event.status === order.status && sameRefunds) return record('ConversionRepeated', order);
    throw conflict('occurred_at', 'order_conflict', 'another event with other content was applied at this instant');
  }

  // (7) the transition
  return transition(order, event, indexOf, now, record);
}

/** Step (2): the first event of an order must be its payment, attributed to a click of the tenant. */
function createOrder(
  command: RecordConversion,
  event: NormalizedConversion,
  now: string,
  record: Recorder,
): OrderDecision {
  if (event.status !== 'paid')
    throw conflict('status', 'payment_required', 'no paid event for this order yet: send paid, then resend this event');
  const { tenant, input, click, rulesBySku } = command.data;
  if (click === undefined || rulesBySku === undefined)
    throw new Error('a first paid needs the click and the rules (see requiresCreationData)');
  const failure = attributionFailure(click, input, tenant);
  if (failure !== null)
    throw new ProblemError(422, [
      { ...fieldError('click_id', 'invalid_attribution', ATTRIBUTION_MESSAGES[failure]), reason: failure },
    ]);
  // The commission of each line is the rule in force when the order is paid, kept for the order's life.
  const lines = event.items.map((item) => {
    const rule = Object.hasOwn(rulesBySku, item.sku) ? rulesBySku[item.sku] : undefined;
    if (rule === undefined) throw new Error(`no rule resolved for sku ${item.sku}`);
    return { ...item, commission: rule.commission, commission_source: rule.commission_source };
  });
  return record('OrderPaid', buildView(event, lines, { snapshotAt: now, recordedAt: now, updatedAt: now }));
}

/** Step (7): a later refund or cancellation of a paid or refunded order; refunds never decrease. */
function transition(
  order: OrderView,
  event: NormalizedConversion,
  indexOf: Map<string, number>,
  now: string,
  record: Recorder,
): OrderDecision {
  if (order.status === 'cancelled') {
    if (event.status === 'cancelled') return record('ConversionRepeated', order); // full refunds on both sides
    throw invalidTransition('status', 'the order is cancelled');
  }
  const refundedOf = new Map(order.items.map((item) => [item.sku, item.refunded_cents]));
  const lowered: FieldError[] = event.items
    .filter((item) => item.refunded_cents < refundedOf.get(item.sku)!)
    .map((item) =>
      fieldError(`items[${indexOf.get(item.sku)}].refunded_cents`, 'invalid_transition', 'refunds never decrease'),
    );
  if (lowered.length > 0) throw new ProblemError(409, lowered);
  const refundOf = new Map(event.items.map((item) => [item.sku, item.refunded_cents]));
  const lines = order.items.map((item) => ({ ...item, refunded_cents: refundOf.get(item.sku)! }));
  const next = buildView(event, lines, {
    snapshotAt: order.commission_snapshot_at,
    recordedAt: order.recorded_at,
    updatedAt: now,
  });
  return record(event.status === 'cancelled' ? 'OrderCancelled' : 'OrderRefunded', next);
}

// ---------------------------------------------------------------- helpers

const eventConflict = () => conflict('event_id', 'event_conflict', 'this event_id was already used with another body');
const invalidTransition = (field: string, message: string) => conflict(field, 'invalid_transition', message);

function immutableDifferences(
  order: OrderView,
  event: NormalizedConversion,
  indexOf: Map<string, number>,
): FieldError[] {
  const diff = (field: string, what: string) => fieldError(field, 'order_conflict', `${what} differs from the order's`);
  const out: FieldError[] = [];
  if (event.click_id !== order.click_id) out.push(diff('click_id', 'click_id'));
  if (event.paid_at !== order.paid_at) out.push(diff('paid_at', 'paid_at'));
  const original = new Map(order.items.map((item) => [item.sku, item]));
  if (event.items.length !== original.size || event.items.some((item) => !original.has(item.sku))) {
    out.push(diff('items', 'the set of SKUs'));
    return out;
  }
  for (const item of event.items) {
    const was = original.get(item.sku)!;
    const i = indexOf.get(item.sku);
    if (item.quantity !== was.quantity) out.push(diff(`items[${i}].quantity`, 'quantity'));
    if (item.unit_price_cents !== was.unit_price_cents)
      out.push(diff(`items[${i}].unit_price_cents`, 'unit_price_cents'));
  }
  return out;
}

interface SnapshotLine {
  sku: string;
  quantity: number;
  unit_price_cents: number;
  refunded_cents: number;
  commission: Commission;
  commission_source: CommissionSource;
}

function buildView(
  event: NormalizedConversion,
  lines: readonly SnapshotLine[],
  times: { snapshotAt: string; recordedAt: string; updatedAt: string },
): OrderView {
  const figures = orderFigures(lines);
  return {
    event_id: event.event_id,
    order_id: event.order_id,
    store_id: event.store_id,
    click_id: event.click_id,
    status: event.status,
    currency: 'BRL',
    paid_at: event.paid_at,
    occurred_at: event.occurred_at,
    items: lines.map((line, i) => {
      const expected = figures.lines[i].expected;
      return {
        sku: line.sku,
        quantity: line.quantity,
        unit_price_cents: line.unit_price_cents,
        refunded_cents: line.refunded_cents,
        commission: line.commission,
        commission_source: line.commission_source,
        expected_commission_cents: expected === null ? null : toBigCents(expected),
      };
    }),
    gross_cents: figures.gross_cents,
    refunded_cents: figures.refunded_cents,
    net_cents: figures.net_cents,
    expected_commission_cents: figures.expected === null ? null : toBigCents(figures.expected),
    known_expected_commission_cents: toBigCents(figures.known_expected),
    commission_snapshot_at: times.snapshotAt,
    recorded_at: times.recordedAt,
    updated_at: times.updatedAt,
  };
}

export const orderDecider: Decider<OrderState, RecordConversion, OrderEvent, OrderAnswer> = {
  name: 'order',
  initialState,
  evolve,
  decide,
};
