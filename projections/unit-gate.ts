/**
 * A gate in front of the live projection runner's units of work: `hold()` waits until the unit in progress (if any)
 * has committed and keeps the next one waiting until released. The runner itself is unaware: its `transact` call
 * simply waits. Rebuild switches and audits hold it for a moment to see the read models at one fixed position;
 * reads are never gated.
 */
import type { ReadStore, ReadTx } from '../shared-schema/ports/read-store.js';
import { MappedReadStoreBase } from './generations.js';

export class UnitGate extends MappedReadStoreBase {
  private held: Promise<void> | null = null;
  private active = 0;
  private idle: (() => void)[] = [];

  constructor(inner: ReadStore) {
    super(inner);
  }

  protected mapName(name: string): string {
    return name;
  }

  get isHeld(): boolean {
    return this.held !== null;
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

  /** Resolves once no unit runs, with the function that lets units run again. Holds queue one after another. */
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

  /** Runs `work` while the gate is held. */
  async whileHeld<T>(work: () => Promise<T>): Promise<T> {
    const release = await this.hold();
    try {
      return await work();
    } finally {
      release();
    }
  }
}
