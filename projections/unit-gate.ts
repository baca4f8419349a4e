/**
 * A gate in front of the live projection runner's units of work: `hold()` waits until the unit in progress (if any)
 * has committed and keeps the next one waiting until released. The runner itself is unaware: its `transact` call
 * simply waits. Rebuild switches and audits hold it for a moment to see the read models at one fixed position;
 * reads are never gated.
 */
import type { ReadStore, ReadTx } from '../shared-schema/ports/read-store.js';
import { MappedReadStoreBase } from './generations.js';

/**
 * What holds the live runner between two units: a `UnitGate` in front of a runner of this thread, or the gate of a
 * runner on a thread of its own (infra/wiring/projection-thread.ts), held over a message round trip.
 */
export interface RunnerGate {
  /** Resolves once no unit runs, with the function that lets units run again. Holds queue one after another. */
  hold(): Promise<() => void>;
  /** Runs `work` while the gate is held. */
  whileHeld<T>(work: () => Promise<T>): Promise<T>;
}

/** Runs `work` while `gate` is held. */
export async function whileHeld<T>(gate: RunnerGate, work: () => Promise<T>): Promise<T> {
  const release = await gate.hold();
  try {
    return await work();
  } finally {
    release();
  }
}

/**
 * A store whose units of work each hold `gate` while they run: writes outside the live runner (a parked event's
 * retry) that must not interleave with its units, when that runner is not in this thread.
 */
export class GatedReadStore extends MappedReadStoreBase {
  constructor(
    inner: ReadStore,
    private readonly gate: RunnerGate,
  ) {
    super(inner);
  }
  protected mapName(name: string): string {
    return name;
  }
  override transact<T>(work: (tx: ReadTx) => Promise<T>): Promise<T> {
    return this.gate.whileHeld(() => this.inner.transact(work));
  }
}

export class UnitGate extends MappedReadStoreBase implements RunnerGate {
  private held: Promise<void> | null = null;
  private active = 0;
  private idle: (() => void)[] = [];

  constructor(inner: ReadStore) {
    super(inner);
  }

  protected mapName(name: string): string {
    return name;
  }

  override async transact<T>(work: (tx: ReadTx) => Promise<T>): Promise<T> {
    while (this.held) await this.held;
    this.active += 1;
    try {
      return await this.inner.transact(work);
    } finally {
      this.active -= 1;
      if (this.active === 0) for (const wake of this.idle.splice(0)) wake();
    }
  }

  async hold(): Promise<() => void> {
    while (this.held) await this.held;
    let release!: () => void;
    this.held = new Promise<void>((resolve) => {
      release = () => {
        this.held = null;
        resolve();
      };
    });
    if (this.active > 0) await new Promise<void>((resolve) => this.idle.push(resolve));
    let released = false;
    return () => {
      if (released) return;
      released = true;
      release();
    };
  }

  whileHeld<T>(work: () => Promise<T>): Promise<T> {
    return whileHeld(this, work);
  }
}
