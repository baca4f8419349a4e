/**
 * JSON Schemas of the commercial cycle and of batches (contract: "Resources and their fields"): the request bodies
 * and queries the doors validate, and the responses the OpenAPI document publishes. Request schemas are strict
 * (`additionalProperties: false`, every bound); response schemas describe what the service sends.
 *
 * What JSON Schema cannot say is left to code: unique SKUs in a conversion, items totalling at most 1 trillion cents,
 * `refunded_cents` up to `quantity × unit_price_cents`, the rules between events.
 */
import { Commission, Cursor, DateTime, ExternalId, Limit, RejectionReason, type JsonSchema } from './common.js';
import { ProductInput } from './catalog.js';

export const CLICK_ID_PATTERN = '^ic_[A-Za-z0-9_-]{16,64}$';

export const ConversionStatus: JsonSchema = { enum: ['paid', 'refunded', 'cancelled'] };
export const Currency: JsonSchema = { const: 'BRL' };

const count: JsonSchema = { type: 'integer', minimum: 0 };
const commissionSource: JsonSchema = { enum: ['product', 'store', null] };
const nullableCents: JsonSchema = { type: ['integer', 'null'], minimum: 0 };

// ---------------------------------------------------------------------------------------------------- requests

/** One line of a conversion event: all four fields required, no other. */
export const ConversionItem: JsonSchema = {
  type: 'object',
  required: ['sku', 'quantity', 'unit_price_cents', 'refunded_cents'],
  additionalProperties: false,
  properties: {
    sku: ExternalId,
    quantity: { type: 'integer', minimum: 1, maximum: 10000 },
    unit_price_cents: { type: 'integer', minimum: 0, maximum: 1_000_000_000 },
    refunded_cents: { type: 'integer', minimum: 0, maximum: 1_000_000_000_000 },
  },
};

/** Body of `POST /conversions`. */
export const ConversionEventSchema: JsonSchema = {
  type: 'object',
  required: ['event_id', 'order_id', 'store_id', 'click_id', 'status', 'currency', 'paid_at', 'occurred_at', 'items'],
  additionalProperties: false,
  properties: {
    event_id: ExternalId,
    order_id: ExternalId,
    store_id: ExternalId,
    click_id: { type: 'string', pattern: CLICK_ID_PATTERN },
    status: ConversionStatus,
    currency: Currency,
    paid_at: DateTime,
    occurred_at: DateTime,
    items: { type: 'array', minItems: 1, maxItems: 200, items: ConversionItem },
  },
};

/** Body of `POST /sandbox/clicks`. */
export const SandboxClickInput: JsonSchema = {
  type: 'object',
  required: ['store_id', 'sku'],
  additionalProperties: false,
  properties: { store_id: ExternalId, sku: ExternalId },
};

/**
 * One element of a batch: `upsert` (`op`, `sku`, `product`) or `delete` (`op`, `sku`). Written with if/then, like
 * Commission, so that an invalid element reports only the fields of the form it chose.
 */
export const BatchItem: JsonSchema = {
  type: 'object',
  allOf: [
    { required: ['op'], properties: { op: { enum: ['upsert', 'delete'] } } },
    {
      if: { properties: { op: { const: 'upsert' } }, required: ['op'] },
      then: {
        required: ['sku', 'product'],
        properties: { op: true, sku: ExternalId, product: ProductInput },
        additionalProperties: false,
      },
    },
    {
      if: { properties: { op: { const: 'delete' } }, required: ['op'] },
      then: { required: ['sku'], properties: { op: true, sku: ExternalId }, additionalProperties: false },
    },
  ],
};

/** Body of `POST /products/batch`. More than 1000 items is refused with 413 before validation. */
export const BatchInput: JsonSchema = {
  type: 'object',
  required: ['items'],
  additionalProperties: false,
  properties: { items: { type: 'array', minItems: 1, maxItems: 1000, items: BatchItem } },
};

// ----------------------------------------------------------------------------------------------------- queries

/** A query window: [since, until), at most 31 days (checked in code, 422 `window`), default the last 30 days. */
export const windowQuery = (extra: Record<string, JsonSchema>): JsonSchema => ({
  type: 'object',
  additionalProperties: false,
  properties: { since: DateTime, until: DateTime, store_id: ExternalId, ...extra },
});

export const ListClicksQuery: JsonSchema = windowQuery({ cursor: Cursor, limit: Limit });
export const ListConversionsQuery: JsonSchema = windowQuery({ cursor: Cursor, limit: Limit });
export const CommissionReportQuery: JsonSchema = windowQuery({});

/** Query of `GET /conversions/{order_id}`: the order is unique per store. */
export const GetConversionQuery: JsonSchema = {
  type: 'object',
  required: ['store_id'],
  additionalProperties: false,
  properties: { store_id: ExternalId },
};

// --------------------------------------------------------------------------------------------------- responses

export const JobTotals: JsonSchema = {
  type: 'object',
  required: ['received', 'accepted', 'rejected', 'pending'],
  properties: { received: count, accepted: count, rejected: count, pending: count, removed: count },
};

export const Job: JsonSchema = {
  type: 'object',
  required: ['job_id', 'state', 'totals', 'created_at'],
  properties: {
    job_id: { type: 'string' },
    state: { enum: ['queued', 'running', 'done', 'failed'] },
    totals: JobTotals,
    errors: {
      type: 'array',
      items: {
        type: 'object',
        required: ['index', 'sku', 'reasons'],
        properties: { index: count, sku: { type: 'string' }, reasons: { type: 'array', items: RejectionReason } },
      },
    },
    created_at: DateTime,
    finished_at: { type: ['string', 'null'], format: 'date-time' },
  },
};

export const PartnerClick: JsonSchema = {
  type: 'object',
  required: ['click_id', 'store_id', 'sku', 'price_cents', 'occurred_at'],
  properties: {
    click_id: { type: 'string' },
    store_id: ExternalId,
    sku: ExternalId,
    price_cents: nullableCents,
    occurred_at: DateTime,
  },
};

export const CommissionSnapshotItem: JsonSchema = {
  type: 'object',
  required: [
    'sku',
    'quantity',
    'unit_price_cents',
    'refunded_cents',
    'commission',
    'commission_source',
    'expected_commission_cents',
  ],
  properties: {
    sku: { type: 'string' },
    quantity: { type: 'integer' },
    unit_price_cents: count,
    refunded_cents: count,
    commission: Commission,
    commission_source: commissionSource,
    expected_commission_cents: nullableCents,
  },
};

const ORDER_FIELDS = [
  'event_id',
  'order_id',
  'store_id',
  'click_id',
  'status',
  'currency',
  'paid_at',
  'occurred_at',
  'items',
  'gross_cents',
  'refunded_cents',
  'net_cents',
  'expected_commission_cents',
  'known_expected_commission_cents',
  'commission_snapshot_at',
  'recorded_at',
  'updated_at',
];

export const OrderView: JsonSchema = {
  type: 'object',
  required: ORDER_FIELDS,
  properties: {
    event_id: { type: 'string' },
    order_id: { type: 'string' },
    store_id: { type: 'string' },
    click_id: { type: 'string' },
    status: ConversionStatus,
    currency: Currency,
    paid_at: DateTime,
    occurred_at: DateTime,
    items: { type: 'array', items: CommissionSnapshotItem },
    gross_cents: count,
    refunded_cents: count,
    net_cents: count,
    expected_commission_cents: nullableCents,
    known_expected_commission_cents: count,
    commission_snapshot_at: DateTime,
    recorded_at: DateTime,
    updated_at: DateTime,
  },
};

export const ConversionReceipt: JsonSchema = {
  type: 'object',
  required: [...ORDER_FIELDS, 'duplicate', 'ignored_stale'],
  properties: {
    ...(OrderView.properties as Record<string, JsonSchema>),
    duplicate: { type: 'boolean' },
    ignored_stale: { type: 'boolean' },
  },
};

const TOTALS_FIELDS = [
  'clicks',
  'orders',
  'paid_orders',
  'refunded_orders',
  'cancelled_orders',
  'gross_cents',
  'refunded_cents',
  'net_cents',
  'unknown_commission_orders',
  'known_expected_commission_cents',
];

export const CommercialTotals: JsonSchema = {
  type: 'object',
  required: [...TOTALS_FIELDS, 'expected_commission_cents'],
  properties: {
    ...Object.fromEntries(TOTALS_FIELDS.map((f) => [f, count])),
    expected_commission_cents: nullableCents,
  },
};

export const StoreCommercialTotals: JsonSchema = {
  type: 'object',
  required: ['store_id', ...(CommercialTotals.required as string[])],
  properties: { store_id: { type: 'string' }, ...(CommercialTotals.properties as Record<string, JsonSchema>) },
};

export const CommissionReport: JsonSchema = {
  type: 'object',
  required: ['since', 'until', 'currency', 'environment', 'basis', 'commission_is', 'totals', 'stores'],
  properties: {
    since: DateTime,
    until: DateTime,
    currency: Currency,
    environment: { enum: ['test', 'live'] },
    basis: { const: 'paid_at_current_state' },
    commission_is: { const: 'expected_not_settled' },
    totals: CommercialTotals,
    stores: { type: 'array', items: StoreCommercialTotals },
  },
};

/** A page of a windowed list: `data`, `next_cursor`, and the normalized `since` / `until` to keep on later pages. */
export const windowPage = (item: JsonSchema): JsonSchema => ({
  type: 'object',
  required: ['data', 'next_cursor', 'since', 'until'],
  properties: {
    data: { type: 'array', items: item },
    next_cursor: { type: ['string', 'null'] },
    since: DateTime,
    until: DateTime,
  },
});

export const ClickPage: JsonSchema = windowPage(PartnerClick);
export const ConversionPage: JsonSchema = windowPage(OrderView);
