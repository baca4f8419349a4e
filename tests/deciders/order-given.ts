/** `given(...conversions).when(conversion).then…` for the order decider: tests/support/decider-given.ts fed with conversions. */
import { expect } from 'chai';
import { streams } from '../../shared-schema/domain/streams.js';
import type { ConversionEventReservation, ConversionInput, OrderEvent } from '../../shared-schema/events/order.js';
import {
  canonicalDate,
  conversionHash,
  normalizeConversion,
  orderDecider,
  type OrderAnswer,
  type OrderState,
  type RecordConversion,
} from '../../command-api/deciders/order.js';
import { given as givenEvents, recorded, type Then } from '../support/decider-given.js';
import { command, tenant } from '../support/order-fixtures.js';

export * from '../support/order-fixtures.js';

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
  constructor(
    private readonly events: ReturnType<typeof givenEvents<OrderState, RecordConversion, OrderEvent, OrderAnswer>>,
  ) {}
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
    expect([duplicate, ignored_stale], 'a recorded event is neither a duplicate nor a stale one').to.deep.equal([
      false,
      type === 'ConversionIgnoredStale',
    ]);
    const event = normalizeConversion(this.command.data.input);
    const data = { event, body_hash: conversionHash(event), received_at: canonicalDate(this.command.data.now), order };
    return this.outcome.then({ type, data });
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
