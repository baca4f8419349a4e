/**
 * The part of the operator surface (infra/ops/) a front-door process needs when the doors run on their own: the
 * generational view of the read models (current generation of each projector, refreshed when the projections
 * process switches one: `projections.generation` message, and every GENERATION_REFRESH_MS) and the operation
 * history of the requests it answers.
 *
 * The rest of `Operations` (rebuilds and their gate, audit, health and metrics endpoints, start-up clean-up of
 * abandoned generations) belongs to the one process that runs the live projection runner: the projections process.
 * A door process must not run it: its clean-up would empty a generation the projections process is rebuilding.
 */
import type { Logger } from 'pino';
import type { Clock } from '../../shared-schema/ports/clock.js';
import type { CompletedRequest } from '../http/request-envelope.js';
import type { Messaging } from '../../shared-schema/ports/messaging.js';
import type { ReadStore } from '../../shared-schema/ports/read-store.js';
import type { Projector } from '../../projections/projector.js';
import { GenerationalReadStore } from '../../projections/generations.js';
import { HistoryWriter, type HistoryStore } from '../ops/history.js';
import type { OperationsSettings } from '../ops/settings.js';

export interface DoorOperations {
  /** Every read-model access of the door goes through this (logical names, current generation). */
  reads: GenerationalReadStore;
  /** Spread into the door's options. */
  hooks: { onCompleted: (request: CompletedRequest) => void };
  /** Waits for history writes, stops following generation switches. */
  close(): Promise<void>;
}

export async function startDoorOperations(options: {
  log: Logger;
  clock: Clock;
  /** The read store as opened (physical names). */
  reads: ReadStore;
  /** Where the history of the requests answered goes (infra/wiring/stores.ts `openHistory`). */
  history: HistoryStore;
  messaging: Messaging;
  projectors: readonly Projector[];
  settings: OperationsSettings;
}): Promise<DoorOperations> {
  const reads = new GenerationalReadStore(options.reads, options.projectors);
  await reads.load();
  await reads.follow({ messaging: options.messaging, refreshMs: options.settings.generationRefreshMs });
  const history = new HistoryWriter(options.history.sink, reads, options.clock, options.log);
  return {
    reads,
    hooks: { onCompleted: history.onCompleted },
    async close() {
      await history.flush();
      await reads.stopFollowing();
    },
  };
}
