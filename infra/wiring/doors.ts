/**
 * Builds the Koa apps of the two front doors and the admin API from their dependencies. The embedded service
 * (infra/wiring/service.ts) and the separate processes (infra/wiring/entry/) build them the same way.
 */
import type Koa from 'koa';
import type { Logger } from 'pino';
import type { Clock } from '../../shared-schema/ports/clock.js';
import type { EventStore } from '../../shared-schema/ports/event-store.js';
import type { ReadStore } from '../../shared-schema/ports/read-store.js';
import type { Messaging } from '../../shared-schema/ports/messaging.js';
import type { KeyRecord } from '../../shared-schema/read-models/partners.js';
import type { DoorRoutes, DoorState } from '../../shared-schema/http/context.js';
import { AggregateRepository } from '../../command-api/aggregate-repository.js';
import { CachedAggregateStates } from '../adapters/event-store/cached-state.js';
import { commandDoor } from '../../command-api/app.js';
import { FreshnessReactor } from '../../command-api/reactors/freshness.js';
import { WRITE_ROUTES } from '../../command-api/write-routes.js';
import { READ_ROUTES } from '../../query-api/read-routes.js';
import { API_ROUTES } from './api-routes.js';
import { resolveCursorSecret, resolveWebhookKey } from './data-dir-secret.js';
import type { CommandDeps } from '../../command-api/services/context.js';
import { queryDoor, type QueryDeps } from '../../query-api/app.js';
import { limitInFlight, searchHere } from '../../query-api/public/product-search.js';
import { FeedPace } from '../../query-api/feeds/pace.js';
import { SettledWatermark } from '../../query-api/ledger.js';
import type { ProductSearch } from '../../shared-schema/shopper/search-policy.js';
import type { CompletedRequest } from '../http/request-envelope.js';
import type { KeyLookup } from '../http/authenticate.js';
import { frontDoor } from '../http/front-door.js';
import { clientAddress } from '../http/client-address.js';
import { writeProblem } from '../http/problem-answer.js';
import { createRedirector, type RedirectorOptions } from '../../command-api/redirector.js';
import type { Handler } from '../http/gateway.js';
import { createAdminApi, type AdminOptions } from '../http/admin/app.js';
import { publicDocumentLookup } from '../http/public-documents.js';
import type { Config } from './config.js';
import { KEYS, type KeyDoc } from '../../shared-schema/read-models/partners.js';

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
  /** Keys remembered by both doors (only where the projections run in the same process: see KeyCache). */
  keyCache?: KeyCache;
  /** The shopper search on the offers it holds (QueryDeps `productSearch`). */
  productSearch?: ProductSearch;
}

export function keyLookup(reads: ReadStore, cache?: KeyCache): KeyLookup {
  const read: KeyLookup = (hash) => reads.get<KeyDoc>(KEYS, hash);
  return cache ? cache.over(read) : read;
}

/**
 * Keys found by hash, remembered until `clear()`, or until the count it `follow`s changes: the embedded service's
 * projections commit a partner event (a key issued or revoked, a partner renamed) in a unit that clears it in-process,
 * or that raises the projection thread's count of such units before its position, so that a lookup starting once a
 * request waiting for that position goes on forgets every key held: a revocation answered by the admin API is
 * refused at once. Only the embedded default uses it: a door in another process than the projections has no such
 * exact signal, and reads the key every time.
 */
export class KeyCache {
  private readonly records = new Map<string, KeyRecord>();
  /** Bumped by `clear()`: a lookup that started before a clear does not store what it read. */
  private generation = 0;
  private changes: (() => number) | null = null;
  private seen = 0;

  /** Bound: `capacity` keys (a record is ~300 B: ~3 MB); a full cache is emptied and refilled by the next lookups. */
  constructor(private readonly capacity = 10_000) {}

  get size(): number {
    return this.records.size;
  }

  over(read: KeyLookup): KeyLookup {
    return async (hash) => {
      if (this.changes !== null) {
        const now = this.changes();
        if (now !== this.seen) {
          this.seen = now;
          this.clear();
        }
      }
      const hit = this.records.get(hash);
      if (hit) return hit;
      const generation = this.generation;
      const record = await read(hash);
      if (record && generation === this.generation) {
        if (this.records.size >= this.capacity) this.records.clear();
        this.records.set(hash, record);
      }
      return record;
    };
  }

  /** Clears the cache whenever `changes()` differs from what it last was, looked at before each lookup. */
  follow(changes: () => number): void {
    this.changes = changes;
    this.seen = changes();
  }

  clear(): void {
    this.generation++;
    this.records.clear();
  }
}

export function commandDeps(parts: DoorParts): CommandDeps {
  const { events, reads, messaging, clock, config } = parts;
  return {
    events,
    reads,
    messaging,
    clock,
    repo: new AggregateRepository(new CachedAggregateStates(events)),
    publicBaseUrl: config.publicBaseUrl,
    webhookKey: resolveWebhookKey(config),
  };
}

/** What the operator surface observes of each answered request (infra/ops: metrics, operation history). */
export interface DoorHooks {
  onCompleted?: (request: CompletedRequest) => void;
  onRateRefused?: (kind: string) => void;
}

/** A door behind the front both doors share, with the deployment's key lookup, rate limits and proxies. */
export function buildDoorApp(parts: DoorParts, door: DoorRoutes, hooks: DoorHooks = {}): Koa<DoorState> {
  const { config, log, reads, messaging, clock } = parts;
  return frontDoor(door, {
    log,
    baseUrl: config.apiBaseUrl,
    keys: keyLookup(reads, parts.keyCache),
    routes: API_ROUTES,
    messaging,
    clock,
    rateLimits: config.rateLimits,
    trustedProxyHops: config.trustedProxyHops,
    ...hooks,
  });
}

/** The command door with every write route (command-api/write-routes.ts). */
export function buildCommandApp(parts: DoorParts, deps: CommandDeps, hooks: DoorHooks = {}): Koa<DoorState> {
  return buildDoorApp(parts, commandDoor({ deps, routes: WRITE_ROUTES, bodies: parts.config.bodies }), hooks);
}

/** The public click redirector (`/r/…`), served beside the command door, braking by the doors' client address. */
export function buildRedirector(
  parts: DoorParts,
  deps: CommandDeps,
  onAnswered?: RedirectorOptions['onAnswered'],
): Handler {
  const { config, log } = parts;
  return createRedirector(deps, log, {
    answerProblem: (req, res, err, requestId) =>
      writeProblem(req, res, err, { baseUrl: config.apiBaseUrl, requestId, log: log.child({ request_id: requestId }) }),
    clientAddress: (req) => clientAddress(req, config.trustedProxyHops),
    onAnswered,
  });
}

/**
 * The full feed's `recordDueLapses` (query-api/feeds/lapses.ts): a freshness reactor of the door's own, never
 * started, whose scan decides on every product due by the clock at the scan (at or after the instant the feed
 * passes: what is due then is due by the scan). Its scans run one at a time, and concurrent feed reads share the
 * next one. The freshness reactor of the projections process (or of the embedded process) may decide on the same
 * products meanwhile: each lapse is appended with the product stream's revision, and the decision taken again after a
 * conflict finds it recorded, so there is never more than one.
 */
export function lapseRecorder(parts: DoorParts, deps: CommandDeps): (at: Date) => Promise<number> {
  const reactor = new FreshnessReactor({
    deps,
    intervalMs: parts.config.freshnessScanMs,
    onError: (err, sku) => parts.log.error({ err, sku }, 'freshness lapses before a full feed failed'),
  });
  return () => reactor.scan();
}

/**
 * The query door with every read route (query-api/read-routes.ts), signing cursors with DATA_DIR's secret. `writes`:
 * the write side's dependencies the full feed records due lapses through (the process's own when it has them).
 */
export function buildQueryApp(parts: DoorParts, hooks: DoorHooks = {}, writes?: CommandDeps): Koa<DoorState> {
  const { reads, messaging, clock, config, waitForPosition, productSearch, events } = parts;
  const deps: QueryDeps = {
    reads,
    events,
    messaging,
    clock,
    publicBaseUrl: config.publicBaseUrl,
    waitForPosition,
    logHead: () => events.recordedHead?.() ?? events.headPosition(),
    ledgerSettled: new SettledWatermark(),
    recordDueLapses: lapseRecorder(parts, writes ?? commandDeps(parts)),
    cursorSecret: resolveCursorSecret(config),
    feedGzipLevel: config.feedGzipLevel,
    feedPace: new FeedPace(config.feedOffersPerSecond),
    productSearch: limitInFlight(productSearch ?? searchHere(reads), config.searchesInFlight),
  };
  return buildDoorApp(
    parts,
    queryDoor({ deps, routes: READ_ROUTES, publicDocument: publicDocumentLookup(config.apiBaseUrl) }),
    hooks,
  );
}

/** `more`: what the admin API does after the manual clock moved, extra routes. */
export function buildAdminApp(
  parts: DoorParts,
  deps: CommandDeps,
  token: string,
  more: Pick<AdminOptions, 'onClockMoved' | 'extend'> = {},
): Koa {
  return createAdminApi({
    deps,
    token,
    namedTokens: parts.config.adminTokens,
    problemBaseUrl: parts.config.apiBaseUrl,
    log: parts.log,
    clock: parts.clock,
    waitForPosition: parts.waitForPosition,
    ...more,
  });
}
