/**
 * The committed position of the live projections, and whoever waits for it (read-your-writes): the one bookkeeping
 * behind `ProjectionRunner` (in-process), `ProjectionThread` (the runner on a thread of its own) and
 * `PositionWatcher` (the runner in another process).
 */
interface Waiter {
  position: number;
  resolve: (ok: boolean) => void;
}

export class PositionWaiters {
  private reached = 0;
  private waiters: Waiter[] = [];

  /** Highest position reported so far. */
  get position(): number {
    return this.reached;
  }

  /** How many waits are pending. */
  get pending(): number {
    return this.waiters.length;
  }

  /** The lowest position waited for, 0 when none is. */
  get lowest(): number {
    return this.waiters.reduce((low, w) => (low === 0 || w.position < low ? w.position : low), 0);
  }

  /** Resolves true once `advance` reaches `position`, false after `timeoutMs` or at `endAll`. */
  wait(position: number, timeoutMs: number): Promise<boolean> {
    if (this.reached >= position) return Promise.resolve(true);
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        resolve(false);
      }, timeoutMs);
      timer.unref();
      const waiter: Waiter = {
        position,
        resolve: (ok) => {
          clearTimeout(timer);
          resolve(ok);
        },
      };
      this.waiters.push(waiter);
    });
  }

  /** Raises the position (never lowers it) and tells the waits it satisfies. */
  advance(position: number): void {
    if (position <= this.reached) return;
    this.reached = position;
    const ready = this.waiters.filter((w) => w.position <= position);
    if (ready.length === 0) return;
    this.waiters = this.waiters.filter((w) => w.position > position);
    for (const w of ready) w.resolve(true);
  }

  /** No position will come any more: every pending wait answers false. */
  endAll(): void {
    const ended = this.waiters;
    this.waiters = [];
    for (const w of ended) w.resolve(false);
  }
}
