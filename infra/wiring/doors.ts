/**
 * Builds the Koa apps of the two front doors and the admin API from their dependencies. The embedded service
 * (infra/service.ts) and the separate processes (infra/entry/) build them the same way.
 */
import type Koa from 'koa';
import type { Logger } from 'pino';
import type { Clock } from '../../shared-schema/ports/clock.js';
import type { EventStore } from '../../shared-schema/ports/event-store.js';
import type { ReadStore } from '../../shared-schema/ports/read-store.js';
import type { Messaging } from '../../shared-schema/ports/messaging.js';
import type { CompletedRequest, KeyLookup, KeyRecord } from '../../shared-schema/http/door.js';
import type { DoorState } from '../../shared-schema/http/context.js';
import { AggregateRepository } from '../../command-api/handler.js';
import { createCommandApi, type WriteHandler } from '../../command-api/app.js';
import type { CommandDeps } from '../../command-api/services/context.js';
import { createQueryApi, type QueryDeps, type ReadRoute } from '../../query-api/app.js';
import { createAdminApi, type AdminOptions } from '../admin/app.js';
import { publicDocuments } from '../public-documents.js';
import type { Config } from '../config.js';

export type WaitForPosition = (position: number, timeoutMs: number) => Promise<boolean>;

/** What every door is built from. */
export interface DoorParts {
  config: Config;
  log: Logger;
  clock: Clock;
  events: EventStore;
  reads: ReadStore;
  messaging: Messaging;
  /** Resolves true once the projections have committed `position`. */
  waitForPosition: WaitForPosition;
}

export function keyLookup(reads: ReadStore): KeyLookup {
  return (hash) => reads.get<KeyRecord & { _id: string }>('keys', hash);
}

export function commandDeps(parts: DoorParts): CommandDeps {
  const { events, reads, messaging, clock, config } = parts;
  return { events, reads, messaging, clock, repo: new AggregateRepository(events), publicBaseUrl: config.publicBaseUrl };
}

/** What the operator surface observes of each answered request (infra/ops: metrics, operation history). */
export interface DoorHooks {
  onCompleted?: (request: CompletedRequest) => void;
  onRateRefused?: (kind: string) => void;
}

export function buildCommandApp(parts: DoorParts, deps: CommandDeps, routes: Record<string, WriteHandler>, hooks: DoorHooks = {}): Koa<DoorState> {
  const { config, log, reads } = parts;
  return createCommandApi({ deps, log, baseUrl: config.apiBaseUrl, keys: keyLookup(reads), routes, rateLimits: config.rateLimits, ...hooks });
}

export function buildQueryApp(parts: DoorParts, routes: Record<string, ReadRoute>, hooks: DoorHooks = {}): Koa<DoorState> {
  const { reads, messaging, clock, config, waitForPosition } = parts;
  const deps: QueryDeps = { reads, messaging, clock, publicBaseUrl: config.publicBaseUrl, waitForPosition };
  return createQueryApi({
    deps,
    log: parts.log,
    baseUrl: config.apiBaseUrl,
    keys: keyLookup(reads),
    routes,
    publicDocuments: publicDocuments(config.apiBaseUrl),
    rateLimits: config.rateLimits,
    ...hooks,
  });
}

/** `more`: what the admin API does after the manual clock moved, extra routes. */
export function buildAdminApp(parts: DoorParts, deps: CommandDeps, token: string, more: Pick<AdminOptions, 'onClockMoved' | 'extend'> = {}): Koa {
  return createAdminApi({ deps, token, log: parts.log, clock: parts.clock, waitForPosition: parts.waitForPosition, ...more });
}
