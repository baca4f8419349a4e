/**
 * The operator surface beyond partners and keys, wired in one object: generations of read models (and their
 * rebuild), the gate in front of the live runner, the operation history, metrics, health, audit export and verify.
 *
 * Wiring (infra/service.ts): create it right after the stores; give `reads` to everything (doors, admin, services)
 * and `runnerReads` to the live ProjectionRunner; spread `doorHooks(door)` into each door's options; pass
 * `adminRoutes` as the admin app's `extend`; serve the admin port through `adminHandler(adminApp.callback())`;
 * call `beginShutdown()` first and `close()` before the stores close.
 */
import type http from 'node:http';
import type Router from '@koa/router';
import type { Logger } from 'pino';
import type { Clock } from '../../shared-schema/ports/clock.js';
import type { EventStore } from '../../shared-schema/ports/event-store.js';
import type { ReadStore } from '../../shared-schema/ports/read-store.js';
import type { Messaging } from '../../shared-schema/ports/messaging.js';
import type { CompletedRequest } from '../../shared-schema/http/door.js';
import type { Projector } from '../../projections/projector.js';
import { GenerationalReadStore } from '../../projections/generations.js';
import { UnitGate } from '../../projections/unit-gate.js';
import { ProjectionRebuilder } from '../../projections/rebuild.js';
import type { VerifyReport } from '../../projections/verify.js';
import { HistoryWriter, type HistoryInput, type HistoryStore } from './history.js';
import { newServiceMetrics, type Door, type ServiceMetrics } from './metrics.js';
import { eventsAfter, projectionStatuses, type ProjectionStatus } from './projection-status.js';
import { auditVerify, sqliteScratch, type ScratchStore } from './audit.js';
import { DEFAULT_OPERATIONS_SETTINGS, type OperationsSettings } from './settings.js';
import { operationsAdminRoutes } from './admin-routes.js';
import { healthAndMetricsHandler } from './health.js';

export interface OperationsDeps {
  log: Logger;
  clock: Clock;
  events: EventStore;
  /** The read store as opened (physical names). */
  reads: ReadStore;
  /** Where the operation history goes and is read from (infra/wiring/stores.ts `openHistory`). */
  history: HistoryStore;
  messaging: Messaging;
  /** The read-model projectors the live runner applies (no reactors: a rebuild replays `apply`). */
  projectors: readonly Projector[];
  settings?: Partial<OperationsSettings>;
  /** Scratch stores for `audit verify` (default: a temporary SQLite file). */
  scratch?: () => Promise<ScratchStore>;
  metrics?: ServiceMetrics;
}

export interface Readiness {
  ready: boolean;
  checks: { shutting_down: boolean; event_store: string; read_store: string; projections: Record<string, string> };
}

export class Operations {
  readonly settings: OperationsSettings;
  /** Every reader and writer of read models uses this (logical names, current generation). */
  readonly reads: GenerationalReadStore;
  /** Give this to the live ProjectionRunner (its units pass the gate). */
  readonly runnerReads: UnitGate;
  readonly gate: UnitGate;
  readonly history: HistoryWriter;
  /** What the admin history route reads. */
  readonly historyReads: ReadStore;
  readonly metrics: ServiceMetrics;
  readonly rebuilder: ProjectionRebuilder;
  private shuttingDown = false;

  private constructor(private readonly deps: OperationsDeps) {
    this.settings = { ...DEFAULT_OPERATIONS_SETTINGS, ...(deps.settings ?? {}) };
    this.reads = new GenerationalReadStore(deps.reads, deps.projectors);
    this.gate = new UnitGate(this.reads);
    this.runnerReads = this.gate;
    this.metrics = deps.metrics ?? newServiceMetrics();
    this.history = new HistoryWriter(deps.history.sink, this.reads, deps.clock, deps.log, this.metrics.historyWriteFailed);
    this.historyReads = deps.history.reads;
    this.rebuilder = new ProjectionRebuilder({
      events: deps.events,
      reads: this.reads,
      gate: this.gate,
      clock: deps.clock,
      messaging: deps.messaging,
      pageSize: this.settings.rebuildPageSize,
      maxEventsPerSecond: this.settings.rebuildMaxEventsPerSecond,
      dropGraceMs: this.settings.generationDropGraceMs,
      onError: (err, projection) => deps.log.error({ err, projection }, 'projection rebuild failed'),
    });
    this.metrics.setProjectionSource(async () => {
      const statuses = await this.projections();
      return { head: statuses[0]?.head ?? (await deps.events.headPosition()), projections: statuses.map((s) => ({ name: s.name, checkpoint: s.checkpoint, lag: s.lag_positions })) };
    });
  }

  /** Loads the generation map and prepares the history collection; call before anything reads. */
  static async create(deps: OperationsDeps): Promise<Operations> {
    const ops = new Operations(deps);
    await ops.reads.load();
    await ops.reads.follow({ messaging: deps.messaging, refreshMs: ops.settings.generationRefreshMs });
    await ops.rebuilder.cleanUp();
    return ops;
  }

  /** For the batch runner (a batch processed) and any other later work: one history entry, never throws. */
  readonly recordHistory = (input: HistoryInput): Promise<void> => this.history.record(input);

  /** Options to spread into `createCommandApi` / `createQueryApi`. */
  doorHooks(door: Door): { onCompleted: (r: CompletedRequest) => void; onRateRefused: (kind: string) => void } {
    const observe = this.metrics.requestObserver(door);
    return {
      onCompleted: (r) => {
        observe(r);
        this.history.onCompleted(r);
      },
      onRateRefused: this.metrics.rateRefused(door),
    };
  }

  projections(): Promise<ProjectionStatus[]> {
    return projectionStatuses(this.deps.events, this.reads, this.rebuilder, { lagBound: this.settings.readyMaxLagEvents });
  }

  verify(): Promise<VerifyReport> {
    return auditVerify({ events: this.deps.events, live: this.reads, gate: this.gate, projectors: this.rebuilder.projectors, scratch: this.deps.scratch ?? sqliteScratch });
  }

  async readiness(): Promise<Readiness> {
    const checks: Readiness['checks'] = { shutting_down: this.shuttingDown, event_store: 'ok', read_store: 'ok', projections: {} };
    const probe = async (what: () => Promise<unknown>): Promise<string> => {
      try {
        await withTimeout(what(), 2000);
        return 'ok';
      } catch (err) {
        return `unreachable: ${err instanceof Error ? err.message : String(err)}`;
      }
    };
    checks.event_store = await probe(() => this.deps.events.headPosition());
    checks.read_store = await probe(() => this.deps.reads.getCheckpoint('__ready'));
    let ready = !this.shuttingDown && checks.event_store === 'ok' && checks.read_store === 'ok';
    if (checks.event_store === 'ok' && checks.read_store === 'ok') {
      const bound = this.settings.readyMaxLagEvents;
      for (const p of this.rebuilder.projectors) {
        const lag = await eventsAfter(this.deps.events, await this.reads.getCheckpoint(p.name), p.categories, bound + 1);
        checks.projections[p.name] = lag > bound ? `behind: more than ${bound} events to apply` : 'ok';
        if (lag > bound) ready = false;
      }
    }
    return { ready, checks };
  }

  /** Registers the admin routes (history, projections, export, verify, cover-check dead letters). */
  readonly adminRoutes = (router: Router): void => operationsAdminRoutes(router, this, this.deps.events, this.deps.messaging);

  /** Serves health and metrics on the admin port in front of the admin app. */
  adminHandler(admin: (req: http.IncomingMessage, res: http.ServerResponse) => void): (req: http.IncomingMessage, res: http.ServerResponse) => void {
    return healthAndMetricsHandler(this, admin);
  }

  /** Readiness answers 503 from now on (load balancers stop sending). */
  beginShutdown(): void {
    this.shuttingDown = true;
  }

  /** Waits for history writes, cancels a rebuild in progress (the old generation keeps serving). */
  async close(): Promise<void> {
    this.shuttingDown = true;
    await this.rebuilder.close();
    await this.history.flush();
    await this.reads.stopFollowing();
  }
}

async function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}
