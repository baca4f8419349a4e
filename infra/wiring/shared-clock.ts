/**
 * `CLOCK=manual` across processes: the separate processes of one deployment read one manual clock kept in a small
 * file (`DATA_DIR/clock`, epoch milliseconds). Moving it (`set`, `advance`, the admin API's `POST /clock`) rewrites
 * the file atomically (write + rename); every `now()` reads it, so a move is seen by the very next call of any
 * process sharing the directory. A test and development tool only: `CLOCK=manual` is refused in production.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ManualClock, systemClock, type Clock } from '../../shared-schema/ports/clock.js';
import type { Config } from './config.js';

export const CLOCK_FILE = 'clock';

export class SharedFileClock extends ManualClock {
  private seq = 0;

  /** Uses the time in `file`; when the file is missing, creates it with `start` (the first process wins). */
  constructor(
    readonly file: string,
    start: Date | number = Date.now(),
  ) {
    super(start);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    try {
      fs.writeFileSync(file, String(typeof start === 'number' ? start : start.getTime()), { flag: 'wx' });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }

  override now(): Date {
    return new Date(this.read());
  }

  override advance(ms: number): Date {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError('advance takes a non-negative number of milliseconds');
    this.write(this.read() + ms);
    return this.now();
  }

  override set(at: Date): void {
    this.write(at.getTime());
  }

  private read(): number {
    const ms = Number(fs.readFileSync(this.file, 'utf8'));
    if (!Number.isFinite(ms)) throw new Error(`the shared clock file ${this.file} does not hold a time`);
    return ms;
  }

  private write(ms: number): void {
    const tmp = `${this.file}.${process.pid}.${++this.seq}.tmp`;
    fs.writeFileSync(tmp, String(ms));
    fs.renameSync(tmp, this.file);
  }
}

/** The clock of one of the separate processes: the system clock, or the manual clock shared through DATA_DIR. */
export function processClock(config: Config): Clock {
  return config.clock === 'manual' ? new SharedFileClock(path.join(config.dataDir, CLOCK_FILE)) : systemClock;
}

/**
 * `CLOCK=manual` across the threads of one process (the projection thread stamps parked events): the time is one
 * cell of shared memory, so a move by any thread is seen by the very next `now()` of every other.
 */
export class SharedMemoryClock extends ManualClock {
  private readonly cell: BigInt64Array;

  /** A new clock at `start`, or (`buffer` of another thread's clock) the same clock. */
  constructor(start: Date | number = Date.now(), buffer?: SharedArrayBuffer) {
    super(start);
    this.cell = new BigInt64Array(buffer ?? new SharedArrayBuffer(8));
    if (!buffer) this.write(typeof start === 'number' ? start : start.getTime());
  }

  static attach(buffer: SharedArrayBuffer): SharedMemoryClock {
    return new SharedMemoryClock(0, buffer);
  }

  /** What another thread passes to `attach`. */
  get buffer(): SharedArrayBuffer {
    return this.cell.buffer as SharedArrayBuffer;
  }

  override now(): Date {
    return new Date(Number(Atomics.load(this.cell, 0)));
  }

  override advance(ms: number): Date {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError('advance takes a non-negative number of milliseconds');
    Atomics.add(this.cell, 0, BigInt(Math.round(ms)));
    return this.now();
  }

  override set(at: Date): void {
    this.write(at.getTime());
  }

  private write(ms: number): void {
    Atomics.store(this.cell, 0, BigInt(Math.round(ms)));
  }
}
