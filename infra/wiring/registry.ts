/**
 * What every process of the service registers, in one place: the projectors, the reactors and the read-model
 * collections. The embedded service (infra/wiring/service.ts) starts all of them in one process; the distributed topology
 * starts the same lists in its processes (infra/wiring/entry/). A new projector or reactor is added here only.
 */
import { IDEMPOTENCY_COLLECTION } from '../../command-api/idempotency.js';
import { PORTAL_SESSION_COLLECTIONS } from '../../shared-schema/read-models/portal-sessions.js';
import { WEBHOOK_DELIVERY_COLLECTION } from '../../shared-schema/read-models/webhooks.js';
import { PROJECTORS } from './projectors.js';
import type { ReactorStart } from './reactors.js';
import {
  batchRunnerReactor,
  coverCheckReactor,
  feedRetentionReactor,
  freshnessReactor,
  webhookSenderReactor,
} from './core-reactors.js';

export { PROJECTORS };

/** Reactors: started in the one process of the embedded default, in the projections process otherwise. */
export const REACTORS: readonly ReactorStart[] = [
  batchRunnerReactor,
  coverCheckReactor,
  freshnessReactor,
  feedRetentionReactor,
  webhookSenderReactor,
];

/** Every collection a door or a projector reads (each process makes sure they exist before serving). */
export const ALL_COLLECTIONS = () => [
  IDEMPOTENCY_COLLECTION,
  WEBHOOK_DELIVERY_COLLECTION,
  ...PORTAL_SESSION_COLLECTIONS,
  ...PROJECTORS.flatMap((p) => p.collections),
];
