/** The partner's webhook endpoint: set (PUT) and remove (DELETE), one per partner and environment. */
import { randomBytes } from 'node:crypto';
import { streams, type Tenant } from '../../shared-schema/domain/streams.js';
import type { EventMetadata } from '../../shared-schema/ports/event-store.js';
import { ProblemError } from '../../shared-schema/contract/problems.js';
import { webhookDecider } from '../deciders/webhook.js';
import type { CommandDeps } from './context.js';

/** The PUT answer: `secret` only when this request created the endpoint. */
export interface WebhookSetView {
  url: string;
  created_at: string;
  secret?: string;
}

export async function setWebhook(
  deps: CommandDeps,
  tenant: Tenant,
  url: string,
  meta: EventMetadata,
): Promise<{ view: WebhookSetView; position?: number }> {
  const key = deps.webhookKey;
  if (!key) throw new ProblemError(503, [], 'Webhooks are not configured on this deployment.');
  const handled = await deps.repo.handle(
    streams.webhook(tenant),
    webhookDecider,
    { type: 'SetWebhook', url, newEndpointId: `wh_${randomBytes(12).toString('base64url')}`, now: meta.recorded_at },
    meta,
  );
  const view: WebhookSetView = { url: handled.state.url, created_at: handled.state.createdAt };
  if (handled.result.created) view.secret = key.secretFor(tenant, handled.state.endpointId!);
  return handled.position !== undefined ? { view, position: handled.position } : { view };
}

export async function removeWebhook(
  deps: CommandDeps,
  tenant: Tenant,
  meta: EventMetadata,
): Promise<{ position?: number }> {
  const handled = await deps.repo.handle(
    streams.webhook(tenant),
    webhookDecider,
    { type: 'RemoveWebhook', now: meta.recorded_at },
    meta,
  );
  return handled.position !== undefined ? { position: handled.position } : {};
}
