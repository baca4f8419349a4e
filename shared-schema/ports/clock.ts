/** The one clock every time rule reads. Tests and `CLOCK=manual` use a manual one. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

export class ManualClock implements Clock {
  private ms: number;
  constructor(start: Date | number = Date.now()) {
    this.ms = typeof start === 'number' ? start : start.getTime();
  }
  now(): Date {
    return new Date(this.ms);
  }
  advance(ms: number): Date {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError('advance takes a non-negative number of milliseconds');
    this.ms += ms;
    return this.now();
  }
  set(at: Date): void {
    this.ms = at.getTime();
  }
}
