/**
 * Replays the log through projectors into a read store, page by page, each page one unit of work together with the
 * projectors' checkpoints. Used by projection rebuilds (one projector into a new generation) and by the audit (every
 * projector into a scratch store). Unlike the live runner it reads with `readAll`, so it can stop exactly at a
 * position (`upTo`), which is what lets a rebuilt generation take over from the live one at the same position.
 * An event a projector cannot apply is parked in the target store, as the live runner does (projections/parking.ts):
 * a rebuild goes on past it, and the new generation carries its own list of parked events.
 */
import { categoryOf, type EventStore, type RecordedEvent } from '../shared-schema/ports/event-store.js';
import type { Doc, ReadStore, ReadTx } from '../shared-schema/ports/read-store.js';
import type { Projector } from './projector.js';
import { MappedTx } from './generations.js';
import { applyInUnits, type ParkedEvent } from './parking.js';

export interface ReplayStep {
  /** Position every projector has reached (saved as their checkpoint). */
  position: number;
  /** Events applied in this step. */
  applied: number;
}

/** Records which event last wrote each document (for audit reports). */
export type WriteTrace = (collection: string, id: string, event: RecordedEvent, op: 'put' | 'delete') => void;

export interface ReplayOptions {
  /** Start after this position (0: from the beginning). */
  after: number;
  /** Stop at this position, inclusive. */
  upTo: number;
  pageSize?: number;
  trace?: WriteTrace;
  /** Extra writes committed in the unit of the last page (a generation switch). */
  finish?: (tx: ReadTx) => Promise<void>;
  onStep?: (step: ReplayStep) => void;
  /** Checked between pages; replay stops early (returning the position reached) when it answers true. */
  cancelled?: () => boolean;
  /** Awaited between pages (a rebuild's speed limit). */
  pace?: () => Promise<void>;
  /** Called when an event is parked in the target store. */
  onParked?: (parked: ParkedEvent, err: unknown) => void;
  /** Timestamp of parked records (default: the system time). */
  now?: () => string;
}

/** Applies the events in (after, upTo] and returns the position reached (`upTo` unless cancelled). */
export async function replay(
  events: EventStore,
  store: ReadStore,
  projectors: readonly Projector[],
  options: ReplayOptions,
): Promise<number> {
  const pageSize = options.pageSize ?? 500;
  const categories = [...new Set(projectors.flatMap((p) => p.categories))];
  if (options.after > options.upTo)
    throw new RangeError(`replay: after (${options.after}) is beyond upTo (${options.upTo})`);
  let position = options.after;
  for (;;) {
    if (options.cancelled?.()) return position;
    const page =
      position >= options.upTo ? [] : await events.readAll({ afterPosition: position, maxCount: pageSize, categories });
    const within = page.filter((e) => e.position <= options.upTo);
    // A short page, or one that crossed `upTo`, means every event up to `upTo` has been seen.
    const last = within.length === pageSize ? within[within.length - 1].position : Math.max(position, options.upTo);
    const final = last >= options.upTo;
    await applyInUnits(within, last, {
      store,
      projectors,
      applies: (p, event) => p.categories.includes(categoryOf(event.stream)),
      close: async (tx, through, end) => {
        for (const p of projectors) await tx.setCheckpoint(p.name, through);
        if (final && end && options.finish) await options.finish(tx);
      },
      ...(options.trace ? { txFor: (tx: ReadTx, event: RecordedEvent) => tracing(tx, event, options.trace!) } : {}),
      now: options.now ?? (() => new Date().toISOString()),
      ...(options.onParked ? { onParked: options.onParked } : {}),
    });
    position = last;
    options.onStep?.({ position, applied: within.length });
    if (final) return position;
    await options.pace?.();
  }
}

function tracing(tx: ReadTx, event: RecordedEvent, trace: WriteTrace): ReadTx {
  const traced = new MappedTx(tx, (n) => n);
  return Object.assign(traced, {
    put: async (collection: string, doc: Doc) => {
      trace(collection, doc._id, event, 'put');
      await tx.put(collection, doc);
    },
    delete: async (collection: string, id: string) => {
      trace(collection, id, event, 'delete');
      await tx.delete(collection, id);
    },
  });
}
