/**
 * The partner's notification endpoint in one environment: PUT sets its URL (creating the endpoint, with a new id,
 * when there is none), DELETE removes it.
 */
import type { WebhookEvent } from '../../shared-schema/events/webhook.js';
import { unreachable, type Decider, type Decision } from './decider.js';

export interface WebhookState {
  endpointId: string | null;
  url: string;
  createdAt: string;
}

export type WebhookCommand =
  /** `newEndpointId`: the id a new endpoint takes (the caller draws it; unused when one exists). */
  { type: 'SetWebhook'; url: string; newEndpointId: string; now: string } | { type: 'RemoveWebhook'; now: string };

export interface WebhookResult {
  /** True when this command created the endpoint (its secret is shown in this answer only). */
  created: boolean;
}

const initialState = (): WebhookState => ({ endpointId: null, url: '', createdAt: '' });

function evolve(s: WebhookState, e: WebhookEvent): WebhookState {
  switch (e.type) {
    case 'WebhookSet':
      return s.endpointId === e.data.endpoint_id
        ? { ...s, url: e.data.url }
        : { endpointId: e.data.endpoint_id, url: e.data.url, createdAt: e.data.set_at };
    case 'WebhookRemoved':
      return initialState();
    default:
      return unreachable(e);
  }
}

function decide(c: WebhookCommand, s: WebhookState): Decision<WebhookEvent, WebhookResult> {
  switch (c.type) {
    case 'SetWebhook': {
      if (s.endpointId !== null && s.url === c.url) return { events: [], result: { created: false } };
      const endpointId = s.endpointId ?? c.newEndpointId;
      return {
        events: [{ type: 'WebhookSet', data: { endpoint_id: endpointId, url: c.url, set_at: c.now } }],
        result: { created: s.endpointId === null },
      };
    }
    case 'RemoveWebhook':
      if (s.endpointId === null) return { events: [], result: { created: false } };
      return {
        events: [{ type: 'WebhookRemoved', data: { endpoint_id: s.endpointId, removed_at: c.now } }],
        result: { created: false },
      };
    default:
      return unreachable(c);
  }
}

export const webhookDecider: Decider<WebhookState, WebhookCommand, WebhookEvent, WebhookResult> = {
  name: 'webhook',
  initialState,
  evolve,
  decide,
};
