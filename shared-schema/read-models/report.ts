/**
 * The commission report's read model, written by projections/projectors/report.ts, served by
 * `GET /reports/commission`: its figures (contract "CommercialTotals", DECISIONS.md "Reports"), kept per click, per
 * order and per hour and day bucket, and added up by the query door.
 *
 * Stored documents keep every cents figure as two integer limbs, `<name>_hi × 10^12 + <name>_lo`, so that the read
 * store's exact `sum` never meets a value beyond what its engine adds natively (SQLite stops at 2^63; a single
 * order's fixed commission may pass 10^22). Sums of `_lo` stay exact for up to 9 million documents per query.
 */
import type { OrderView } from '../events/order.js';
import { fromBigCents, toBigCents, type BigCents } from '../domain/order-math.js';
import type { CollectionSpec } from '../ports/read-store.js';
import type { Environment, Tenant } from '../domain/streams.js';
import { scopedId } from './scoped-id.js';

export const LIMB = 1_000_000_000_000n;

/** Names shared by the report projector (which writes them) and the query door (which reads them). */
export const REPORT = {
  /** The projector's name: its checkpoint moves with every unit of work that may change the report. */
  projection: 'report',
  items: 'report_items',
  hours: 'report_hours',
  days: 'report_days',
} as const;

type Owner = { partner_id: string; env: Environment; store_id: string };
type Stored = { _id: string } & Owner & Record<string, unknown>;
/** One click (at its `occurred_at`) or one order (at its `paid_at`, figures of its current state). */
export type ReportItemDoc = Stored & { kind: 'click' | 'order'; at: string; position: number };
/** The sum of the items of one UTC hour (`hour`) or day (`day`): the ISO start of its period. */
export type ReportBucketDoc = Stored;

export const reportClickId = (t: Tenant, clickId: string): string => scopedId(t, `c:${clickId}`);
export const reportOrderId = (t: Tenant, storeId: string, orderId: string): string =>
  scopedId(t, `o:${storeId}:${orderId}`);
export const reportBucketId = (t: Tenant, storeId: string, period: string): string =>
  scopedId(t, `${storeId}:${period}`);

export const REPORT_COLLECTIONS: readonly CollectionSpec[] = [
  {
    name: REPORT.items,
    indexes: [
      ['partner_id', 'env', 'at'],
      ['partner_id', 'env', 'store_id', 'at'],
    ],
    applyIndexes: [], // the projector reads by `_id` only
  },
  {
    name: REPORT.hours,
    indexes: [
      ['partner_id', 'env', 'hour'],
      ['partner_id', 'env', 'store_id', 'hour'],
    ],
    applyIndexes: [], // the projector reads by `_id` only
  },
  {
    name: REPORT.days,
    indexes: [
      ['partner_id', 'env', 'day'],
      ['partner_id', 'env', 'store_id', 'day'],
    ],
    applyIndexes: [], // the projector reads by `_id` only
  },
];

export const COUNT_FIELDS = [
  'clicks',
  'orders',
  'paid_orders',
  'refunded_orders',
  'cancelled_orders',
  'unknown_commission_orders',
] as const;
export const MONEY_FIELDS = ['gross', 'refunded', 'net', 'known'] as const;

type CountField = (typeof COUNT_FIELDS)[number];
type MoneyField = (typeof MONEY_FIELDS)[number];

export type ReportFigures = Record<CountField, number> & Record<MoneyField, bigint>;

/** The numeric fields of a stored report document (the `sum` query's `fields`). */
export const STORED_FIELDS: readonly string[] = [
  ...COUNT_FIELDS,
  ...MONEY_FIELDS.flatMap((m) => [`${m}_hi`, `${m}_lo`]),
];

export const zeroFigures = (): ReportFigures => ({
  clicks: 0,
  orders: 0,
  paid_orders: 0,
  refunded_orders: 0,
  cancelled_orders: 0,
  unknown_commission_orders: 0,
  gross: 0n,
  refunded: 0n,
  net: 0n,
  known: 0n,
});

export const clickFigures = (): ReportFigures => ({ ...zeroFigures(), clicks: 1 });

/** One order as the report counts it: by its current status and balance. */
export function orderFigures(order: OrderView): ReportFigures {
  return {
    ...zeroFigures(),
    orders: 1,
    paid_orders: order.status === 'paid' ? 1 : 0,
    refunded_orders: order.status === 'refunded' ? 1 : 0,
    cancelled_orders: order.status === 'cancelled' ? 1 : 0,
    unknown_commission_orders: order.expected_commission_cents === null ? 1 : 0,
    gross: BigInt(order.gross_cents),
    refunded: BigInt(order.refunded_cents),
    net: BigInt(order.net_cents),
    known: fromBigCents(order.known_expected_commission_cents),
  };
}

/** a + sign × b. */
export function combine(a: ReportFigures, b: ReportFigures, sign: 1 | -1 = 1): ReportFigures {
  const out = zeroFigures();
  for (const f of COUNT_FIELDS) out[f] = a[f] + sign * b[f];
  for (const f of MONEY_FIELDS) out[f] = a[f] + BigInt(sign) * b[f];
  return out;
}

/**
 * The figures as stored fields (money in limbs). Zeros are left out (a click item is `clicks: 1` and nothing else):
 * a missing field adds nothing to a sum and reads back as 0. Negative values are refused: a bucket never goes
 * below zero.
 */
export function storedFields(f: ReportFigures): Record<string, number> {
  const out: Record<string, number> = {};
  for (const c of COUNT_FIELDS) {
    if (f[c] < 0) throw new RangeError(`report figure ${c} below zero`);
    if (f[c] !== 0) out[c] = f[c];
  }
  for (const m of MONEY_FIELDS) {
    if (f[m] < 0n) throw new RangeError(`report figure ${m} below zero`);
    const hi = f[m] / LIMB;
    const lo = f[m] % LIMB;
    if (hi > BigInt(Number.MAX_SAFE_INTEGER)) throw new RangeError(`report figure ${m} beyond 2^53 × 10^12`);
    if (hi !== 0n) out[`${m}_hi`] = Number(hi);
    if (lo !== 0n) out[`${m}_lo`] = Number(lo);
  }
  return out;
}

/** Figures back from a stored document or from a `sum` row's sums. */
export function figuresOf(fields: Record<string, unknown>): ReportFigures {
  const big = (name: string): bigint => {
    const v = fields[name];
    if (typeof v === 'bigint') return v;
    if (typeof v === 'number' && Number.isSafeInteger(v)) return BigInt(v);
    if (v === undefined || v === null) return 0n;
    throw new RangeError(`report field ${name} is not an integer`);
  };
  const out = zeroFigures();
  for (const c of COUNT_FIELDS) out[c] = Number(big(c));
  for (const m of MONEY_FIELDS) out[m] = big(`${m}_hi`) * LIMB + big(`${m}_lo`);
  return out;
}

export type CommercialTotals = {
  clicks: number;
  orders: number;
  paid_orders: number;
  refunded_orders: number;
  cancelled_orders: number;
  gross_cents: BigCents;
  refunded_cents: BigCents;
  net_cents: BigCents;
  unknown_commission_orders: number;
  known_expected_commission_cents: BigCents;
  /** null when any order counted has an unknown expectation. */
  expected_commission_cents: BigCents | null;
};

export function commercialTotals(f: ReportFigures): CommercialTotals {
  return {
    clicks: f.clicks,
    orders: f.orders,
    paid_orders: f.paid_orders,
    refunded_orders: f.refunded_orders,
    cancelled_orders: f.cancelled_orders,
    gross_cents: toBigCents(f.gross),
    refunded_cents: toBigCents(f.refunded),
    net_cents: toBigCents(f.net),
    unknown_commission_orders: f.unknown_commission_orders,
    known_expected_commission_cents: toBigCents(f.known),
    expected_commission_cents: f.unknown_commission_orders > 0 ? null : toBigCents(f.known),
  };
}

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

/**
 * The levels of the report's read model, finest first: exact items (by `at`), then buckets of one UTC hour and of
 * one UTC day (by the ISO start of their period). A bucket holds the sum of the items of its period.
 */
export const LEVELS = [
  { collection: REPORT.items, field: 'at', ms: 0 },
  { collection: REPORT.hours, field: 'hour', ms: HOUR_MS },
  { collection: REPORT.days, field: 'day', ms: DAY_MS },
] as const;

/** Start of the bucket period of `level` (1 hour, 2 day) holding `iso`. */
export const periodOf = (level: 1 | 2, iso: string): string => {
  const ms = LEVELS[level].ms;
  return new Date(Math.floor(Date.parse(iso) / ms) * ms).toISOString();
};

export interface ReportRange {
  collection: string;
  field: string;
  /** Inclusive, canonical ISO. */
  from: string;
  /** Exclusive, canonical ISO. */
  to: string;
}

/**
 * The fewest documents that add up to [since, until): whole days inside it from day buckets, whole hours of the
 * partial days from hour buckets, the partial hours at both ends from the items. At most five ranges; a 31-day
 * window reads about 31 + 2 × 23 buckets per store, whatever the number of orders.
 */
export function coveringRanges(since: string, until: string, level = LEVELS.length - 1): ReportRange[] {
  const from = Date.parse(since);
  const to = Date.parse(until);
  if (from >= to) return [];
  const { collection, field, ms } = LEVELS[level];
  if (ms === 0) return [{ collection, field, from: since, to: until }];
  const first = Math.ceil(from / ms) * ms;
  const last = Math.floor(to / ms) * ms;
  if (first >= last) return coveringRanges(since, until, level - 1);
  const iso = (x: number) => new Date(x).toISOString();
  return [
    ...coveringRanges(since, iso(first), level - 1),
    { collection, field, from: iso(first), to: iso(last) },
    ...coveringRanges(iso(last), until, level - 1),
  ];
}
