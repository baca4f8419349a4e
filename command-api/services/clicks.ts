/**
 * Clicks: the redirector's (a shopper on a live product) and the sandbox's (`POST /sandbox/clicks`, test keys).
 * One stream per click, appended with "no stream": a click id is random (128 bits), so a clash is a bug, not a race.
 */
import { newClickId } from '../../shared-schema/domain/ids.js';
import { streams, type Tenant } from '../../shared-schema/domain/streams.js';
import type { EventMetadata } from '../../shared-schema/ports/event-store.js';
import { partnerClick, type ClickData, type ClickEvent, type PartnerClick } from '../../shared-schema/events/click.js';
import { fieldError, invalid, type FieldError } from '../../shared-schema/contract/problems.js';
import { event } from '../deciders/decider.js';
import { productDecider } from '../deciders/product.js';
import { storeDecider } from '../deciders/store.js';
import type { CommandDeps } from './context.js';

export interface RecordedClick {
  click: PartnerClick;
  position: number;
}

export interface ClickTarget {
  store_id: string;
  sku: string;
  price_cents: number | null;
  /** The channel whose link was followed (FEEDS.md), when there is one. */
  channel_id?: string;
}

export async function recordClick(
  deps: CommandDeps,
  tenant: Tenant,
  target: ClickTarget,
  source: ClickData['source'],
  meta: EventMetadata,
): Promise<RecordedClick> {
  const data: ClickData = {
    click_id: newClickId(),
    partner_id: tenant.partnerId,
    environment: tenant.env,
    store_id: target.store_id,
    sku: target.sku,
    price_cents: target.price_cents,
    occurred_at: meta.recorded_at,
    source,
    ...(target.channel_id !== undefined ? { channel_id: target.channel_id } : {}),
  };
  const appended = await deps.events.appendToStream(
    streams.click(tenant, data.click_id),
    [event<ClickEvent>({ type: 'ClickRecorded', data }, meta)],
    'no_stream',
  );
  return { click: partnerClick(data), position: appended.position };
}

/**
 * `POST /sandbox/clicks`: the SKU must exist (not removed) in that store; no approval is needed. 422 otherwise:
 * `store_id` `store_not_found` for a store never registered, `sku` `sku_not_found` for a SKU not in the store.
 */
export async function sandboxClick(
  deps: CommandDeps,
  tenant: Tenant,
  input: { store_id: string; sku: string },
  meta: EventMetadata,
): Promise<RecordedClick> {
  const [store, product] = await Promise.all([
    deps.repo.load(streams.store(tenant, input.store_id), storeDecider),
    deps.repo.load(streams.product(tenant, input.sku), productDecider),
  ]);
  const errors: FieldError[] = [];
  if (!store.state.exists) errors.push(fieldError('store_id', 'store_not_found', 'No such store for this partner.'));
  const p = product.state;
  if (!p.exists || p.removed || !p.product || p.storeId !== input.store_id) {
    errors.push(fieldError('sku', 'sku_not_found', 'No such SKU in this store.'));
  }
  if (errors.length > 0) throw invalid(errors);
  return recordClick(
    deps,
    tenant,
    { store_id: input.store_id, sku: input.sku, price_cents: p.product!.price_cents },
    'sandbox',
    meta,
  );
}
