/**
 * The notifications read model (PORTAL.md "What changed since I last looked"), written by
 * projections/projectors/notifications.ts, served by `GET /v1/events` and pushed by the webhook sender.
 *
 * One document per notification, numbered by the log position of the event that caused it and its rank among that
 * event's notifications (`seq`: a store event may change the state of every product of the store). The public `id`
 * is derived from those two numbers alone, so a rebuild from the log gives every notification the same id.
 *
 * The projector keeps its own copy of the facts a product's state is derived from (the product's, its store's) and
 * the state it last announced, so that it can be rebuilt alone.
 */
import type { CollectionSpec } from '../ports/read-store.js';
import type { RejectionReason } from '../events/product.js';
import type { JobStateName, JobTotals } from '../events/job.js';
import type { StoreStatus } from '../events/store.js';
import type { ProductState } from '../domain/product-status.js';
import type { Tenant } from '../domain/streams.js';
import { scopedId, type ScopedDoc } from './scoped-id.js';

export const NOTIFICATIONS = 'notifications';
/** The facts of each product its state is derived from, and the state last announced. */
export const NOTIFICATION_PRODUCTS = 'notification_products';
/** The facts of each store its products' state needs. */
export const NOTIFICATION_STORES = 'notification_stores';
/** The totals of each job until it finishes (a failed job reports what it had done). */
export const NOTIFICATION_JOBS = 'notification_jobs';

export const NOTIFICATION_TYPES = [
  'product.state_changed',
  'store.status_changed',
  'store.domain_approved',
  'job.finished',
] as const;
export type NotificationType = (typeof NOTIFICATION_TYPES)[number];

export type NotificationData =
  | {
      type: 'product.state_changed';
      data: { sku: string; store_id: string; state: ProductState; reasons: RejectionReason[] };
    }
  | { type: 'store.status_changed'; data: { store_id: string; status: StoreStatus } }
  | { type: 'store.domain_approved'; data: { store_id: string; domain: string } }
  | { type: 'job.finished'; data: { job_id: string; state: JobStateName } & JobTotals };

/** A notification as `GET /v1/events` shows it. */
export type Notification = { id: string; occurred_at: string } & NotificationData;

/** `position` is the causing event's log position; `seq` its rank among that event's notifications. */
export type NotificationDoc = ScopedDoc & Notification & { seq: number };

/** A stored notification as `GET /v1/events` shows it, and as webhooks send it. */
export function notificationView(doc: NotificationDoc): Notification {
  return { id: doc.id, type: doc.type, occurred_at: doc.occurred_at, data: doc.data } as Notification;
}

/** The public id: stable across restarts and rebuilds (the log does not move). */
export const notificationId = (position: number, seq: number): string => `ntf_${position}_${seq}`;

export const notificationDocId = (t: Tenant, position: number, seq: number): string =>
  scopedId(t, notificationId(position, seq));

export type NotificationProductDoc = ScopedDoc & {
  sku: string;
  store_id: string;
  removed: boolean;
  /** The current cover address (`image_urls[0]`) and the host of `product_url`. */
  cover_url: string;
  page_host: string;
  /** The last cover verdict, whatever its address (only one of the current address counts). */
  cover: { url: string; ok: boolean; reasons: RejectionReason[] } | null;
  last_write_at: string;
  /** The state last announced. */
  state: ProductState;
};

export type NotificationStoreDoc = ScopedDoc & {
  store_id: string;
  status: StoreStatus;
  domains: string[];
  domains_approved: string[];
};

export type NotificationJobDoc = ScopedDoc & { job_id: string; totals: JobTotals };

export const NOTIFICATION_COLLECTIONS: readonly CollectionSpec[] = [
  {
    name: NOTIFICATIONS,
    indexes: [
      ['partner_id', 'env', 'position', 'seq'],
      ['partner_id', 'env', 'type', 'position', 'seq'],
    ],
    applyIndexes: [], // the projector only adds notifications
  },
  { name: NOTIFICATION_PRODUCTS, indexes: [['partner_id', 'env', 'store_id', 'sku']] },
  { name: NOTIFICATION_STORES, indexes: [] },
  { name: NOTIFICATION_JOBS, indexes: [] },
];
