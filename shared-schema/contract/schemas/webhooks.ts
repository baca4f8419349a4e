/** `PUT /v1/webhook`, `GET /v1/webhook`: the partner's notification endpoint and its recent delivery attempts. */
import { DateTime, HttpsUrl, type JsonSchema } from './common.js';

export const WebhookInput: JsonSchema = {
  type: 'object',
  required: ['url'],
  additionalProperties: false,
  properties: { url: HttpsUrl },
};

/** The PUT answer; `secret` (`whsec_…`) only in the answer that created the endpoint. */
export const WebhookRegistration: JsonSchema = {
  type: 'object',
  required: ['url', 'created_at'],
  properties: { url: { type: 'string' }, created_at: DateTime, secret: { type: 'string', pattern: '^whsec_' } },
};

export const WebhookAttempt: JsonSchema = {
  type: 'object',
  required: ['notification_id', 'attempted_at', 'status', 'ok', 'error'],
  properties: {
    notification_id: { type: 'string' },
    attempted_at: DateTime,
    status: { type: ['integer', 'null'], minimum: 100, maximum: 599 },
    ok: { type: 'boolean' },
    error: { type: ['string', 'null'] },
  },
};

/** The GET answer: the endpoint and its most recent delivery attempts, newest first. */
export const Webhook: JsonSchema = {
  type: 'object',
  required: ['url', 'created_at', 'attempts'],
  properties: {
    url: { type: 'string' },
    created_at: DateTime,
    attempts: { type: 'array', items: WebhookAttempt },
  },
};
