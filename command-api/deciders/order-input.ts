/**
 * `POST /conversions` input rules that a JSON Schema cannot express, the normalized form used for event_id
 * deduplication, and the attribution predicate. Pure: the time is passed in.
 */
import { createHash } from 'node:crypto';
import { fieldError, type FieldError } from '../../shared-schema/contract/problems.js';
import type { Tenant, Environment } from '../../shared-schema/domain/streams.js';
import type { NormalizedConversion, ConversionInput } from '../../shared-schema/events/order.js';

/** An order's total (Σ quantity × unit_price_cents) is at most one trillion cents. */
export const MAX_ORDER_TOTAL_CENTS = 1_000_000_000_000n;
/** Event dates may be at most five minutes ahead of the service's clock (inclusive). */
export const MAX_FUTURE_MS = 5 * 60 * 1000;
/** A click counts when it occurred at most 30 days before `paid_at` (inclusive), and not after it. */
export const ATTRIBUTION_WINDOW_MS = 30 * 24 * 60 * 60 * 1000;

/**
 * Every invalid field at once (422), with paths into the body as sent (`items[2].refunded_cents`).
 * Codes: `currency` enum; dates `format`, `future`; `occurred_at` `must_equal_paid_at` (paid) or
 * `before_paid_at` (refunded/cancelled); `items[i].sku` `duplicate`; `items[i].refunded_cents`
 * `must_be_zero` (paid), `exceeds_line_total`, `must_be_full` (cancelled); `items` `total_too_large`.
 */
export function validateConversion(input: ConversionInput, now: string): FieldError[] {
  const errors: FieldError[] = [];
  if (input.currency !== 'BRL') errors.push(fieldError('currency', 'enum', 'currency must be BRL'));

  const nowMs = Date.parse(now);
  if (Number.isNaN(nowMs)) throw new RangeError(`now is not a date: ${now}`);
  const paidMs = Date.parse(input.paid_at);
  const occurredMs = Date.parse(input.occurred_at);
  for (const [field, ms] of [
    ['paid_at', paidMs],
    ['occurred_at', occurredMs],
  ] as const) {
    if (Number.isNaN(ms)) errors.push(fieldError(field, 'format', `${field} must be an ISO 8601 date-time`));
    else if (ms > nowMs + MAX_FUTURE_MS)
      errors.push(fieldError(field, 'future', `${field} is more than 5 minutes in the future`));
  }
  if (!Number.isNaN(paidMs) && !Number.isNaN(occurredMs)) {
    if (input.status === 'paid' && occurredMs !== paidMs)
      errors.push(fieldError('occurred_at', 'must_equal_paid_at', 'a paid event has occurred_at equal to paid_at'));
    if (input.status !== 'paid' && occurredMs < paidMs)
      errors.push(fieldError('occurred_at', 'before_paid_at', 'an event cannot occur before the payment'));
  }

  const seen = new Set<string>();
  let total = 0n;
  input.items.forEach((item, i) => {
    if (seen.has(item.sku)) errors.push(fieldError(`items[${i}].sku`, 'duplicate', 'SKUs of an order are unique'));
    seen.add(item.sku);
    const lineTotal = BigInt(item.quantity) * BigInt(item.unit_price_cents);
    total += lineTotal;
    const refunded = BigInt(item.refunded_cents);
    const field = `items[${i}].refunded_cents`;
    if (input.status === 'paid' && refunded !== 0n)
      errors.push(fieldError(field, 'must_be_zero', 'a paid event refunds nothing'));
    else if (refunded > lineTotal)
      errors.push(fieldError(field, 'exceeds_line_total', 'refunded_cents is at most quantity × unit_price_cents'));
    else if (input.status === 'cancelled' && refunded !== lineTotal)
      errors.push(fieldError(field, 'must_be_full', 'a cancelled event refunds every line in full'));
  });
  if (total > MAX_ORDER_TOTAL_CENTS)
    errors.push(fieldError('items', 'total_too_large', 'the order total is at most 1000000000000 cents'));
  return errors;
}

/** Canonical UTC form with milliseconds. Sub-millisecond digits are dropped (the service's resolution). */
export const canonicalDate = (iso: string): string => new Date(Date.parse(iso)).toISOString();

/** Items sorted by sku, dates canonical, fields in a fixed order. Call on a valid input. */
export function normalizeConversion(input: ConversionInput): NormalizedConversion {
  const items = input.items
    .map(({ sku, quantity, unit_price_cents, refunded_cents }) => ({ sku, quantity, unit_price_cents, refunded_cents }))
    .sort((a, b) => (a.sku < b.sku ? -1 : a.sku > b.sku ? 1 : 0));
  return {
    event_id: input.event_id,
    order_id: input.order_id,
    store_id: input.store_id,
    click_id: input.click_id,
    status: input.status,
    currency: 'BRL',
    paid_at: canonicalDate(input.paid_at),
    occurred_at: canonicalDate(input.occurred_at),
    items,
  };
}

/** sha256 (hex) of the normalized event's JSON, keys in the fixed order normalizeConversion gives them. */
export function conversionHash(event: NormalizedConversion): string {
  return createHash('sha256')
    .update(JSON.stringify(normalizeConversion(event)))
    .digest('hex');
}

/** What attribution needs of a click (the caller loads it from `streams.click(tenant, click_id)`). */
export interface AttributionClick {
  click_id: string;
  partner_id: string;
  environment: Environment;
  store_id: string;
  occurred_at: string;
}

/** Why a click cannot carry an order: the `reason` of a 422 `invalid_attribution`. */
export type AttributionFailure = 'unknown_click' | 'other_store' | 'click_after_payment' | 'click_too_old';

export const ATTRIBUTION_MESSAGES: Record<AttributionFailure, string> = {
  unknown_click:
    'No click with this click_id exists for this partner in this environment (the key decides the environment: a sandbox click needs a test key, a shopper click a live key).',
  other_store: 'The click was made on a product of another store: send the order with the store_id of the click.',
  click_after_payment:
    'The click happened after paid_at: a click can only be credited with a payment made at or after it.',
  click_too_old: 'The click happened more than 30 days before paid_at.',
};

/**
 * Null when the click belongs to the partner, environment and store and occurred in [paid_at − 30 days, paid_at];
 * else the first cause. A click of another partner or environment is `unknown_click`, as if it did not exist: its
 * existence is another tenant's data.
 */
export function attributionFailure(
  click: AttributionClick | null,
  event: ConversionInput,
  tenant: Tenant,
): AttributionFailure | null {
  if (
    click === null ||
    click.partner_id !== tenant.partnerId ||
    click.environment !== tenant.env ||
    click.click_id !== event.click_id
  )
    return 'unknown_click';
  if (click.store_id !== event.store_id) return 'other_store';
  const clickMs = Date.parse(click.occurred_at);
  const paidMs = Date.parse(event.paid_at);
  if (clickMs > paidMs) return 'click_after_payment';
  return paidMs - clickMs <= ATTRIBUTION_WINDOW_MS ? null : 'click_too_old';
}
