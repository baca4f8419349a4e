/**
 * Webhook signing, the Standard Webhooks scheme (docs/adr/0080-webhooks.md): each delivery carries `Webhook-Id` (the
 * notification id), `Webhook-Timestamp` (seconds since the epoch, by the service clock) and `Webhook-Signature`:
 * `v1,` + base64 of HMAC-SHA256 over `{id}.{timestamp}.{body}`, keyed with the bytes of the endpoint's secret (the
 * base64 after `whsec_`).
 *
 * Secrets are derived, never stored: `whsec_` + base64 of HMAC-SHA256(deployment key, endpoint scope and id). The
 * command door shows it once when the endpoint is created; the sender derives it again to sign.
 */
import { createHmac, createSecretKey, type KeyObject } from 'node:crypto';
import type { Tenant } from './streams.js';

export const SECRET_PREFIX = 'whsec_';

/** The deployment's key of webhook secrets. Holds it as a KeyObject: never printed, logged or serialized. */
export class WebhookKey {
  readonly #key: KeyObject;

  constructor(secret: string) {
    if (secret.length === 0) throw new RangeError('the webhook key is empty');
    this.#key = createSecretKey(Buffer.from(secret, 'utf8'));
  }

  /** The signing secret of one endpoint, as shown to the partner (`whsec_…`). */
  secretFor(tenant: Tenant, endpointId: string): string {
    const bytes = createHmac('sha256', this.#key)
      .update(JSON.stringify(['pc-webhook/1', tenant.env, tenant.partnerId, endpointId]), 'utf8')
      .digest();
    return SECRET_PREFIX + bytes.toString('base64');
  }

  toJSON(): string {
    return '[webhook key]';
  }
}

/** `v1,<base64 signature>` of one delivery, with the endpoint's secret (`whsec_…`). */
export function webhookSignature(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`, 'utf8').digest('base64')}`;
}
