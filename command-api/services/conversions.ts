/**
 * `POST /conversions` around the pure order decider (command-api/deciders/order.ts). One attempt:
 *   1. read the event_id reservation (streams.conversionEvent) and the order (cached state + newer events);
 *   2. when the event creates the order (requiresCreationData), load the click and each SKU's effective rule;
 *   3. decide;
 *   4. append the reservation with "no stream", then the order events at the revision read;
 *   5. on a conflict at 4 (another request took the event_id or moved the order), start again at 1 (one event per
 *      order at a time in this process; `AggregateRepository.serialized`).
 *
 * What a crash between the two appends leaves, and why a repeat is then still right: docs/adr/0016-conversions.md.
 */
import { streams, type Tenant } from '../../shared-schema/domain/streams.js';
import type { EventMetadata } from '../../shared-schema/ports/event-store.js';
import type { ClickEvent } from '../../shared-schema/events/click.js';
import type {
  ConversionEventReservation,
  ConversionEventReservationEvent,
  ConversionInput,
  ConversionReceipt,
} from '../../shared-schema/events/order.js';
import { effectiveCommission, type EffectiveCommission } from '../../shared-schema/domain/commission.js';
import { orderDecider, requiresCreationData, type AttributionClick, type RecordConversion } from '../deciders/order.js';
import { event, stored } from '../deciders/decider.js';
import { productDecider } from '../deciders/product.js';
import { storeDecider } from '../deciders/store.js';
import type { CommandDeps } from './context.js';

export interface RecordedConversion {
  receipt: ConversionReceipt;
  /** Log position of the last event appended; undefined when nothing was written (a duplicate). */
  position?: number;
}

export async function recordConversion(
  deps: CommandDeps,
  tenant: Tenant,
  input: ConversionInput,
  caller: { requestId: string; actor: string },
): Promise<RecordedConversion> {
  const reservationStream = streams.conversionEvent(tenant, input.event_id);
  const orderStream = streams.order(tenant, input.store_id, input.order_id);
  // One event at a time per order in this process; a race with another process decides again on what it wrote.
  return deps.repo.serialized(orderStream, async () => {
    // 1. what is known of the event_id and of the order
    const [reservation, loaded] = await Promise.all([
      readReservation(deps, reservationStream),
      deps.repo.load(orderStream, orderDecider),
    ]);
    const now = deps.clock.now().toISOString();
    const command: RecordConversion = {
      type: 'RecordConversion',
      data: { tenant, input, now, existingReservation: reservation },
    };
    // 2. the facts a new order needs
    if (requiresCreationData(loaded.state, input)) {
      const [click, rules] = await Promise.all([loadClick(deps, tenant, input.click_id), rulesAt(deps, tenant, input)]);
      command.data.click = click;
      command.data.rulesBySku = rules;
    }
    // 3. decide (throws the 422 / 409 problems)
    const { events, result } = orderDecider.decide(command, loaded.state);
    const meta: EventMetadata = { recorded_at: now, request_id: caller.requestId, actor: caller.actor };
    // 4. reservation first, then the order; a WrongExpectedRevisionError here starts again at 1
    let position: number | undefined;
    if (result.reserve) {
      const reserved: ConversionEventReservationEvent = {
        type: 'ConversionEventReserved',
        data: { ...result.reserve, reserved_at: meta.recorded_at },
      };
      position = (await deps.events.appendToStream(reservationStream, [event(reserved, meta)], 'no_stream')).position;
    }
    if (events.length > 0)
      position = (await deps.repo.append(orderStream, orderDecider, loaded, events, meta)).position;
    return position === undefined ? { receipt: result.receipt } : { receipt: result.receipt, position };
  });
}

async function readReservation(deps: CommandDeps, stream: string): Promise<ConversionEventReservation | null> {
  const [first] = await deps.events.readStream(stream, { maxCount: 1 });
  if (!first) return null;
  const e = stored<ConversionEventReservationEvent>(first);
  const { event_id, body_hash, store_id, order_id, order_stream } = e.data;
  return { event_id, body_hash, store_id, order_id, order_stream };
}

/** The click of this tenant with this id (another partner's or environment's click lives in another stream). */
async function loadClick(deps: CommandDeps, tenant: Tenant, clickId: string): Promise<AttributionClick | null> {
  const [first] = await deps.events.readStream(streams.click(tenant, clickId), { maxCount: 1 });
  if (!first) return null;
  const e = stored<ClickEvent>(first);
  const { click_id, partner_id, environment, store_id, occurred_at } = e.data;
  return { click_id, partner_id, environment, store_id, occurred_at };
}

/**
 * Each SKU's effective rule now: the product's own commission, else its store's default (product wins). A SKU the
 * catalog does not know in this store — never sent, removed, or of another store — takes the store's default, or
 * none when the store has none.
 */
async function rulesAt(
  deps: CommandDeps,
  tenant: Tenant,
  input: ConversionInput,
): Promise<Record<string, EffectiveCommission>> {
  const store = await deps.repo.load(streams.store(tenant, input.store_id), storeDecider);
  const storeDefault = store.state.exists ? store.state.input?.default_commission : undefined;
  const skus = [...new Set(input.items.map((i) => i.sku))];
  const entries = await Promise.all(
    skus.map(async (sku): Promise<[string, EffectiveCommission]> => {
      const p = (await deps.repo.load(streams.product(tenant, sku), productDecider)).state;
      const known = p.exists && !p.removed && p.product !== null && p.storeId === input.store_id;
      return [sku, effectiveCommission(known ? p.product!.commission : undefined, storeDefault)];
    }),
  );
  return Object.fromEntries(entries); // own properties even for a SKU named __proto__
}
