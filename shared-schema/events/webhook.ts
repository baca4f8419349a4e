/**
 * Events of `webhook-{env}:{partner}`: the partner's one notification endpoint in an environment. `endpoint_id` names
 * one registration: its signing secret is derived from it (shared-schema/domain/webhooks.ts), so neither the log nor the read
 * models hold a secret. A new URL keeps the endpoint (and its secret); a removal ends it, and the next registration is
 * a new endpoint with a new secret.
 */
export type WebhookEvent =
  | { type: 'WebhookSet'; data: { endpoint_id: string; url: string; set_at: string } }
  | { type: 'WebhookRemoved'; data: { endpoint_id: string; removed_at: string } };
