/**
 * The webhook endpoints (written by projections/projectors/webhooks.ts from the `webhook-…` streams) and the delivery
 * state of each (written by the sender, command-api/reactors/webhook-sender.ts: not a projection, like the
 * idempotency records).
 */
import type { CollectionSpec, Scalar } from '../ports/read-store.js';
import type { Tenant } from '../domain/streams.js';
import { scopedId, type ScopedDoc } from './scoped-id.js';

export const WEBHOOKS = 'webhooks';
export const WEBHOOK_DELIVERIES = 'webhook_deliveries';

/** One endpoint per partner and environment. */
export type WebhookDoc = ScopedDoc & {
  endpoint_id: string;
  url: string;
  created_at: string;
  /** Log position of the endpoint's creation: it is sent the notifications after it. */
  from_position: number;
};

export const webhookDocId = (t: Tenant): string => scopedId(t, 'webhook');

/** One delivery attempt, as `GET /v1/webhook` shows it. */
export interface DeliveryAttempt {
  notification_id: string;
  attempted_at: string;
  /** The receiver's HTTP status; null when no answer came (refused address, connection, timeout). */
  status: number | null;
  ok: boolean;
  /** Why it failed, in a few words; null when it succeeded. */
  error: string | null;
}

/** Where the sender is for one endpoint (`_id` = the endpoint id). */
export type WebhookDeliveryDoc = {
  _id: string;
  partner_id: string;
  env: string;
  /** Sort values (position, seq, _id) of the last notification done with (delivered or given up). */
  after: Scalar[];
  /** The notification being retried: when its first attempt was, how many so far, and when the next is due. */
  retry: { notification_id: string; first_at: string; tries: number; next_at: string } | null;
  /** The most recent attempts, newest first. */
  attempts: DeliveryAttempt[];
};

export const WEBHOOK_COLLECTIONS: readonly CollectionSpec[] = [{ name: WEBHOOKS, indexes: [] }];
export const WEBHOOK_DELIVERY_COLLECTION: CollectionSpec = { name: WEBHOOK_DELIVERIES, indexes: [] };
