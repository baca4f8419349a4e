/**
 * The parts of the process that runs the live projections, built the same way by the embedded service
 * (infra/wiring/service.ts) and the projections process (infra/wiring/entry/projections.ts): the operator surface over the
 * registered projectors with every collection ensured, the registered reactors, and the admin API.
 */
import type http from 'node:http';
import type { CommandDeps } from '../../command-api/services/context.js';
import type { CoverChecker } from '../../shared-schema/ports/cover-checker.js';
import { listen } from '../http/gateway.js';
import { Operations, type OperationsDeps } from '../ops/operations.js';
import { buildAdminApp, type DoorParts } from './doors.js';
import { startReactors, type Reactors } from './reactors.js';
import { ALL_COLLECTIONS, PROJECTORS, REACTORS } from './registry.js';

/** Operations over PROJECTORS; every read-model access goes through `operations.reads` (projection generations). */
export async function openOperations(deps: Omit<OperationsDeps, 'projectors'>): Promise<Operations> {
  const operations = await Operations.create({ ...deps, projectors: PROJECTORS });
  await operations.reads.ensureCollections(ALL_COLLECTIONS());
  return operations;
}

/** Starts every registered reactor with the operator surface's history, metrics and stop reports. */
export function startAllReactors(
  parts: DoorParts,
  deps: CommandDeps,
  operations: Operations,
  coverChecker?: CoverChecker,
): Promise<Reactors> {
  return startReactors(REACTORS, {
    ...parts,
    deps,
    recordHistory: operations.recordHistory,
    metrics: operations.metrics,
    subscriptionStopped: operations.subscriptionStopped,
    ...(coverChecker ? { coverChecker } : {}),
  });
}

/** The admin API on ADMIN_PORT, behind the operator surface's own routes (health, metrics, rebuilds, audit). */
export function serveAdmin(
  parts: DoorParts,
  deps: CommandDeps,
  operations: Operations,
  reactors: Reactors,
  token: string,
): Promise<http.Server> {
  const { config } = parts;
  const app = buildAdminApp(parts, deps, token, {
    onClockMoved: () => reactors.clockMoved(),
    extend: operations.adminRoutes,
  });
  return listen(
    operations.adminHandler(app.callback(), config.apiBaseUrl),
    config.adminPort,
    config.adminHost,
    config.apiBaseUrl,
  );
}
