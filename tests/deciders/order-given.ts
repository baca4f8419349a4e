/** The fixtures of the order decider's tests, and `given(...inputs)`: tests/deciders/given.ts fed with conversions. */
import { expect } from 'chai';
import { streams, type Tenant } from '../../shared-schema/streams.js';
import type { EffectiveCommission } from '../../shared-schema/commission.js';
import type { ConversionEventReservation, ConversionInput, ConversionItem, OrderEvent } from '../../shared-schema/events/order.js';
import {
  canonicalDate,
  conversionHash,
  normalizeConversion,
  orderDecider,
  type AttributionClick,
  type OrderAnswer,
  type OrderState,
  type RecordConversion,
} from '../../command-api/deciders/order.js';
import { given as givenEvents, recorded, type Then } from './given.js';

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

export const reservationOf = (a: OrderAnswer): ConversionEventReservation => {
  expect(a.reserve, 'the decision reserves its event_id').to.not.equal(null);
  return a.reserve!;
};
export const orderStream = (storeId = 'store-1', orderId = 'order-1') => streams.order(tenant, storeId, orderId);

type Conversion = ConversionInput | RecordConversion;
const commandOf = (c: Conversion): RecordConversion => ('type' in c ? c : command(c));

/** The order after each conversion was decided and its events recorded (each must be accepted). */
export function given(...conversions: Conversion[]): Scenario {
  return new Scenario(givenEvents(orderDecider, ...recorded(orderDecider, ...conversions.map(commandOf))));
}

/** The order after these events, as read back from the stream. */
export const givenRecorded = (...events: OrderEvent[]): Scenario => new Scenario(givenEvents(orderDecider, ...events));

export class Scenario {
  constructor(private readonly events: ReturnType<typeof givenEvents<OrderState, RecordConversion, OrderEvent, OrderAnswer>>) {}
  get state(): OrderState {
    return this.events.state;
  }
  when(conversion: Conversion): Outcome {
    const c = commandOf(conversion);
    return new Outcome(c, this.events.when(c));
  }
}

export class Outcome {
  constructor(
    private readonly command: RecordConversion,
    private readonly outcome: Then<OrderState, OrderEvent, OrderAnswer>,
  ) {}

  /**
   * One event of this type, compared whole: the body as normalized, its hash, the command's time, and the order
   * the answer reports (a receipt is the recorded order plus `duplicate` and `ignored_stale`). Returns the answer.
   */
  thenRecords(type: OrderEvent['type']): OrderAnswer {
    expect(this.outcome.problem?.message, 'the decision threw a problem').to.equal(undefined);
    const { duplicate, ignored_stale, ...order } = this.outcome.decision!.result.receipt;
    expect([duplicate, ignored_stale], 'a recorded event is neither a duplicate nor a stale one').to.deep.equal([false, type === 'ConversionIgnoredStale']);
    const event = normalizeConversion(this.command.data.input);
    const data = { event, body_hash: conversionHash(event), received_at: canonicalDate(this.command.data.now), order };
    return this.outcome.then({ type, data } as OrderEvent);
  }

  /** No event (a repeat of a known event_id); returns the answer. */
  thenNothing(): OrderAnswer {
    return this.outcome.thenNothing();
  }

  thenProblem(status: number, ...errors: string[]) {
    return this.outcome.thenThrows(status, ...errors);
  }

  /** The recorded events (after a `then…`). */
  get events(): OrderEvent[] {
    return this.outcome.decision?.events ?? [];
  }

  get after(): OrderState {
    return this.outcome.after;
  }
}
