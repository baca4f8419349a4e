/**
 * The live projections on a thread of their own (the embedded default, `PROJECTION_THREAD=on`): the read-model units
 * — their puts, the text-index triggers, the COMMIT and its WAL checkpoints — and the reading of the appended events
 * leave the event loop that answers requests, as the event log's commits already do (adapters/sqlite/event-store-writer.ts).
 *
 * The thread (projection-thread-entry.ts) opens its own connections to `events.db` (read only) and `read.db` (WAL:
 * one writer at a time across connections, readers never wait), and runs the ProjectionRunner there, behind its own
 * generation map and UnitGate. Every unit commits the projectors' checkpoints with their documents, as in-process:
 * a crash at any moment loses nothing acknowledged. This side is what the rest of the service sees of it:
 *
 * - `position` / `waitFor` (read-your-writes), from the position the thread stores in shared memory after each unit
 *   (`CommittedCells`): it posts a message only when a wait on this side is for that position, so a unit costs the
 *   event loop nothing; `partnerUnits`, bumped before the position by a unit holding partner events, which the key
 *   cache follows (a lookup that starts once a wait for that position is told forgets the keys it held);
 * - `gate`: holding it holds the thread's UnitGate over a message round trip, so a rebuild switch, an audit or a
 *   parked retry runs on this thread's connection between two of its units; on release the thread reloads the
 *   generation map before its next unit (a rebuild may just have switched);
 * - `commitSignal`: given to this process's event store, whose writer thread then wakes the thread's subscription
 *   after each commit (it would otherwise poll, 50 ms), without the event loop (adapters/commit-signal.ts);
 * - its log lines (parked events, read-store retries) come here and go to the service's logger.
 */
import { MessageChannel, Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { Clock } from '../../shared-schema/ports/clock.js';
import { whileHeld, type RunnerGate } from '../../projections/unit-gate.js';
import type { LiveProjections } from '../../projections/runner.js';
import { SharedMemoryClock } from './shared-clock.js';
import { PositionWaiters } from '../../projections/position-waiters.js';
import { type CommitSignal } from '../adapters/commit-signal.js';

export interface ProjectionThreadData {
  eventsPath: string;
  readsPath: string;
  /** The manual clock's shared cell (`SharedMemoryClock`), or null for the system clock. */
  clock: SharedArrayBuffer | null;
  /** The receiving end of the event store's `commitSignal`. */
  appended: CommitSignal;
  /** `CommittedCells`. */
  committed: SharedArrayBuffer;
  /** How often the thread's reader looks for commits it was not told of (SqliteEventStore's default: 50 ms). */
  pollIntervalMs?: number;
}

/** An error as it crosses between threads. */
export interface WireError {
  name: string;
  message: string;
  stack?: string;
  code?: string;
}

export type ToThread = { type: 'hold'; id: number } | { type: 'release'; id: number } | { type: 'stop' };

export type FromThread =
  | { type: 'ready' }
  | { type: 'start_failed'; error: WireError }
  /** A wait on the service's side is for a position the thread has now stored (`CommittedCells.committed`). */
  | { type: 'committed' }
  | { type: 'held'; id: number }
  | { type: 'log'; level: 'error' | 'warn'; fields: Record<string, unknown>; msg: string }
  | { type: 'failed'; error: WireError }
  | { type: 'closed' };

export function toWire(err: unknown): WireError {
  if (!(err instanceof Error)) return { name: 'Error', message: String(err) };
  const code = (err as { code?: unknown }).code;
  return {
    name: err.name,
    message: err.message,
    ...(err.stack ? { stack: err.stack } : {}),
    ...(typeof code === 'string' ? { code } : {}),
  };
}

function fromWire(wire: WireError): Error {
  const err = new Error(wire.message);
  err.name = wire.name;
  if (wire.stack) err.stack = wire.stack;
  if (wire.code) (err as Error & { code?: string }).code = wire.code;
  return err;
}

/** The cells of `CommittedCells`, each a BigInt64. */
const POSITION = 0;
const WAITED = 1;
const PARTNER_UNITS = 2;

/**
 * What the projection thread has committed, in memory both sides share: its position, the lowest position a wait on
 * the service's side is for (0: none), and how many units holding partner events it has committed. The thread
 * stores after each unit and reads whether a wait is for it; the other side stores what it waits for and reads the
 * position again. Both orders are sequentially consistent (Atomics), so either the thread sees the wait or the
 * waiting side sees the position: no wait is missed.
 */
export class CommittedCells {
  private readonly cells: BigInt64Array;
  constructor(readonly buffer = new SharedArrayBuffer(3 * BigInt64Array.BYTES_PER_ELEMENT)) {
    this.cells = new BigInt64Array(buffer);
  }
  get position(): number {
    return Number(Atomics.load(this.cells, POSITION));
  }
  get partnerUnits(): number {
    return Number(Atomics.load(this.cells, PARTNER_UNITS));
  }
  /** The thread, after a unit: true when a wait is for this position (tell the other side). */
  committed(position: number, partner: boolean): boolean {
    if (partner) Atomics.add(this.cells, PARTNER_UNITS, 1n); // before the position: whoever sees it sees this
    Atomics.store(this.cells, POSITION, BigInt(position));
    const waited = Atomics.load(this.cells, WAITED);
    return waited !== 0n && waited <= BigInt(position);
  }
  /** The waiting side: the lowest position waited for, 0 for none; then it reads `position` again. */
  waitFor(position: number): void {
    Atomics.store(this.cells, WAITED, BigInt(position));
  }
}

export interface ProjectionThreadHooks {
  /** The subscription stopped on an error retrying cannot cure, or the thread died. */
  onError?: (err: unknown) => void;
}

export class ProjectionThread implements LiveProjections {
  readonly gate: RunnerGate = {
    hold: () => this.hold(),
    whileHeld: <T>(work: () => Promise<T>) => whileHeld(this.gate, work),
  };
  private worker: Worker | undefined;
  private running = false;
  private readonly waits = new PositionWaiters();
  private readonly cells = new CommittedCells();
  private readonly held = new Map<number, () => void>();
  private readonly appended = new MessageChannel();
  /** Where this process's event store tells the thread of its commits (`SqliteEventStore.signalCommits`). */
  readonly commitSignal: CommitSignal = { port: this.appended.port2, pending: new SharedArrayBuffer(4) };
  private nextHold = 1;
  private closed: (() => void) | undefined;
  private stopping: Promise<void> | undefined;

  constructor(
    /** The SQLite files of the event log and the read models. */
    private readonly files: { events: string; reads: string },
    private readonly clock: Clock,
    private readonly log: Pick<Logger, 'error' | 'warn'>,
    private readonly pollIntervalMs?: number,
  ) {}

  get position(): number {
    return this.cells.position;
  }

  /** How many units holding partner events (keys, partners) the thread has committed. */
  get partnerUnits(): number {
    return this.cells.partnerUnits;
  }

  /** Starts the thread; resolves once its runner has caught up with the work a crash left and follows the log. */
  start(hooks: ProjectionThreadHooks = {}): Promise<void> {
    const workerData: ProjectionThreadData = {
      eventsPath: this.files.events,
      readsPath: this.files.reads,
      clock: this.clock instanceof SharedMemoryClock ? this.clock.buffer : null,
      appended: { port: this.appended.port1, pending: this.commitSignal.pending },
      committed: this.cells.buffer,
      ...(this.pollIntervalMs !== undefined ? { pollIntervalMs: this.pollIntervalMs } : {}),
    };
    const worker = new Worker(new URL('./projection-thread-entry.js', import.meta.url), {
      workerData,
      transferList: [this.appended.port1],
    });
    this.worker = worker;
    return new Promise<void>((resolve, reject) => {
      let started = false;
      worker.on('message', (m: FromThread) => {
        switch (m.type) {
          case 'ready':
            started = true;
            this.running = true;
            worker.unref(); // the servers keep the process alive; a forgotten close must not
            resolve();
            return;
          case 'start_failed':
            reject(fromWire(m.error));
            void worker.terminate();
            return;
          case 'committed':
            this.tellWaits();
            return;
          case 'held':
            this.held.get(m.id)?.();
            this.held.delete(m.id);
            return;
          case 'log':
            this.log[m.level](
              m.fields.err ? { ...m.fields, err: fromWire(m.fields.err as WireError) } : m.fields,
              m.msg,
            );
            return;
          case 'failed':
            hooks.onError?.(fromWire(m.error));
            return;
          case 'closed':
            this.closed?.();
            return;
        }
      });
      worker.on('error', (err) => {
        if (!started) reject(err);
        else if (!this.stopping) hooks.onError?.(err);
      });
      worker.on('exit', (code) => {
        this.running = false;
        if (!started) reject(new Error(`the projection thread exited (${code}) before it started`));
        else if (!this.stopping) hooks.onError?.(new Error(`the projection thread exited (${code})`));
        this.endWaits();
        this.closed?.();
      });
    });
  }

  /** Resolves true once `position` is committed, false after `timeoutMs` (or once the thread has stopped). */
  waitFor(position: number, timeoutMs: number): Promise<boolean> {
    if (this.cells.position >= position) return Promise.resolve(true);
    if (!this.running) return Promise.resolve(false);
    const waiting = this.waits.wait(position, timeoutMs);
    this.tellWaits();
    return waiting;
  }

  /**
   * Tells the waits the position now stored satisfies, and the thread the lowest one left: stored before the position
   * is read again, so a unit the thread commits meanwhile either is seen here or sees the wait.
   */
  private tellWaits(): void {
    for (;;) {
      const lowest = this.waits.lowest;
      this.cells.waitFor(lowest);
      if (lowest === 0) return;
      const position = this.cells.position;
      if (position < lowest) return;
      this.waits.advance(position); // every wait is above the position reached before: the lowest one goes
    }
  }

  /** Stops the runner after its unit in progress, closes the thread's connections, and waits for it to end. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      const worker = this.worker;
      if (!worker || !this.running) return;
      worker.ref();
      const closed = new Promise<void>((resolve) => (this.closed = resolve));
      this.post({ type: 'stop' });
      await closed;
      this.running = false;
      this.endWaits();
      await worker.terminate(); // its connections are closed: only the thread itself is left
    })();
    return this.stopping;
  }

  private hold(): Promise<() => void> {
    // No thread, no unit to wait for.
    if (!this.running) return Promise.resolve(() => undefined);
    const id = this.nextHold++;
    return new Promise<() => void>((resolve) => {
      let released = false;
      this.held.set(id, () =>
        resolve(() => {
          if (released) return;
          released = true;
          if (this.running) this.post({ type: 'release', id });
        }),
      );
      this.post({ type: 'hold', id });
    });
  }

  private post(message: ToThread): void {
    this.worker?.postMessage(message);
  }

  /** The thread is gone: no position will come, and nothing can be held. */
  private endWaits(): void {
    this.waits.endAll();
    for (const grant of this.held.values()) grant();
    this.held.clear();
  }
}
