import type { EventMetadata, EventStore } from '../../shared-schema/ports/event-store.js';
import type { ReadStore } from '../../shared-schema/ports/read-store.js';
import type { Messaging } from '../../shared-schema/ports/messaging.js';
import type { Clock } from '../../shared-schema/ports/clock.js';
import type { AggregateRepository } from '../aggregate-repository.js';
import type { WebhookKey } from '../../shared-schema/domain/webhooks.js';

/** Everything the write side needs, passed in (no module-level clients). */
export interface CommandDeps {
  events: EventStore;
  reads: ReadStore;
  messaging: Messaging;
  clock: Clock;
  repo: AggregateRepository;
  /** Base of `svc_url` links. */
  publicBaseUrl: string;
  /** The key webhook secrets are derived from (absent: the webhook routes answer 503). */
  webhookKey?: WebhookKey;
}

export function metadata(clock: Clock, requestId: string | undefined, actor: string): EventMetadata {
  const m: EventMetadata = { recorded_at: clock.now().toISOString(), actor };
  if (requestId) m.request_id = requestId;
  return m;
}
