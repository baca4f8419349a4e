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
 * - `position` / `waitFor` (read-your-writes), from the position the thread posts after each unit, with whether
 *   partner events were in it (`onCommitted`: the key cache forgets before any waiter is told);
 * - `gate`: holding it holds the thread's UnitGate over a message round trip, so a rebuild switch, an audit or a
 *   parked retry runs on this thread's connection between two of its units; on release the thread reloads the
 *   generation map before its next unit (a rebuild may just have switched);
 * - `notifyAppended()`: a local append wakes the thread's subscription at once (it would otherwise poll, 50 ms);
 * - its log lines (parked events, read-store retries) come here and go to the service's logger.
 */
import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { Clock } from '../../shared-schema/ports/clock.js';
import { whileHeld, type RunnerGate } from '../../projections/unit-gate.js';
import type { LiveProjections } from '../../projections/runner.js';
import { SharedMemoryClock } from './shared-clock.js';
import { PositionWaiters } from '../../projections/position-waiters.js';

export interface ProjectionThreadData {
  eventsPath: string;
  readsPath: string;
  /** The manual clock's shared cell (`SharedMemoryClock`), or null for the system clock. */
  clock: SharedArrayBuffer | null;
  /**
   * One Int32 cell: 1 while an `appended` message is on its way to the thread, set to 0 by the thread as it takes
   * it (before its subscription reads the log again). The side that appends posts only when it finds 0.
   */
  wake: SharedArrayBuffer;
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

export type ToThread =
  { type: 'appended' } | { type: 'hold'; id: number } | { type: 'release'; id: number } | { type: 'stop' };

export type FromThread =
  | { type: 'ready'; position: number }
  | { type: 'start_failed'; error: WireError }
  | { type: 'committed'; position: number; partner: boolean }
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

export interface ProjectionThreadHooks {
  /** After each committed unit, before waiters are told; `partner`: the unit held partner events. */
  onCommitted?: (partner: boolean) => void;
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
  private readonly committed = new PositionWaiters();
  private readonly held = new Map<number, () => void>();
  private readonly wake = new Int32Array(new SharedArrayBuffer(4));
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
    return this.committed.position;
  }

  /** Starts the thread; resolves once its runner has caught up with the work a crash left and follows the log. */
  start(hooks: ProjectionThreadHooks = {}): Promise<void> {
    const workerData: ProjectionThreadData = {
      eventsPath: this.files.events,
      readsPath: this.files.reads,
      clock: this.clock instanceof SharedMemoryClock ? this.clock.buffer : null,
      wake: this.wake.buffer,
      ...(this.pollIntervalMs !== undefined ? { pollIntervalMs: this.pollIntervalMs } : {}),
    };
    Atomics.store(this.wake, 0, 0);
    const worker = new Worker(new URL('./projection-thread-entry.js', import.meta.url), { workerData });
    this.worker = worker;
    return new Promise<void>((resolve, reject) => {
      let started = false;
      worker.on('message', (m: FromThread) => {
        switch (m.type) {
          case 'ready':
            started = true;
            this.running = true;
            worker.unref(); // the servers keep the process alive; a forgotten close must not
            this.committed.advance(m.position);
            resolve();
            return;
          case 'start_failed':
            reject(fromWire(m.error));
            void worker.terminate();
            return;
          case 'committed':
            hooks.onCommitted?.(m.partner);
            this.committed.advance(m.position);
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

  /**
   * A commit through this process's event store: the thread reads it now rather than at its next poll. One message
   * at a time: while one is on its way, the thread's read after taking it sees this commit too (it clears the cell
   * before it reads), so the commits of a burst cost the event loop one post, not one each.
   */
  notifyAppended(): void {
    if (this.running && Atomics.compareExchange(this.wake, 0, 0, 1) === 0) this.post({ type: 'appended' });
  }

  /** Resolves true once `position` is committed, false after `timeoutMs` (or once the thread has stopped). */
  waitFor(position: number, timeoutMs: number): Promise<boolean> {
    if (!this.running && this.committed.position < position) return Promise.resolve(false);
    return this.committed.wait(position, timeoutMs);
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
    this.committed.endAll();
    for (const grant of this.held.values()) grant();
    this.held.clear();
  }
}
