/** The webhook endpoints (shared-schema/read-models/webhooks.ts): one document per partner and environment. */
import { asUnion } from '../../shared-schema/ports/event-store.js';
import type { WebhookEvent } from '../../shared-schema/events/webhook.js';
import {
  WEBHOOKS,
  WEBHOOK_COLLECTIONS,
  webhookDocId,
  type WebhookDoc,
} from '../../shared-schema/read-models/webhooks.js';
import { alreadyApplied, streamScope, type Projector } from '../projector.js';

export const webhooksProjector: Projector = {
  name: 'webhooks',
  collections: WEBHOOK_COLLECTIONS,
  categories: ['webhook'],
  async apply(recorded, tx) {
    const e = asUnion<WebhookEvent>(recorded);
    const { env, partnerId } = streamScope(recorded.stream);
    const id = webhookDocId({ env, partnerId });
    const current = await tx.get<WebhookDoc>(WEBHOOKS, id);
    if (alreadyApplied(current, recorded)) return;
    switch (e.type) {
      case 'WebhookSet': {
        const same = current?.endpoint_id === e.data.endpoint_id;
        await tx.put(WEBHOOKS, {
          _id: id,
          partner_id: partnerId,
          env,
          endpoint_id: e.data.endpoint_id,
          url: e.data.url,
          created_at: same ? current.created_at : e.data.set_at,
          from_position: same ? current.from_position : recorded.position,
          position: recorded.position,
        } satisfies WebhookDoc);
        break;
      }
      case 'WebhookRemoved':
        if (current) await tx.delete(WEBHOOKS, id);
        break;
    }
  },
};
