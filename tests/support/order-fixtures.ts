/** Conversions of one order as a partner sends them, and the command the order decider takes them in. */
import { type Tenant } from '../../shared-schema/domain/streams.js';
import type { EffectiveCommission } from '../../shared-schema/domain/commission.js';
import type { ConversionEventReservation, ConversionInput, ConversionItem } from '../../shared-schema/events/order.js';
import type { AttributionClick, RecordConversion } from '../../command-api/deciders/order.js';

export const tenant: Tenant = { partnerId: 'pt_ORDERS0000000000000', env: 'test' };
export const PAID_AT = '2026-03-01T12:00:00.000Z';
export const NOW = '2026-03-10T12:00:00.000Z';
export const CLICK_ID = 'ic_AAAAAAAAAAAAAAAAAAAAAA';
export const at = (iso: string, plusMs: number): string => new Date(Date.parse(iso) + plusMs).toISOString();
export const MINUTE = 60_000;
export const DAY = 86_400_000;

/** sku-a 2 × 1000 at 10 %; sku-b 1 × 3000 fixed 500; sku-c 3 × 100 with no rule. Gross 5300. */
export const ITEMS: ConversionItem[] = [
  { sku: 'sku-a', quantity: 2, unit_price_cents: 1000, refunded_cents: 0 },
  { sku: 'sku-b', quantity: 1, unit_price_cents: 3000, refunded_cents: 0 },
  { sku: 'sku-c', quantity: 3, unit_price_cents: 100, refunded_cents: 0 },
];
export const RULES: Record<string, EffectiveCommission> = {
  'sku-a': { commission: { type: 'percentage', rate: 10 }, commission_source: 'product' },
  'sku-b': { commission: { type: 'fixed', amount_cents: 500 }, commission_source: 'store' },
  'sku-c': { commission: null, commission_source: null },
};
export const CLICK: AttributionClick = {
  click_id: CLICK_ID,
  partner_id: tenant.partnerId,
  environment: tenant.env,
  store_id: 'store-1',
  occurred_at: at(PAID_AT, -DAY),
};

export function paid(overrides: Partial<ConversionInput> = {}): ConversionInput {
  return {
    event_id: 'ev-paid',
    order_id: 'order-1',
    store_id: 'store-1',
    click_id: CLICK_ID,
    status: 'paid',
    currency: 'BRL',
    paid_at: PAID_AT,
    occurred_at: PAID_AT,
    items: ITEMS.map((i) => ({ ...i })),
    ...overrides,
  };
}

/** A refunded (or cancelled) event with cumulative refunds per sku. */
export function refund(
  event_id: string,
  occurred_at: string,
  refunds: Record<string, number>,
  status: 'refunded' | 'cancelled' = 'refunded',
): ConversionInput {
  const items = ITEMS.map((i) => ({ ...i, refunded_cents: refunds[i.sku] ?? 0 }));
  return paid({ event_id, status, occurred_at, items });
}
export const cancel = (event_id: string, occurred_at: string): ConversionInput =>
  refund(event_id, occurred_at, { 'sku-a': 2000, 'sku-b': 3000, 'sku-c': 300 }, 'cancelled');

export interface CommandOptions {
  now?: string;
  reservation?: ConversionEventReservation | null;
  click?: AttributionClick | null;
  rules?: Record<string, EffectiveCommission>;
}

export function command(input: ConversionInput, o: CommandOptions = {}): RecordConversion {
  return {
    type: 'RecordConversion',
    data: {
      tenant,
      input,
      now: o.now ?? NOW,
      existingReservation: o.reservation ?? null,
      click: o.click === undefined ? CLICK : o.click,
      rulesBySku: o.rules ?? RULES,
    },
  };
}
