/**
 * Reactors (the batch runner, the cover check…) react to the log by doing work and appending events. In the
 * embedded default they run in the one process; in the distributed topology they run in the projections process
 * (infra/entry/projections.ts), whose single replica keeps their log subscriptions single too. Heavy work goes
 * through the messaging port's work queue, whose consumers may be many.
 *
 * To add one: export a `ReactorStart` from its module and add it to `REACTORS` in infra/service.ts; both
 * `startService` and the projections process start every entry of that list with the same parts.
 */
import type { Logger } from 'pino';
import type { Clock } from '../../shared-schema/ports/clock.js';
import type { EventStore } from '../../shared-schema/ports/event-store.js';
import type { ReadStore } from '../../shared-schema/ports/read-store.js';
import type { Messaging } from '../../shared-schema/ports/messaging.js';
import type { Config } from '../config.js';

export interface ReactorParts {
  config: Config;
  log: Logger;
  clock: Clock;
  events: EventStore;
  reads: ReadStore;
  messaging: Messaging;
}

/** Starts one reactor; resolves to the function that stops it (waiting for work in flight). */
export type ReactorStart = (parts: ReactorParts) => Promise<() => Promise<void>>;

/** Starts every reactor in order; on a failure, stops those already started. Resolves to "stop them all". */
export async function startReactors(reactors: readonly ReactorStart[], parts: ReactorParts): Promise<() => Promise<void>> {
  const stops: (() => Promise<void>)[] = [];
  try {
    for (const start of reactors) stops.push(await start(parts));
  } catch (err) {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    throw err;
  }
  let stopping: Promise<void> | undefined;
  return () => {
    stopping ??= (async () => {
      for (const stop of [...stops].reverse()) await stop();
    })();
    return stopping;
  };
}
