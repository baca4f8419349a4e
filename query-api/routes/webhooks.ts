/** GET /webhook: the partner's endpoint in this environment and its most recent delivery attempts (404: none). */
import { callerOf } from '../../shared-schema/http/context.js';
import { notFound } from '../../shared-schema/contract/problems.js';
import {
  WEBHOOKS,
  WEBHOOK_DELIVERIES,
  webhookDocId,
  type WebhookDeliveryDoc,
  type WebhookDoc,
} from '../../shared-schema/read-models/webhooks.js';
import type { ReadRoute } from '../app.js';
import { NO_QUERY } from '../no-query.js';

export const webhookReadRoutes: readonly ReadRoute[] = [
  {
    method: 'GET',
    path: '/webhook',
    scope: 'catalog',
    query: NO_QUERY,
    handle: async (ctx, _q, deps) => {
      const doc = await deps.reads.get<WebhookDoc>(WEBHOOKS, webhookDocId(callerOf(ctx)));
      if (!doc) throw notFound('No webhook is registered for this partner and environment.');
      const delivery = await deps.reads.get<WebhookDeliveryDoc>(WEBHOOK_DELIVERIES, doc.endpoint_id);
      return { url: doc.url, created_at: doc.created_at, attempts: delivery?.attempts ?? [] };
    },
  },
];
