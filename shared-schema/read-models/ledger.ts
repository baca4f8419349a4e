/**
 * The movements read model (spec LEDGER.md), written by projections/projectors/ledger.ts, served by
 * `GET /statement` and the closings: one document per conversion event applied to an order's balance, booked at
 * its `recorded_at`, with its signed deltas and the running balances of its two scopes (the partner and environment,
 * and its store), so that a balance at any point is one indexed read of the movement just before it.
 *
 * Cents are kept as exact decimal text (`"-1500"`): a delta is signed and a running total may pass 2^53. Each
 * movement also carries its line of the closing's CSV (`csv`), written by the projector with `csvLine`, so that a
 * month's download reads that text alone; a movement projected before the field existed has none, and its line is
 * written from its fields at the download, by the same function.
 * `ledger_state` holds what the projector needs to compute the next movement: per order, its figures after the last
 * movement; per scope, the running balances.
 */
import type { ConversionStatus, OrderView } from '../events/order.js';
import { fromBigCents } from '../domain/order-math.js';
import type { CollectionSpec } from '../ports/read-store.js';
import type { Tenant } from '../domain/streams.js';
import { scopedId, type ScopedDoc } from './scoped-id.js';

export const LEDGER = {
  projection: 'ledger',
  movements: 'ledger_movements',
  state: 'ledger_state',
} as const;

/** Signed exact cents as decimal text. */
export type SignedCents = string;

export type MovementDoc = ScopedDoc & {
  event_id: string;
  store_id: string;
  order_id: string;
  type: ConversionStatus;
  occurred_at: string;
  recorded_at: string;
  net_delta: SignedCents;
  known_delta: SignedCents;
  expected_delta: SignedCents | null;
  /** Running balances of the partner and environment, this movement included. */
  net_balance: SignedCents;
  known_balance: SignedCents;
  /** Running balances of the movement's store, this movement included. */
  store_net_balance: SignedCents;
  store_known_balance: SignedCents;
  /**
   * Its line of the closing's CSV, CRLF included: `csvLine` of the fields above, written with them. Absent on a
   * movement projected by a version before it (the download writes the line from the fields then).
   */
  csv?: string;
};

/** Per order: its figures after its last movement. Per scope: its running balances. */
export type LedgerStateDoc = ScopedDoc & {
  net: SignedCents;
  known: SignedCents;
  /** Orders only: null while an expectation is unknown. */
  expected?: SignedCents | null;
  /** The partner and environment's scope only: the booking time of its last movement. */
  booked_at?: string;
};

export const movementDocId = (t: Tenant, eventId: string): string => scopedId(t, `m:${eventId}`);
export const ledgerOrderId = (t: Tenant, storeId: string, orderId: string): string =>
  scopedId(t, `o:${storeId}:${orderId}`);
/** The scope of a partner and environment (`storeId` undefined) or of one of its stores. */
export const ledgerScopeId = (t: Tenant, storeId?: string): string =>
  storeId === undefined ? scopedId(t, 'all') : scopedId(t, `s:${storeId}`);

/** Movements sort by booking time, then by recording order (the log position); `_id` is the last tie-breaker. */
export const MOVEMENT_ORDER = [{ field: 'recorded_at' }, { field: 'position' }] as const;

export const LEDGER_COLLECTIONS: readonly CollectionSpec[] = [
  {
    name: LEDGER.movements,
    indexes: [
      ['partner_id', 'env', 'recorded_at', 'position'],
      ['partner_id', 'env', 'store_id', 'recorded_at', 'position'],
    ],
    applyIndexes: [], // the projector only adds movements
    // The CSV reads its lines alone (SQLite: from a column of their own, no document parsed).
    projected: ['csv'],
  },
  { name: LEDGER.state, indexes: [] },
];

/** The figures of an order a movement changes. */
export interface OrderBalance {
  net: bigint;
  known: bigint;
  /** null: unknown. */
  expected: bigint | null;
}

/** Before the first `paid` an order is all zeros, its expectation known (0). */
export const NO_ORDER: OrderBalance = { net: 0n, known: 0n, expected: 0n };

/** The figures of an order as `GET /conversions/{order_id}` answers them. */
export const balanceOf = (order: OrderView): OrderBalance => ({
  net: BigInt(order.net_cents),
  known: fromBigCents(order.known_expected_commission_cents),
  expected: order.expected_commission_cents === null ? null : fromBigCents(order.expected_commission_cents),
});

export interface MovementDeltas {
  net: bigint;
  known: bigint;
  expected: bigint | null;
}

/** after − before; the expectation's change only when both are known. */
export const deltasOf = (before: OrderBalance, after: OrderBalance): MovementDeltas => ({
  net: after.net - before.net,
  known: after.known - before.known,
  expected: before.expected !== null && after.expected !== null ? after.expected - before.expected : null,
});

const SIGNED_CENTS = /^(0|-?[1-9][0-9]*)$/;

/**
 * The stored form checked and kept as text: canonical decimal, so it is already what `BigInt(text).toString()`
 * writes (a CSV line needs no BigInt round trip).
 */
export const centsText = (text: SignedCents): SignedCents => {
  if (!SIGNED_CENTS.test(text)) throw new RangeError(`not a signed cents value: ${text}`);
  return text;
};

/** Reads signed decimal text (the stored form) back. */
export const cents = (text: SignedCents): bigint => BigInt(centsText(text));

/**
 * An exact integer as an answer carries it: a number while it is a safe integer, else its decimal text, which
 * stringifyBigCents (http/big-json.ts) writes as a bare JSON integer.
 */
export const answerCents = (value: bigint): number | string =>
  value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER)
    ? Number(value)
    : value.toString();

// ---------------------------------------------------------------------------------------------------------- CSV

export const CSV_HEADER =
  'recorded_at,occurred_at,store_id,order_id,event_id,type,net_delta_cents,known_expected_commission_delta_cents,' +
  'expected_commission_delta_cents,net_balance_cents,known_expected_commission_balance_cents';

/** RFC 4180: a field holding a comma, a quote, CR or LF is quoted, its quotes doubled. */
export const csvField = (text: string): string => (/[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text);

/**
 * Already in `toISOString` form (checked without parsing: a day up to 28, an hour up to 23, which every month and
 * day has) it is kept; anything else is parsed and written again, which rolls over e.g. `02-30` as `Date` does.
 */
const CANONICAL_ISO = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|1\d|2[0-8])T([01]\d|2[0-3]):[0-5]\d:[0-5]\d\.\d{3}Z$/;
const isoMs = (at: string): string => (CANONICAL_ISO.test(at) ? at : new Date(at).toISOString());

/**
 * A movement's line of the closing's CSV (whole scope: the partner and environment's balances), CRLF included.
 * The projector stores it on the movement (`csv`) and the download writes it again for a movement without one, so
 * this function alone decides the bytes: changing it changes no stored line, and would need the `ledger` projection
 * rebuilt. Timestamps and cents never hold a comma, a quote, CR or LF, so only the partner's texts go through
 * `csvField`.
 */
export function csvLine(m: MovementDoc): string {
  const expected = m.expected_delta === null ? '' : centsText(m.expected_delta);
  return (
    `${isoMs(m.recorded_at)},${isoMs(m.occurred_at)},${csvField(m.store_id)},${csvField(m.order_id)},` +
    `${csvField(m.event_id)},${csvField(m.type)},${centsText(m.net_delta)},${centsText(m.known_delta)},` +
    `${expected},${centsText(m.net_balance)},${centsText(m.known_balance)}\r\n`
  );
}
