/**
 * Parked projection events: an event that one projector cannot apply does not stop the others, nor the later
 * events. It is parked for that projector (a record in the read store, in a collection of the projector's own,
 * `<projector>_parked`, so it follows the projector's generations) and the projection goes on.
 *
 * How a run of events is applied (`applyInUnits`, used by the live runner and by replays, i.e. rebuilds and audits):
 *
 * 1. All the events in one unit of work, with the checkpoints. An error of the read store itself (opening or
 *    committing the unit, writing a checkpoint) is transient: the unit is tried again a few times with a growing
 *    pause, then the error is thrown (the runner stops; in the distributed topology the process exits and
 *    the supervisor restarts it). It never parks anything.
 * 2. An error thrown by a projector's `apply` rolls the whole unit back. The unit is tried once more (an apply can
 *    fail on a transient read too). If it fails again on the same event, the events before it are committed in a
 *    unit of their own (they applied cleanly), and the failing event is retried as the first of the next unit: the
 *    state it meets is then exactly the committed one. If it still fails there, it fails alone: the unit is applied
 *    once more with that projector skipping that event (every other projector applies it), and the parked record is
 *    written in that same unit as the checkpoint that passes the event. A crash loses nothing and applies nothing
 *    twice: either the unit (applies, parked record, checkpoints) is committed or none of it is.
 *
 * A retry (`retryParked`) re-applies the event through the projector, over the current generation, in one unit that
 * also deletes the parked record; if it fails, the record stays with the new error. The projectors' own guard (a
 * document whose `position` is at or past the event's is not changed) means a retry never regresses a document a
 * later event already wrote; when later events of the same stream exist, the answer says so (`rebuild_advised`):
 * they were applied without the parked one, and a rebuild replays everything in log order.
 */
import { categoryOf, type EventStore, type RecordedEvent } from '../shared-schema/ports/event-store.js';
import type { CollectionSpec, Doc, ReadStore, ReadTx } from '../shared-schema/ports/read-store.js';
import type { Projector } from './projector.js';

export const PARKED_SUFFIX = '_parked';

/** The collection that holds a projector's parked events (logical name; generations map it like its others). */
export const parkedCollection = (projector: string): string => `${projector}${PARKED_SUFFIX}`;

export const parkedSpec = (projector: string): CollectionSpec => ({
  name: parkedCollection(projector),
  indexes: [['position']],
});

/** Every collection a projector writes: its read model and its parked events. */
export const projectorCollections = (p: Projector): CollectionSpec[] => [...p.collections, parkedSpec(p.name)];

/**
 * A collection as a bulk load declares it before its documents are in: only the indexes its projector reads through
 * (`applyIndexes`), no text index. The fields of the indexes left out stay kept beside the document (`filtered`), so
 * that declaring the whole spec afterwards only builds indexes, each in one pass.
 */
export function forBulkLoad(spec: CollectionSpec): CollectionSpec {
  const { text: _text, applyIndexes, ...rest } = spec;
  if (applyIndexes === undefined) return rest;
  const key = (fields: readonly string[]) => fields.join('\u0000');
  const kept = new Set(applyIndexes.map(key));
  const deferred = spec.indexes.filter((fields) => !kept.has(key(fields)));
  return {
    ...rest,
    indexes: spec.indexes.filter((fields) => kept.has(key(fields))),
    filtered: [...new Set([...(spec.filtered ?? []), ...deferred.flat()])],
  };
}

/** The operator's id of a parked event: `<projector>:<position>`. */
export const parkedId = (projector: string, position: number): string => `${projector}:${position}`;

export type ParkedEvent = {
  _id: string;
  projection: string;
  event_id: string;
  stream: string;
  position: number;
  type: string;
  /** The error message of the last failed apply (one line, at most 500 characters). */
  error: string;
  parked_at: string;
  /** Retries that failed since it was parked. */
  retries: number;
  last_retry_at: string | null;
};

/** One line of an error, bounded (no stack: it is shown to the operator). */
export function errorLine(err: unknown): string {
  const message = err instanceof Error ? `${err.name === 'Error' ? '' : `${err.name}: `}${err.message}` : String(err);
  const line = message.split('\n')[0].trim() || 'error without a message';
  return line.length > 500 ? `${line.slice(0, 497)}...` : line;
}

export interface UnitPlan {
  store: ReadStore;
  projectors: readonly Projector[];
  /** Whether `p` is to apply `event` at all (its categories, its checkpoint). */
  applies(p: Projector, event: RecordedEvent): boolean;
  /**
   * The rest of a unit: checkpoints up to `through` (the position of the unit's last event, or the end of the run
   * for its last unit); `final` is true for the last unit of the run.
   */
  close(tx: ReadTx, through: number, final: boolean): Promise<void>;
  /** After each committed unit, with its events (those skipped by a projector included). */
  committed?(events: readonly RecordedEvent[], through: number, parked: readonly ParkedEvent[]): void;
  /** The unit of work a projector applies an event in (a tracing wrapper for audits). */
  txFor?(tx: ReadTx, event: RecordedEvent): ReadTx;
  now(): string;
  /** Tries of a unit whose apply threw before the failing event is isolated, and before it is parked (default 2). */
  applyAttempts?: number;
  /** Tries of a unit when the read store itself fails (default 4), with pauses from `retryPauseMs` (default 50) doubling. */
  storeAttempts?: number;
  retryPauseMs?: number;
  /** Checked before each pause; a stopping runner does not wait for a store that is gone. */
  stopped?(): boolean;
  onParked?(parked: ParkedEvent, err: unknown): void;
  onStoreRetry?(err: unknown, attempt: number): void;
}

/** Thrown inside a unit when a projector's apply throws (the unit is rolled back). */
class ApplyFailure extends Error {
  constructor(
    readonly index: number,
    readonly projector: Projector,
    readonly error: unknown,
  ) {
    super(errorLine(error));
  }
}

type Attempt = { ok: true } | { ok: false; failure: ApplyFailure };

/**
 * Applies `events` (ascending positions, all after the checkpoints) in one or more units of work; the last unit
 * closes at `end` (>= the last event's position). Returns the events parked on the way.
 */
export async function applyInUnits(
  events: readonly RecordedEvent[],
  end: number,
  plan: UnitPlan,
): Promise<ParkedEvent[]> {
  const applyAttempts = Math.max(1, plan.applyAttempts ?? 2);
  const all: ParkedEvent[] = [];
  let pending = events;
  /** Failures of the first pending event, by projector name, when it is the first event of the unit. */
  let failuresAlone = new Map<string, number>();
  let parks = new Map<string, ParkedEvent>();
  for (;;) {
    let failure: ApplyFailure | null = null;
    for (let i = 0; i < applyAttempts; i++) {
      const got = await withStoreRetry(plan, () => probed(plan, attempt(pending, end, true, parks, plan)));
      if (got.ok) {
        await committed(plan, pending, end, parks);
        all.push(...parks.values());
        return all;
      }
      failure = got.failure;
      if (failure.index > 0) continue;
      // The first event of the unit fails on the state committed so far: it fails alone.
      const name = failure.projector.name;
      const count = (failuresAlone.get(name) ?? 0) + 1;
      failuresAlone.set(name, count);
      if (count >= applyAttempts) break;
    }
    const f = failure!;
    if (f.index > 0) {
      // Commit what applied cleanly before the failing event; the event then opens the next unit.
      const before = pending.slice(0, f.index);
      const through = before[before.length - 1].position;
      const got = await withStoreRetry(plan, () => probed(plan, attempt(before, through, false, parks, plan)));
      if (got.ok) {
        await committed(plan, before, through, parks);
        all.push(...parks.values());
        pending = pending.slice(f.index);
        parks = new Map();
        failuresAlone = new Map();
      }
      continue;
    }
    if ((failuresAlone.get(f.projector.name) ?? 0) < applyAttempts) continue;
    // Park the first pending event for this projector; the next tries apply it for the others.
    const event = pending[0];
    const record: ParkedEvent = {
      _id: parkedId(f.projector.name, event.position),
      projection: f.projector.name,
      event_id: event.id,
      stream: event.stream,
      position: event.position,
      type: event.type,
      error: errorLine(f.error),
      parked_at: plan.now(),
      retries: 0,
      last_retry_at: null,
    };
    parks.set(f.projector.name, record);
    plan.onParked?.(record, f.error);
  }
}

const endUnit = async (projectors: readonly Projector[], tx: ReadTx): Promise<void> => {
  for (const p of projectors) await p.endUnit?.(tx);
};

/** One unit: the events (the first one skipped by the projectors in `parks`), the parked records, the close. */
async function attempt(
  events: readonly RecordedEvent[],
  through: number,
  final: boolean,
  parks: ReadonlyMap<string, ParkedEvent>,
  plan: UnitPlan,
): Promise<Attempt> {
  try {
    await plan.store.transact(async (tx) => {
      for (const [index, event] of events.entries()) {
        const eventTx = plan.txFor?.(tx, event);
        for (const p of plan.projectors) {
          if (!plan.applies(p, event)) continue;
          if (index === 0 && parks.has(p.name)) continue;
          try {
            await p.apply(event, eventTx ?? tx);
          } catch (err) {
            throw new ApplyFailure(index, p, err);
          }
        }
        // An event with a transaction of its own has what it held back written under it.
        if (eventTx) await endUnit(plan.projectors, eventTx);
      }
      await endUnit(plan.projectors, tx);
      for (const record of parks.values()) await tx.put(parkedCollection(record.projection), record);
      await plan.close(tx, through, final);
    });
  } catch (err) {
    if (err instanceof ApplyFailure) return { ok: false, failure: err };
    throw err;
  }
  return { ok: true };
}

/**
 * After a unit committed: the work its events left (fan-outs in pages, `Projector.continueWork`) is finished, each
 * page in a unit of its own, before anyone is told the unit's position is committed. A crash in between loses
 * nothing: the cursor is in the read store, and the runner finishes the work at start.
 */
async function committed(
  plan: UnitPlan,
  events: readonly RecordedEvent[],
  through: number,
  parks: ReadonlyMap<string, ParkedEvent>,
): Promise<void> {
  const owing = plan.projectors.filter((p) => p.continueWork && events.some((e) => p.leavesWork?.(e) ?? true));
  await finishWork(plan.store, owing, plan);
  plan.committed?.(events, through, [...parks.values()]);
}

/**
 * Runs the projectors' `continueWork` until none has anything left, one unit per page (the read store's failures are
 * retried as for any unit). Called by the runner at start, after a parked event is retried, and after units.
 */
export async function finishWork(
  store: ReadStore,
  projectors: readonly Projector[],
  retry: Pick<UnitPlan, 'storeAttempts' | 'retryPauseMs' | 'stopped' | 'onStoreRetry'> = {},
): Promise<void> {
  for (const p of projectors) {
    const next = p.continueWork?.bind(p);
    if (!next) continue;
    while (await withStoreRetry(retry, () => store.transact((tx) => next(tx)))) {
      if (retry.stopped?.()) return;
    }
  }
}

/**
 * After a failed apply, checks that the read store answers: when it does not, the failure is the store's (thrown,
 * so retried as one), never counted against the event.
 */
async function probed(plan: UnitPlan, result: Promise<Attempt>): Promise<Attempt> {
  const got = await result;
  if (!got.ok) await plan.store.getCheckpoint('__probe');
  return got;
}

/** Runs `work`, trying again when the read store fails (an apply failure is an answer, not a store failure). */
async function withStoreRetry<T>(
  plan: Pick<UnitPlan, 'storeAttempts' | 'retryPauseMs' | 'stopped' | 'onStoreRetry'>,
  work: () => Promise<T>,
): Promise<T> {
  const attempts = Math.max(1, plan.storeAttempts ?? 4);
  let pause = plan.retryPauseMs ?? 50;
  for (let i = 1; ; i++) {
    try {
      return await work();
    } catch (err) {
      if (i >= attempts || plan.stopped?.()) throw err;
      plan.onStoreRetry?.(err, i);
      await new Promise((resolve) => setTimeout(resolve, pause));
      pause = Math.min(pause * 2, 5000);
    }
  }
}

/** What the operator sees of a parked event. */
export type ParkedView = Omit<ParkedEvent, '_id'> & { id: string };

export const parkedView = (p: ParkedEvent): ParkedView => {
  const { _id, ...rest } = p;
  return { id: _id, ...rest };
};

/** The parked events of the projectors (current generation of `reads`), oldest position first. */
export async function listParked(
  reads: ReadStore,
  projectors: readonly Projector[],
  options: { projection?: string; limit: number },
): Promise<{ total: number; parked: ParkedView[] }> {
  let total = 0;
  const out: ParkedView[] = [];
  for (const p of projectors) {
    if (options.projection !== undefined && p.name !== options.projection) continue;
    const name = parkedCollection(p.name);
    total += await reads.count(name);
    if (out.length < options.limit) {
      const docs = await reads.find<ParkedEvent>(name, {
        orderBy: [{ field: 'position' }],
        limit: options.limit - out.length,
      });
      out.push(...docs.map(parkedView));
    }
  }
  out.sort((a, b) => a.position - b.position || a.projection.localeCompare(b.projection));
  return { total, parked: out };
}

export async function countParked(reads: ReadStore, projector: string): Promise<number> {
  return reads.count(parkedCollection(projector));
}

export interface RetryResult {
  /** Applied and removed from the list. */
  retried: (ParkedView & { rebuild_advised: boolean; later_events: number })[];
  /** Failed again: still parked, with the new error. */
  still_failing: ParkedView[];
  not_found: string[];
}

/**
 * Re-applies parked events through their projector (`ids`, or every parked event when omitted), each in one unit of
 * `store` (the live runner's: it passes the rebuild gate) that deletes the record. Oldest position first.
 */
export async function retryParked(
  events: EventStore,
  store: ReadStore,
  projectors: readonly Projector[],
  now: () => string,
  ids?: readonly string[],
): Promise<RetryResult> {
  const result: RetryResult = { retried: [], still_failing: [], not_found: [] };
  const records: ParkedEvent[] = [];
  if (ids === undefined) {
    for (const p of projectors)
      records.push(...(await store.find<ParkedEvent>(parkedCollection(p.name), { orderBy: [{ field: 'position' }] })));
  } else {
    for (const id of new Set(ids)) {
      const name = id.slice(0, id.lastIndexOf(':'));
      const found = projectors.some((p) => p.name === name)
        ? await store.get<ParkedEvent>(parkedCollection(name), id)
        : null;
      if (found) records.push(found);
      else result.not_found.push(id);
    }
  }
  records.sort((a, b) => a.position - b.position);
  for (const record of records) {
    const projector = projectors.find((p) => p.name === record.projection)!;
    const [event] = await events.readAll({ fromPosition: record.position, maxCount: 1 }); // positions are opaque: no - 1
    if (!event || event.position !== record.position || event.id !== record.event_id) {
      result.still_failing.push(
        parkedView({ ...record, error: `event ${record.event_id} is not at position ${record.position} of the log` }),
      );
      continue;
    }
    try {
      await store.transact(async (tx) => {
        const current = await tx.get<Doc>(parkedCollection(projector.name), record._id);
        if (!current) throw new ParkedGone();
        await projector.apply(event, tx);
        await projector.endUnit?.(tx);
        await tx.delete(parkedCollection(projector.name), record._id);
      });
    } catch (err) {
      if (err instanceof ParkedGone) {
        result.not_found.push(record._id);
        continue;
      }
      const failed: ParkedEvent = {
        ...record,
        error: errorLine(err),
        retries: record.retries + 1,
        last_retry_at: now(),
      };
      await store.transact(async (tx) => {
        if (await tx.get<Doc>(parkedCollection(projector.name), record._id))
          await tx.put(parkedCollection(projector.name), failed);
      });
      result.still_failing.push(parkedView(failed));
      continue;
    }
    await finishWork(store, [projector]);
    const later = (await events.readStream(record.stream)).filter(
      (e) => e.position > record.position && projector.categories.includes(categoryOf(e.stream)),
    ).length;
    result.retried.push({ ...parkedView(record), rebuild_advised: later > 0, later_events: later });
  }
  return result;
}

class ParkedGone extends Error {}
