/** The log lines of the live projection runner, wherever it runs (this thread, or a thread of its own). */
import type { ParkedEvent } from '../../projections/parking.js';

/** The fields of a parked event worth a log line (no event data: it may hold partner content). */
export function parkedLog(
  p: Pick<ParkedEvent, '_id' | 'projection' | 'event_id' | 'stream' | 'position' | 'type' | 'error'>,
): Record<string, unknown> {
  return {
    parked_id: p._id,
    projection: p.projection,
    event_id: p.event_id,
    stream: p.stream,
    position: p.position,
    event_type: p.type,
    error: p.error,
  };
}

/** The part of a pino logger the runner's lines need (the projection thread forwards them to the service's). */
export interface RunnerLog {
  error(fields: Record<string, unknown>, msg: string): void;
  warn(fields: Record<string, unknown>, msg: string): void;
}

/** Options of the live ProjectionRunner that log parked events and read-store retries. */
export function runnerLogHooks(log: RunnerLog): {
  onParked: (parked: ParkedEvent, err: unknown) => void;
  onStoreRetry: (err: unknown, attempt: number) => void;
} {
  return {
    onParked: (parked, err) =>
      log.error(
        { err, ...parkedLog(parked) },
        'projection parked an event it cannot apply; the other projections and later events go on',
      ),
    onStoreRetry: (err, attempt) =>
      log.warn({ err, attempt }, 'read store failed during a projection unit; trying the unit again'),
  };
}
