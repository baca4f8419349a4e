/**
 * Rebuilds one projection without stopping reads:
 *
 * 1. Take the next generation number N (never reused) and empty N's collections (leftovers of a crashed attempt).
 * 2. Catch up: replay the log through the projector into generation N, in passes, each pass up to the live
 *    checkpoint of that projector at its start (never beyond it), while the current generation keeps serving.
 * 3. Once a pass had at most SWITCH_BACKLOG events to apply, switch: hold the live runner's units (the gate), replay the last
 *    events up to the live checkpoint L, and in that same unit save N's checkpoint (= L) and the generation document
 *    naming N; then switch the in-memory map and let the live runner go on, now writing into N. Generation N holds
 *    exactly what the old one held at L, so a read after the switch never sees an older state than one before it.
 * 4. Announce the switch (other processes reload their map) and drop the old generation's collections after a grace period.
 *
 * A crash during 1–3 leaves the old generation serving; the partial one is dropped on the next start or attempt.
 */
import { performance } from 'node:perf_hooks';
import type { EventStore } from '../shared-schema/ports/event-store.js';
import type { Clock } from '../shared-schema/ports/clock.js';
import type { ReadStore } from '../shared-schema/ports/read-store.js';
import type { Messaging } from '../shared-schema/ports/messaging.js';
import type { Projector } from './projector.js';
import { replay, type ReplayOptions } from './replay.js';
import { forBulkLoad, projectorCollections, type ParkedEvent } from './parking.js';
import {
  GENERATIONS_COLLECTION,
  GENERATION_SWITCHED,
  type GenerationDoc,
  type GenerationalReadStore,
} from './generations.js';
import type { RunnerGate } from './unit-gate.js';

/** A catch-up pass with at most this many events to apply is the last one before the switch. */
const SWITCH_BACKLOG = 500;

export type RebuildState = 'rebuilding' | 'switching' | 'done' | 'failed' | 'cancelled';

export interface RebuildProgress {
  projection: string;
  state: RebuildState;
  from_generation: number;
  generation: number;
  started_at: string;
  finished_at: string | null;
  /** Position the new generation has reached. */
  position: number;
  /** Head of the log when last looked at. */
  head: number;
  events_applied: number;
  events_per_second: number;
  /** Estimated seconds left (from the rate of positions covered so far); null before the first page. */
  eta_seconds: number | null;
  error?: string;
}

/** The options every replay of one rebuild run shares (`Rebuilder.replaying`). */
type Replaying = Required<Pick<ReplayOptions, 'pageSize' | 'onStep' | 'now'>> & Pick<ReplayOptions, 'onParked'>;

export class UnknownProjectionError extends Error {}
export class RebuildRunningError extends Error {}

export interface RebuilderOptions {
  events: EventStore;
  /** The live store (maps each projector's names to its current generation). */
  reads: GenerationalReadStore;
  /** The gate in front of the live runner's units. */
  gate: RunnerGate;
  clock: Clock;
  messaging?: Messaging;
  /** Events per unit of the catch-up (default 10,000). */
  pageSize?: number;
  /** Speed limit of the catch-up (events per second; 0 or absent: none), to spare a busy store. */
  maxEventsPerSecond?: number;
  /** How long an old generation stays after a switch before it is dropped (readers with a stale map). */
  dropGraceMs?: number;
  onError?: (err: unknown, projection: string) => void;
  /** An event the rebuild parked in the new generation (it goes on past it). */
  onParked?: (parked: ParkedEvent, err: unknown) => void;
  /** Awaited once the catch-up converged, before the switch (tests hold a rebuild in flight here). */
  beforeSwitch?: (projection: string) => Promise<void>;
}

interface Run {
  progress: RebuildProgress;
  startedMs: number;
  applied: number;
  unpaced: boolean;
  done: Promise<void>;
}

export class ProjectionRebuilder {
  private readonly runs = new Map<string, Run>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private closed = false;

  constructor(private readonly options: RebuilderOptions) {}

  get projectors(): readonly Projector[] {
    return this.options.reads.projectors.filter((p) => p.collections.length > 0);
  }

  projector(name: string): Projector {
    const p = this.projectors.find((x) => x.name === name);
    if (!p) throw new UnknownProjectionError(`no projection named ${name}`);
    return p;
  }

  /** The latest rebuild of a projection in this process, if any. */
  progress(name: string): RebuildProgress | null {
    const run = this.runs.get(name);
    return run ? this.snapshot(run) : null;
  }

  running(name: string): boolean {
    const s = this.runs.get(name)?.progress.state;
    return s === 'rebuilding' || s === 'switching';
  }

  /** Starts a rebuild and answers at once; follow it with `progress(name)` or wait on `finished(name)`. */
  start(name: string): RebuildProgress {
    const projector = this.projector(name);
    if (this.running(name)) throw new RebuildRunningError(`projection ${name} is already being rebuilt`);
    const from = this.options.reads.generationOf(name);
    const run: Run = {
      progress: {
        projection: name,
        state: 'rebuilding',
        from_generation: from,
        generation: from + 1,
        started_at: this.options.clock.now().toISOString(),
        finished_at: null,
        position: 0,
        head: 0,
        events_applied: 0,
        events_per_second: 0,
        eta_seconds: null,
      },
      startedMs: performance.now(),
      applied: 0,
      unpaced: false,
      done: Promise.resolve(),
    };
    this.runs.set(name, run);
    run.done = this.execute(projector, run).catch((err: unknown) => {
      run.progress.state = this.closed ? 'cancelled' : 'failed';
      run.progress.error = err instanceof Error ? err.message : String(err);
      run.progress.finished_at = this.options.clock.now().toISOString();
      if (!this.closed) this.options.onError?.(err, name);
    });
    return this.snapshot(run);
  }

  /** Resolves when the current rebuild of `name` (if any) has ended, with its final progress. */
  async finished(name: string): Promise<RebuildProgress | null> {
    const run = this.runs.get(name);
    if (!run) return null;
    await run.done;
    return this.snapshot(run);
  }

  /** Drops generations left behind: switched-away ones and partial ones from a crashed attempt. */
  async cleanUp(): Promise<void> {
    for (const p of this.projectors) {
      const doc = await this.generationDoc(p.name);
      if (!doc) continue;
      for (const g of doc.drop_pending) await this.dropGeneration(p, g);
      if (doc.highest > doc.generation && !this.running(p.name)) await this.emptyGeneration(p, doc.highest, false);
    }
  }

  /** Cancels rebuilds in progress (the old generation keeps serving) and forgets pending drops (done at next start). */
  async close(): Promise<void> {
    this.closed = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    await Promise.all([...this.runs.values()].map((r) => r.done));
  }

  private snapshot(run: Run): RebuildProgress {
    const p = { ...run.progress };
    const seconds = (performance.now() - run.startedMs) / 1000;
    if (p.state === 'rebuilding' || p.state === 'switching') {
      p.events_per_second = seconds > 0 ? Math.round(run.applied / seconds) : 0;
      const rate = seconds > 0 ? p.position / seconds : 0;
      p.eta_seconds = rate > 0 ? Math.max(0, Math.round(((p.head - p.position) / rate) * 10) / 10) : null;
    }
    return p;
  }

  private async generationDoc(name: string): Promise<GenerationDoc | null> {
    return this.options.reads.inner.get<GenerationDoc>(GENERATIONS_COLLECTION, name);
  }

  private async execute(projector: Projector, run: Run): Promise<void> {
    const { reads } = this.options;
    const name = projector.name;
    const from = reads.generationOf(name);
    const next = await this.startGeneration(projector, from);
    run.progress.generation = next;
    const target = reads.pinned(name, next);
    const replaying = this.replaying(run);
    const position = await this.catchUp(projector, run, target, replaying);
    // The indexes the catch-up left out (the text indexes, those the projector does not read through) are built now,
    // each in one pass over the documents; the last pass and the live writes after the switch keep them as usual.
    await target.ensureCollections(projectorCollections(projector));
    await this.options.beforeSwitch?.(name);
    run.progress.state = 'switching';
    await this.switchTo(projector, { from, next, target, position }, replaying);
    run.progress.state = 'done';
    run.progress.finished_at = this.options.clock.now().toISOString();
    // Tell other processes; empty the old generation once their maps have surely moved on.
    await this.options.messaging?.publish(GENERATION_SWITCHED, name).catch(() => undefined);
    this.later(this.options.dropGraceMs ?? 10_000, () => this.dropGeneration(projector, from));
  }

  /** Reserves the generation after every one used so far (`from` the live one) and starts it empty. */
  private async startGeneration(projector: Projector, from: number): Promise<number> {
    const before = await this.generationDoc(projector.name);
    const next = Math.max(before?.highest ?? 0, from) + 1;
    await this.options.reads.inner.transact(async (tx) => {
      await tx.put(GENERATIONS_COLLECTION, {
        ...(before ?? emptyDoc(projector.name, from)),
        highest: next,
      } satisfies GenerationDoc);
    });
    await this.emptyGeneration(projector, next, 'for a bulk load');
    return next;
  }

  /** What every replay of the run shares: its page size, its progress, where parked events are stamped. */
  private replaying(run: Run): Replaying {
    return {
      pageSize: this.options.pageSize ?? 10_000,
      onStep: (step) => {
        run.progress.position = step.position;
        run.applied += step.applied;
        run.progress.events_applied = run.applied;
      },
      now: () => this.options.clock.now().toISOString(),
      ...(this.options.onParked ? { onParked: this.options.onParked } : {}),
    };
  }

  /**
   * Catches up in passes, each up to the live checkpoint seen at its start, until a pass had little enough to apply
   * that the switch can replay the rest with the live runner held (a large unit of the catch-up would hold it too
   * long). A pass that had more to apply than the one before means the writes outrun the speed limit: the limit is
   * then lifted so that the passes converge. Resolves with the position reached.
   */
  private async catchUp(projector: Projector, run: Run, target: ReadStore, replaying: Replaying): Promise<number> {
    const { reads, events } = this.options;
    const converged = Math.min(replaying.pageSize, SWITCH_BACKLOG);
    let position = 0;
    let previous = Infinity;
    for (;;) {
      if (this.closed) throw new Error('rebuild cancelled by shutdown');
      run.progress.head = await events.headPosition();
      const live = await reads.getCheckpoint(projector.name);
      const appliedBefore = run.applied;
      position = await replay(events, target, [projector], {
        ...replaying,
        after: position,
        upTo: live,
        cancelled: () => this.closed,
        pace: () => this.pace(run),
      });
      const applied = run.applied - appliedBefore;
      if (applied <= converged) return position;
      if (applied >= previous) run.unpaced = true;
      previous = applied;
    }
  }

  /**
   * With the live runner held between two units: replays what came since the catch-up and, in the same unit as the
   * last of it, makes `next` the live generation (the old one queued to be dropped).
   */
  private async switchTo(
    projector: Projector,
    { from, next, target, position }: { from: number; next: number; target: ReadStore; position: number },
    replaying: Replaying,
  ): Promise<void> {
    const { reads, events, gate } = this.options;
    const name = projector.name;
    await gate.whileHeld(async () => {
      if (this.closed) throw new Error('rebuild cancelled by shutdown');
      const live = await reads.getCheckpoint(name);
      const current = (await this.generationDoc(name)) ?? emptyDoc(name, from);
      const switched: GenerationDoc = {
        _id: name,
        generation: next,
        highest: Math.max(current.highest, next),
        drop_pending: [...current.drop_pending.filter((g) => g !== from), from],
        switched_at: this.options.clock.now().toISOString(),
        switched_position: live,
      };
      await replay(events, target, [projector], {
        ...replaying,
        after: position,
        upTo: live,
        finish: (tx) => tx.put(GENERATIONS_COLLECTION, switched),
      });
      reads.setGeneration(name, next);
    });
  }

  /** Waits as long as needed to keep the run under `maxEventsPerSecond`. */
  private async pace(run: Run): Promise<void> {
    const max = this.options.maxEventsPerSecond ?? 0;
    if (max <= 0 || this.closed || run.unpaced) return;
    const ahead = (run.applied / max) * 1000 - (performance.now() - run.startedMs);
    if (ahead > 0) await new Promise((resolve) => setTimeout(resolve, Math.min(ahead, 1000)));
  }

  private later(ms: number, task: () => Promise<void>): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      task().catch((err: unknown) => this.options.onError?.(err, 'drop'));
    }, ms);
    timer.unref();
    this.timers.add(timer);
  }

  /**
   * Drops the collections of one generation (documents and indexes) and resets its checkpoint. A generation about to
   * be rebuilt into (`redeclare`) gets its collections back, empty, as a bulk load declares them: the indexes its
   * projector reads through, no text index (nothing else reads the generation before the switch; the rebuild
   * declares the rest once the documents are in); an old one stays gone.
   */
  private async emptyGeneration(
    projector: Projector,
    generation: number,
    redeclare: false | 'for a bulk load',
  ): Promise<void> {
    if (generation === this.options.reads.generationOf(projector.name))
      throw new Error('refusing to empty the serving generation');
    const view = this.options.reads.pinned(projector.name, generation);
    for (const c of projectorCollections(projector)) await view.drop(c.name);
    if (redeclare) await view.ensureCollections(projectorCollections(projector).map(forBulkLoad));
    await view.transact((tx) => tx.setCheckpoint(projector.name, 0));
  }

  private async dropGeneration(projector: Projector, generation: number): Promise<void> {
    if (generation !== this.options.reads.generationOf(projector.name))
      await this.emptyGeneration(projector, generation, false);
    await this.options.reads.inner.transact(async (tx) => {
      const doc = await tx.get<GenerationDoc>(GENERATIONS_COLLECTION, projector.name);
      if (doc)
        await tx.put(GENERATIONS_COLLECTION, {
          ...doc,
          drop_pending: doc.drop_pending.filter((g) => g !== generation),
        });
    });
  }
}

function emptyDoc(name: string, generation: number): GenerationDoc {
  return { _id: name, generation, highest: generation, drop_pending: [], switched_at: null, switched_position: 0 };
}
