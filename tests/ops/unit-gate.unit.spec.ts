import { expect } from 'chai';
import type { ReadStore, ReadTx } from '../../shared-schema/ports/read-store.js';
import { UnitGate } from '../../projections/unit-gate.js';
import { GenerationalReadStore, physicalName } from '../../projections/generations.js';
import type { Projector } from '../../projections/projector.js';

/** Records the order of units and lets the test finish each one. */
function fakeStore(log: string[]): ReadStore & { finish: () => void } {
  let finish: () => void = () => undefined;
  const store = {
    finish: () => finish(),
    async transact<T>(work: (tx: ReadTx) => Promise<T>): Promise<T> {
      log.push('unit start');
      await new Promise<void>((resolve) => (finish = resolve));
      const result = await work({} as ReadTx);
      log.push('unit end');
      return result;
    },
  };
  return store as unknown as ReadStore & { finish: () => void };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('the gate in front of the live runner', () => {
  it('waits for the unit in progress, then keeps the next one waiting until released', async () => {
    const log: string[] = [];
    const inner = fakeStore(log);
    const gate = new UnitGate(inner);
    const first = gate.transact(async () => log.push('work 1'));
    await tick();
    const held = gate.hold().then((release) => {
      log.push('held');
      return release;
    });
    await tick();
    expect(log).to.deep.equal(['unit start']);
    inner.finish();
    const release = await held;
    await first;
    const second = gate.transact(async () => log.push('work 2'));
    await tick();
    expect(log).to.deep.equal(['unit start', 'work 1', 'unit end', 'held']);
    release();
    await tick();
    inner.finish();
    await second;
    expect(log.slice(4)).to.deep.equal(['unit start', 'work 2', 'unit end']);
  });
});

describe('generation names', () => {
  const projector: Projector = {
    name: 'things',
    collections: [
      { name: 'things', indexes: [] },
      { name: 'thing_facts', indexes: [] },
    ],
    categories: ['thing'],
    apply: async () => undefined,
  };
  it('maps a projector’s collections and checkpoint to its generation and leaves other names alone', () => {
    const store = new GenerationalReadStore({} as ReadStore, [projector]);
    expect(store.resolve('things')).to.equal('things');
    store.setGeneration('things', 3);
    expect(store.resolve('things')).to.equal('things__g3');
    expect(store.resolve('thing_facts')).to.equal('thing_facts__g3');
    expect(store.resolve('idempotency')).to.equal('idempotency');
    expect(physicalName('x', 0)).to.equal('x');
  });
});
