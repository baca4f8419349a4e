/**
 * Reactors (the batch runner, the cover check…) react to the log by doing work and appending events. In the
 * embedded default they run in the one process; in the distributed topology they run in the projections process
 * (infra/wiring/entry/projections.ts), whose single replica keeps their log subscriptions single too. Heavy work goes
 * through the messaging port's work queue, whose consumers may be many.
 *
 * To add one: export a `ReactorStart` from its module and add it to `REACTORS` in infra/wiring/registry.ts; both
 * `startService` and the projections process start every entry of that list with the same parts.
 */
import type { Logger } from 'pino';
import type { Clock } from '../../shared-schema/ports/clock.js';
import type { EventStore } from '../../shared-schema/ports/event-store.js';
import type { ReadStore } from '../../shared-schema/ports/read-store.js';
import type { Messaging } from '../../shared-schema/ports/messaging.js';
import type { CoverChecker } from '../../shared-schema/ports/cover-checker.js';
import type { CommandDeps } from '../../command-api/services/context.js';
import type { Config } from './config.js';
import type { HistoryInput } from '../ops/history.js';
import type { ServiceMetrics } from '../ops/metrics.js';

export interface ReactorParts {
  config: Config;
  log: Logger;
  clock: Clock;
  events: EventStore;
  reads: ReadStore;
  messaging: Messaging;
  /** The write side's dependencies: reactors decide and append through the same services as the doors. */
  deps: CommandDeps;
  /** Resolves true once the projections have committed `position`. */
  waitForPosition: (position: number, timeoutMs: number) => Promise<boolean>;
  /** One entry of the operation history (infra/ops/history.ts); never throws. */
  recordHistory: (input: HistoryInput) => Promise<void>;
  /** The process's metrics (outcomes, queue depths), served on the admin port. */
  metrics: ServiceMetrics;
  /**
   * A reactor's subscription to the log ended on an error retrying cannot cure (infra/ops/operations.ts): logged,
   * counted, and readiness answers 503. `subscriber` names the reactor.
   */
  subscriptionStopped: (subscriber: string, err: unknown) => void;
  /** Replaces the cover check's HTTPS fetcher (tests only: a checker that fails on purpose). */
  coverChecker?: CoverChecker;
}

export interface ReactorHandle {
  /** Stops it, waiting for work in flight. */
  stop(): Promise<void>;
  /** The manual clock moved (admin `POST /clock`): do what became due, and resolve once it is projected. */
  clockMoved?(): Promise<void>;
}

/** Starts one reactor; `null` when its configuration turns it off. */
export type ReactorStart = (parts: ReactorParts) => Promise<ReactorHandle | null>;

export interface Reactors {
  /** Tells every reactor that the manual clock moved; resolves when all of them are done with it. */
  clockMoved(): Promise<void>;
  /** Stops them all, the last started first. */
  stop(): Promise<void>;
}

/** Starts every reactor in order; on a failure, stops those already started. */
export async function startReactors(reactors: readonly ReactorStart[], parts: ReactorParts): Promise<Reactors> {
  const handles: ReactorHandle[] = [];
  try {
    for (const start of reactors) {
      const handle = await start(parts);
      if (handle) handles.push(handle);
    }
  } catch (err) {
    for (const handle of handles.reverse()) await handle.stop().catch(() => undefined);
    throw err;
  }
  let stopping: Promise<void> | undefined;
  return {
    async clockMoved() {
      for (const handle of handles) await handle.clockMoved?.();
    },
    stop() {
      stopping ??= (async () => {
        for (const handle of [...handles].reverse()) await handle.stop();
      })();
      return stopping;
    },
  };
}
