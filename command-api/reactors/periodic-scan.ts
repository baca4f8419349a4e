/**
 * A scan that runs every `intervalMs` of real time and on demand (the operator moving a manual clock, a test), never
 * two at once: a call while one runs queues one more after it, and calls while that one waits share it.
 */
export abstract class PeriodicScan<T> {
  private timer: NodeJS.Timeout | null = null;
  private tail: Promise<T>;
  private queued: Promise<T> | null = null;
  protected stopped = false;

  protected constructor(
    private readonly intervalMs: number,
    private readonly idle: T,
    private readonly onScanError?: (err: unknown) => void,
  ) {
    this.tail = Promise.resolve(idle);
  }

  start(): void {
    this.timer = setInterval(() => void this.scan(), this.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.tail;
  }

  /** Runs one scan after the current one; a failed or skipped (stopped) scan resolves with the idle value. */
  scan(): Promise<T> {
    if (this.queued) return this.queued;
    const run = this.tail
      .then(() => {
        this.queued = null;
        return this.stopped ? this.idle : this.scanOnce();
      })
      .catch((err: unknown) => {
        this.onScanError?.(err);
        return this.idle;
      });
    this.queued = run;
    this.tail = run;
    return run;
  }

  protected abstract scanOnce(): Promise<T>;
}
