/**
 * The operator surface beyond partners and keys, wired in one object: generations of read models (and their
 * rebuild), the gate in front of the live runner, the operation history, metrics, health, audit export and verify.
 *
 * Wiring (infra/wiring/service.ts): create it right after the stores; give `reads` to everything (doors, admin, services)
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
import type { CompletedRequest } from '../http/request-envelope.js';
import type { Projector } from '../../projections/projector.js';
import { GenerationalReadStore } from '../../projections/generations.js';
import { GatedReadStore, UnitGate, type RunnerGate } from '../../projections/unit-gate.js';
import { ProjectionRebuilder } from '../../projections/rebuild.js';
import type { VerifyReport } from '../../projections/verify.js';
import {
  listParked,
  parkedCollection as parkedCollectionOf,
  retryParked,
  type ParkedEvent,
  type ParkedView,
  type RetryResult,
} from '../../projections/parking.js';
import { parkedLog, runnerLogHooks } from './projection-logs.js';
import { HistoryWriter, type HistoryInput, type HistoryStore } from './history.js';
import { newServiceMetrics, type Door, type ServiceMetrics } from './metrics.js';
import { eventsAfter, projectionStatuses, type ProjectionStatus } from './projection-status.js';
import { auditVerify, sqliteScratch, type ScratchStore } from './audit.js';
import { DEFAULT_OPERATIONS_SETTINGS, type OperationsSettings } from './settings.js';
import { operationsAdminRoutes } from './admin-routes.js';
import { closingsAdminRoutes } from './closings.js';
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
  /**
   * The gate of a live runner that does not run in this thread (infra/wiring/projection-thread.ts). Without it, the
   * live runner is given `runnerReads`, whose units pass a UnitGate.
   */
  gate?: RunnerGate;
  /** Scratch stores for `audit verify` (default: a temporary SQLite file). */
  scratch?: () => Promise<ScratchStore>;
  metrics?: ServiceMetrics;
}

export interface Readiness {
  ready: boolean;
  /** Ready but some projection has parked events: reads are served, some documents miss an event. */
  degraded: boolean;
  checks: {
    shutting_down: boolean;
    event_store: string;
    read_store: string;
    projections: Record<string, string>;
    parked_events: number;
    /**
     * Present when a subscription to the log stopped on an error that retrying cannot cure, by subscriber
     * (`projections`, `batch-runner`, `cover-check`): `stopped: <message>`. Its work no longer follows the log.
     */
    subscriptions?: Record<string, string>;
  };
}

export class Operations {
  readonly settings: OperationsSettings;
  /** Every reader and writer of read models uses this (logical names, current generation). */
  readonly reads: GenerationalReadStore;
  /** Give this to a live ProjectionRunner of this thread (its units pass the gate); parked retries write through it. */
  readonly runnerReads: ReadStore;
  /** Holds the live runner between two units (rebuild switches, audits, parked retries). */
  readonly gate: RunnerGate;
  readonly history: HistoryWriter;
  /** What the admin history route reads. */
  readonly historyReads: ReadStore;
  readonly metrics: ServiceMetrics;
  readonly rebuilder: ProjectionRebuilder;
  private shuttingDown = false;
  /** Subscriber → `stopped: <message>`, for every subscription to the log that ended on an error. */
  private readonly stopped = new Map<string, string>();

  private constructor(private readonly deps: OperationsDeps) {
    this.settings = { ...DEFAULT_OPERATIONS_SETTINGS, ...(deps.settings ?? {}) };
    this.reads = new GenerationalReadStore(deps.reads, deps.projectors);
    if (deps.gate) {
      this.gate = deps.gate;
      this.runnerReads = new GatedReadStore(this.reads, deps.gate);
    } else {
      const gate = new UnitGate(this.reads);
      this.gate = gate;
      this.runnerReads = gate;
    }
    this.metrics = deps.metrics ?? newServiceMetrics();
    this.history = new HistoryWriter(
      deps.history.sink,
      this.reads,
      deps.clock,
      deps.log,
      this.metrics.historyWriteFailed,
    );
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
      ...(this.settings.rebuildBeforeSwitch ? { beforeSwitch: this.settings.rebuildBeforeSwitch } : {}),
      onError: (err, projection) => deps.log.error({ err, projection }, 'projection rebuild failed'),
      onParked: (parked, err) =>
        deps.log.error(
          { err, ...parkedLog(parked), rebuild: true },
          'projection rebuild parked an event it cannot apply',
        ),
    });
    this.metrics.setProjectionSource(async () => {
      const statuses = await this.projections();
      return {
        head: statuses[0]?.head ?? (await deps.events.headPosition()),
        projections: statuses.map((s) => ({
          name: s.name,
          checkpoint: s.checkpoint,
          lag: s.lag_positions,
          parked: s.parked_events,
        })),
      };
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

  /** Hooks to spread into a door's front (infra/wiring/doors.ts `buildDoorApp`): metrics and operation history. */
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
    return projectionStatuses(this.deps.events, this.reads, this.rebuilder, {
      lagBound: this.settings.readyMaxLagEvents,
    });
  }

  verify(): Promise<VerifyReport> {
    return auditVerify({
      events: this.deps.events,
      live: this.reads,
      gate: this.gate,
      projectors: this.rebuilder.projectors,
      scratch: this.deps.scratch ?? sqliteScratch,
    });
  }

  /** Options to spread into the live ProjectionRunner's: parked events are logged and stamped by the clock. */
  runnerHooks(): {
    onParked: (parked: ParkedEvent, err: unknown) => void;
    onStoreRetry: (err: unknown, attempt: number) => void;
    now: () => Date;
  } {
    return { ...runnerLogHooks(this.deps.log), now: () => this.deps.clock.now() };
  }

  /** The parked events of the serving generations, oldest first. */
  parked(options: { projection?: string; limit: number }): Promise<{ total: number; parked: ParkedView[] }> {
    return listParked(this.reads, this.rebuilder.projectors, options);
  }

  /** Re-applies parked events (`ids`, or all) through their projector, through the live runner's gate. */
  async retryParked(ids?: readonly string[]): Promise<RetryResult> {
    const result = await retryParked(
      this.deps.events,
      this.runnerReads,
      this.rebuilder.projectors,
      () => this.deps.clock.now().toISOString(),
      ids,
    );
    for (const r of result.retried)
      this.deps.log.info(
        { ...parkedLog({ ...r, _id: r.id }), rebuild_advised: r.rebuild_advised },
        'parked projection event applied on retry',
      );
    for (const r of result.still_failing)
      this.deps.log.warn({ ...parkedLog({ ...r, _id: r.id }) }, 'parked projection event failed again on retry');
    return result;
  }

  /**
   * A subscription to the log ended on an error that retrying cannot cure (a refused start position, a denied
   * read…): the live projection runner (`projections`) or a reactor (`batch-runner`, `cover-check`). Logged,
   * counted (`pc_subscription_stops_total{subscriber}`), and readiness answers 503 from now on: that work no longer
   * follows the log, and nothing else would show it until its effects were missed (a lag check sees only projections,
   * and only once writes pile up). A restart resumes it from its checkpoint.
   */
  readonly subscriptionStopped = (subscriber: string, err: unknown): void => {
    this.stopped.set(subscriber, `stopped: ${err instanceof Error ? err.message : String(err)}`);
    this.deps.log.error({ err, subscriber }, 'subscription to the event log stopped; readiness answers 503');
    this.metrics.subscriptionStopped(subscriber);
  };

  async readiness(): Promise<Readiness> {
    const checks: Readiness['checks'] = {
      shutting_down: this.shuttingDown,
      event_store: 'ok',
      read_store: 'ok',
      projections: {},
      parked_events: 0,
    };
    if (this.stopped.size > 0) checks.subscriptions = Object.fromEntries(this.stopped);
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
    let ready =
      !this.shuttingDown && this.stopped.size === 0 && checks.event_store === 'ok' && checks.read_store === 'ok';
    if (checks.event_store === 'ok' && checks.read_store === 'ok') {
      const bound = this.settings.readyMaxLagEvents;
      for (const p of this.rebuilder.projectors) {
        const lag = await eventsAfter(
          this.deps.events,
          await this.reads.getCheckpoint(p.name),
          p.categories,
          bound + 1,
        );
        const parked = await this.reads.count(parkedCollectionOf(p.name));
        checks.parked_events += parked;
        checks.projections[p.name] =
          lag > bound
            ? `behind: more than ${bound} events to apply`
            : parked > 0
              ? `degraded: ${parked} parked event(s)`
              : 'ok';
        if (lag > bound) ready = false;
      }
    }
    return { ready, degraded: checks.parked_events > 0, checks };
  }

  /** Registers the admin routes (history, projections, export, verify, cover-check dead letters, closings). */
  readonly adminRoutes = (router: Router): void => {
    operationsAdminRoutes(router, this, this.deps.events, this.deps.messaging);
    closingsAdminRoutes(router, {
      events: this.deps.events,
      live: this.reads,
      now: () => this.deps.clock.now(),
      ...(this.deps.scratch ? { scratch: this.deps.scratch } : {}),
    });
  };

  /** Serves health and metrics on the admin port in front of the admin app. */
  adminHandler(
    admin: (req: http.IncomingMessage, res: http.ServerResponse) => void | Promise<void>,
    problemBaseUrl = '',
  ): (req: http.IncomingMessage, res: http.ServerResponse) => void | Promise<void> {
    return healthAndMetricsHandler(this, admin, { problemBaseUrl, log: this.deps.log });
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
    return await Promise.race([
      p,
      new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
