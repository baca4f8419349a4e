/**
 * Movements as the statement and the closings read them (the model: shared-schema/read-models/ledger.ts). Every
 * event applied to an order's balance is one movement: its deltas are the order's figures after it (the view the
 * decider computed with order-math.ts, carried by the event) minus those after the order's previous movement.
 * Audit-only events (repeats, stale events) are not movements. Events come in log order, and the log's order is the
 * order of `recorded_at` (the event store books them so), so running balances are a running sum here.
 */
import { asUnion } from '../../shared-schema/ports/event-store.js';
import { APPLIED_ORDER_EVENTS, type OrderEvent } from '../../shared-schema/events/order.js';
import {
  LEDGER,
  LEDGER_COLLECTIONS,
  NO_ORDER,
  balanceOf,
  cents,
  csvLine,
  deltasOf,
  ledgerOrderId,
  ledgerScopeId,
  movementDocId,
  type LedgerStateDoc,
  type MovementDoc,
  type OrderBalance,
} from '../../shared-schema/read-models/ledger.js';
import { alreadyApplied, streamScope, type Projector } from '../projector.js';

const text = (value: bigint): string => value.toString();

export const ledgerProjector: Projector = {
  name: LEDGER.projection,
  collections: LEDGER_COLLECTIONS,
  categories: ['order'],
  async apply(recorded, tx) {
    const e = asUnion<OrderEvent>(recorded);
    if (!APPLIED_ORDER_EVENTS.includes(e.type)) return;
    const { env, partnerId } = streamScope(recorded.stream);
    const tenant = { env, partnerId };
    const order = e.data.order;
    const orderId = ledgerOrderId(tenant, order.store_id, order.order_id);
    const orderState = await tx.get<LedgerStateDoc>(LEDGER.state, orderId);
    if (alreadyApplied(orderState, recorded)) return;
    const before: OrderBalance = orderState
      ? { net: cents(orderState.net), known: cents(orderState.known), expected: nullable(orderState.expected) }
      : NO_ORDER;
    const after = balanceOf(order);
    const delta = deltasOf(before, after);
    const owner = { partner_id: partnerId, env, position: recorded.position };
    // Booked at the event's recorded_at, never before the scope's previous movement: the SQLite store already books
    // in log order, and this keeps running balances (summed in log order) in the order the statement shows them on a
    // store that does not (EventStoreDB keeps the time its command read;
    // docs/adr/0076-ledger-movements-and-closings.md).
    const scopeId = ledgerScopeId(tenant);
    const scope = await tx.get<LedgerStateDoc>(LEDGER.state, scopeId);
    const stamped = new Date(recorded.metadata.recorded_at).toISOString();
    const bookedAt = scope?.booked_at !== undefined && scope.booked_at > stamped ? scope.booked_at : stamped;
    const next = async (id: string, head: LedgerStateDoc | null, extra: Partial<LedgerStateDoc> = {}) => {
      const net = (head ? cents(head.net) : 0n) + delta.net;
      const known = (head ? cents(head.known) : 0n) + delta.known;
      await tx.put(LEDGER.state, { _id: id, ...owner, net: text(net), known: text(known), ...extra });
      return { net, known };
    };
    const all = await next(scopeId, scope, { booked_at: bookedAt });
    const storeId = ledgerScopeId(tenant, order.store_id);
    const store = await next(storeId, await tx.get<LedgerStateDoc>(LEDGER.state, storeId));
    await tx.put(LEDGER.state, {
      _id: orderId,
      ...owner,
      net: text(after.net),
      known: text(after.known),
      expected: after.expected === null ? null : text(after.expected),
    });
    const movement: MovementDoc = {
      _id: movementDocId(tenant, order.event_id),
      ...owner,
      event_id: order.event_id,
      store_id: order.store_id,
      order_id: order.order_id,
      type: order.status,
      occurred_at: order.occurred_at,
      recorded_at: bookedAt,
      net_delta: text(delta.net),
      known_delta: text(delta.known),
      expected_delta: delta.expected === null ? null : text(delta.expected),
      net_balance: text(all.net),
      known_balance: text(all.known),
      store_net_balance: text(store.net),
      store_known_balance: text(store.known),
    };
    // The line goes on the movement itself (a fresh object), after its other fields as a copy would put it: V8
    // copies an object with keys added after a spread many times slower (measured: ~2 µs per movement).
    const { csv } = lineOf(movement);
    if (csv !== undefined) movement.csv = csv;
    await tx.put(LEDGER.movements, movement);
  },
};

const nullable = (value: string | null | undefined): bigint | null =>
  value === null || value === undefined ? null : cents(value);

/**
 * The movement's line of the closing's CSV, written now so that a download reads it without the movement
 * (docs/adr/0098-stream-pages.md). A movement whose line cannot be written (a date `Date` cannot read, which the
 * doors never let through) is stored without one: the download writes it from the fields, and fails as it always did,
 * rather than this projector stopping on it.
 */
function lineOf(movement: MovementDoc): { csv?: string } {
  try {
    return { csv: csvLine(movement) };
  } catch {
    return {};
  }
}
