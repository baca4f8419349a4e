/**
 * What both door processes (command-api, query-api) open before serving: the configured stores (NATS required),
 * the generational view of the read models with the history of the requests they answer, every read-model
 * collection, and the watcher of the projections' committed position (read-your-writes across processes).
 */
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { ALL_COLLECTIONS, PROJECTORS } from '../registry.js';
import type { OperationsSettings } from '../../ops/settings.js';
import { openStores, requireSharedMessaging, type Stores } from '../stores.js';
import { PositionWatcher } from '../cross-process.js';
import type { DoorParts } from '../doors.js';
import { startDoorOperations, type DoorOperations } from '../door-operations.js';
import { processClock } from '../shared-clock.js';

export interface DoorProcess {
  stores: Stores;
  ops: DoorOperations;
  parts: DoorParts;
  /** Waits for the history, stops following, closes the stores (after the server has drained). */
  close(): Promise<void>;
}

export async function openDoorProcess(config: Config, settings: OperationsSettings, log: Logger): Promise<DoorProcess> {
  requireSharedMessaging(config);
  const clock = processClock(config);
  const stores = await openStores(config, 'configured', clock, log);
  const { events, messaging } = stores;
  const ops = await startDoorOperations({
    log,
    clock,
    reads: stores.reads,
    history: stores.history,
    messaging,
    projectors: PROJECTORS,
    settings,
  });
  const reads = ops.reads;
  await reads.ensureCollections(ALL_COLLECTIONS());
  const watcher = await PositionWatcher.start({ reads, messaging, checkpointNames: PROJECTORS.map((p) => p.name) });
  const parts: DoorParts = {
    config,
    log,
    clock,
    events,
    reads,
    messaging,
    waitForPosition: (p, t) => watcher.waitFor(p, t),
  };
  return {
    stores,
    ops,
    parts,
    async close() {
      await ops.close();
      await watcher.close();
      await stores.close();
    },
  };
}
