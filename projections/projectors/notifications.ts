/**
 * Notifications (the model: shared-schema/read-models/notifications.ts): the partner-visible changes, in log order.
 *
 * - `product.state_changed`: a new SKU's first state, then each change of the state `GET /v1/products/{sku}` answers,
 *   derived with the same rules (`baseState`, `withClock`) at the time the event was recorded: a cover verdict, a
 *   removal, a store's status or domains, and the 48 h lapse (ProductFreshnessLapsed, at its `lapsed_at`).
 * - `store.status_changed` when a store's status changes (not its first one, which the partner's PUT answered);
 *   `store.domain_approved` for each domain newly approved.
 * - `job.finished` when a batch is done or failed, with the totals `GET /jobs/{job_id}` shows.
 *
 * A store event reaches every product of its store in the same unit of work.
 */
import { asUnion, type RecordedEvent } from '../../shared-schema/ports/event-store.js';
import type { ReadTx } from '../../shared-schema/ports/read-store.js';
import type { ProductEvent } from '../../shared-schema/events/product.js';
import type { StoreEvent } from '../../shared-schema/events/store.js';
import type { JobEvent } from '../../shared-schema/events/job.js';
import { baseState, withClock, type ProductState, type StoreFacts } from '../../shared-schema/domain/product-status.js';
import { urlHost } from '../../shared-schema/domain/host-match.js';
import { evolveStanding, NEW_STANDING } from '../../shared-schema/domain/store-standing.js';
import { scopedId } from '../../shared-schema/read-models/scoped-id.js';
import type { Tenant } from '../../shared-schema/domain/streams.js';
import {
  NOTIFICATIONS,
  NOTIFICATION_COLLECTIONS,
  NOTIFICATION_JOBS,
  NOTIFICATION_PRODUCTS,
  NOTIFICATION_STORES,
  notificationDocId,
  notificationId,
  type NotificationData,
  type NotificationJobDoc,
  type NotificationProductDoc,
  type NotificationStoreDoc,
} from '../../shared-schema/read-models/notifications.js';
import { alreadyApplied, streamScope, UnitDocs, type Projector } from '../projector.js';

/** The stores, read once per unit of work (the events of a batch mostly reach products of one store). */
const stores = new UnitDocs<NotificationStoreDoc>(NOTIFICATION_STORES);

/** Writes the notifications of one event, numbered in the order they are added. */
class Announcer {
  private seq = 0;
  constructor(
    private readonly tx: ReadTx,
    private readonly tenant: Tenant,
    private readonly position: number,
  ) {}

  async add(occurredAt: string, notification: NotificationData): Promise<void> {
    const seq = this.seq++;
    const doc = {
      _id: notificationDocId(this.tenant, this.position, seq),
      partner_id: this.tenant.partnerId,
      env: this.tenant.env,
      position: this.position,
      seq,
      id: notificationId(this.position, seq),
      occurred_at: occurredAt,
      ...notification,
    };
    await this.tx.put(NOTIFICATIONS, doc);
  }
}

const factsOf = (store: NotificationStoreDoc | null): StoreFacts | null =>
  store && { status: store.status, domains: store.domains, domains_approved: store.domains_approved };

/** The product's state and reasons as `GET /v1/products/{sku}` would answer at `at`. */
function derive(p: NotificationProductDoc, store: NotificationStoreDoc | null, at: string) {
  const cover = p.cover && p.cover.url === p.cover_url ? p.cover : null;
  const base = baseState({ removed: p.removed, cover, page_host: p.page_host }, factsOf(store));
  return { state: withClock(base.state, p.last_write_at, new Date(at)), reasons: base.reasons };
}

/**
 * Announces the product's state when it differs from the last announced one (`previous`, null for a new SKU), and
 * saves the product at `position` when its own event changed it (`own`) or its state changed (`p` is the caller's
 * own copy, just read or made: it is updated in place).
 */
async function judge(
  tx: ReadTx,
  announce: Announcer,
  p: NotificationProductDoc,
  previous: ProductState | null,
  store: NotificationStoreDoc | null,
  at: string,
  occurredAt: string,
  own: { position: number } | null,
): Promise<void> {
  const { state, reasons } = derive(p, store, at);
  if (state === previous && !own) return;
  p.state = state;
  if (own) p.position = own.position;
  await tx.put(NOTIFICATION_PRODUCTS, p);
  if (state === previous) return;
  await announce.add(occurredAt, {
    type: 'product.state_changed',
    data: { sku: p.sku, store_id: p.store_id, state, reasons },
  });
}

async function onProductEvent(recorded: RecordedEvent, tx: ReadTx, tenant: Tenant, announce: Announcer) {
  const e = asUnion<ProductEvent>(recorded);
  const id = scopedId(tenant, e.data.sku);
  const current = await tx.get<NotificationProductDoc>(NOTIFICATION_PRODUCTS, id);
  if (alreadyApplied(current, recorded)) return;
  const at = recorded.metadata.recorded_at;
  let next: NotificationProductDoc | null = null;
  let occurredAt = at;
  switch (e.type) {
    case 'ProductUpserted':
      next = {
        _id: id,
        partner_id: tenant.partnerId,
        env: tenant.env,
        position: recorded.position,
        sku: e.data.sku,
        store_id: e.data.product.store_id,
        removed: false,
        cover_url: e.data.product.image_urls[0] ?? '',
        page_host: urlHost(e.data.product.product_url),
        cover: current?.cover ?? null,
        last_write_at: e.data.received_at,
        state: current?.state ?? 'pending',
      };
      break;
    case 'ProductPatched':
      if (current) next = { ...current, last_write_at: e.data.received_at };
      break;
    case 'ProductRemoved':
      if (current) next = { ...current, removed: true };
      break;
    case 'CoverChecked':
      if (current) next = { ...current, cover: { url: e.data.url, ok: e.data.ok, reasons: e.data.reasons } };
      break;
    case 'ProductFreshnessLapsed':
      if (current) next = current;
      occurredAt = e.data.lapsed_at;
      break;
  }
  if (!next) return;
  const store = await stores.get(tx, scopedId(tenant, next.store_id));
  await judge(tx, announce, next, current?.state ?? null, store, at, occurredAt, recorded);
}

async function onStoreEvent(recorded: RecordedEvent, tx: ReadTx, tenant: Tenant, announce: Announcer) {
  const e = asUnion<StoreEvent>(recorded);
  const id = scopedId(tenant, e.data.store_id);
  const current = await stores.get(tx, id);
  if (alreadyApplied(current, recorded)) return;
  const declares = e.type === 'StoreRegistered' || e.type === 'StoreReplaced';
  if (!current && !declares) return;
  const standing = evolveStanding(current ?? NEW_STANDING, e);
  const next: NotificationStoreDoc = {
    _id: id,
    partner_id: tenant.partnerId,
    env: tenant.env,
    store_id: e.data.store_id,
    domains: declares ? e.data.store.domains : current!.domains,
    ...standing,
    position: recorded.position,
  };
  await stores.put(tx, next);
  const at = recorded.metadata.recorded_at;
  if (current && current.status !== next.status) {
    await announce.add(at, { type: 'store.status_changed', data: { store_id: next.store_id, status: next.status } });
  }
  for (const domain of next.domains_approved) {
    if (current?.domains_approved.includes(domain)) continue;
    await announce.add(at, { type: 'store.domain_approved', data: { store_id: next.store_id, domain } });
  }
  const products = await tx.find<NotificationProductDoc>(NOTIFICATION_PRODUCTS, {
    where: { partner_id: tenant.partnerId, env: tenant.env, store_id: next.store_id },
    orderBy: [{ field: 'sku' }],
  });
  for (const p of products) await judge(tx, announce, p, p.state, next, at, at, null);
}

async function onJobEvent(recorded: RecordedEvent, tx: ReadTx, tenant: Tenant, announce: Announcer) {
  if (recorded.type === 'BatchPartStored') return;
  const e = asUnion<JobEvent>(recorded);
  const id = scopedId(tenant, e.data.job_id);
  const current = await tx.get<NotificationJobDoc>(NOTIFICATION_JOBS, id);
  if (alreadyApplied(current, recorded)) return;
  const finished = async (state: 'done' | 'failed', totals: NotificationJobDoc['totals'], at: string) => {
    await tx.delete(NOTIFICATION_JOBS, id);
    await announce.add(at, { type: 'job.finished', data: { job_id: e.data.job_id, state, ...totals } });
  };
  switch (e.type) {
    case 'BatchQueued':
      await tx.put(NOTIFICATION_JOBS, {
        _id: id,
        partner_id: tenant.partnerId,
        env: tenant.env,
        job_id: e.data.job_id,
        totals: { received: e.data.received, accepted: 0, rejected: 0, pending: 0, removed: 0 },
        position: recorded.position,
      });
      break;
    case 'BatchChunkProcessed':
      if (current) {
        const totals = { ...current.totals };
        for (const o of e.data.outcomes) totals[o.bucket] += 1;
        await tx.put(NOTIFICATION_JOBS, { ...current, totals, position: recorded.position });
      }
      break;
    case 'BatchDone':
      if (current) await finished('done', e.data.totals, e.data.finished_at);
      break;
    case 'BatchFailed':
      if (current) await finished('failed', current.totals, e.data.finished_at);
      break;
    default:
      break;
  }
}

export const notificationsProjector: Projector = {
  name: 'notifications',
  collections: NOTIFICATION_COLLECTIONS,
  categories: ['product', 'store', 'job'],
  async apply(recorded, tx) {
    const { env, partnerId } = streamScope(recorded.stream);
    const tenant: Tenant = { env, partnerId };
    const announce = new Announcer(tx, tenant, recorded.position);
    if (recorded.stream.startsWith('product-')) return onProductEvent(recorded, tx, tenant, announce);
    if (recorded.stream.startsWith('store-')) return onStoreEvent(recorded, tx, tenant, announce);
    return onJobEvent(recorded, tx, tenant, announce);
  },
};
