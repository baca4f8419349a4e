/** `GET /v1/events` (PORTAL.md "What changed since I last looked"): its query and its answer. */
import { NOTIFICATION_TYPES } from '../../read-models/notifications.js';
import { ProductStateSchema } from './catalog.js';
import { Cursor, DateTime, ExternalId, Limit, RejectionReason, type JsonSchema } from './common.js';

export const NotificationTypeSchema: JsonSchema = { enum: [...NOTIFICATION_TYPES] };

export const ListEventsQuery: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: { cursor: Cursor, limit: Limit, type: NotificationTypeSchema },
};

const count: JsonSchema = { type: 'integer', minimum: 0 };

const object = (properties: Record<string, JsonSchema>): JsonSchema => ({
  type: 'object',
  required: Object.keys(properties),
  additionalProperties: false,
  properties,
});

/** The `data` of each type, exactly the fields PORTAL.md lists. */
const DATA: Record<(typeof NOTIFICATION_TYPES)[number], JsonSchema> = {
  'product.state_changed': object({
    sku: ExternalId,
    store_id: ExternalId,
    state: ProductStateSchema,
    reasons: { type: 'array', items: RejectionReason },
  }),
  'store.status_changed': object({ store_id: ExternalId, status: { enum: ['pending_review', 'active', 'suspended'] } }),
  'store.domain_approved': object({ store_id: ExternalId, domain: { type: 'string' } }),
  'job.finished': object({
    job_id: { type: 'string' },
    state: { enum: ['done', 'failed'] },
    received: count,
    accepted: count,
    rejected: count,
    pending: count,
    removed: count,
  }),
};

/** One notification: `id` (stable, unique), `type`, `occurred_at` (service clock) and the `data` of its type. */
export const Notification: JsonSchema = {
  type: 'object',
  allOf: [
    { required: ['type'], properties: { type: NotificationTypeSchema } },
    ...NOTIFICATION_TYPES.map((type) => ({
      if: { properties: { type: { const: type } }, required: ['type'] },
      then: {
        properties: { id: { type: 'string' }, type: true, occurred_at: DateTime, data: DATA[type] },
        required: ['id', 'occurred_at', 'data'],
        additionalProperties: false,
      },
    })),
  ],
};

/** `next_cursor` is never null: where to ask next (an empty `data` means nothing new yet). */
export const NotificationPage: JsonSchema = {
  type: 'object',
  required: ['data', 'next_cursor'],
  properties: { data: { type: 'array', items: Notification }, next_cursor: { type: 'string' } },
};
