import { expect } from 'chai';
import { pickThread, SPILL_AT } from '../../infra/adapters/sqlite/search-reader.js';

describe('search threads: which thread a search goes to', () => {
  const pool = (...inFlight: number[]) => inFlight.map((n, i) => ({ i, inFlight: n }));

  it('goes to the first thread while it has fewer than SPILL_AT in flight, however idle the others', () => {
    expect(SPILL_AT).to.equal(4);
    expect(pickThread(pool(0, 0))!.i).to.equal(0);
    expect(pickThread(pool(3, 0, 0))!.i).to.equal(0);
  });

  it('spills to the least busy thread (the first of equals) once the first has SPILL_AT in flight', () => {
    expect(pickThread(pool(4, 0))!.i).to.equal(1);
    expect(pickThread(pool(4, 1, 0))!.i).to.equal(2);
    expect(pickThread(pool(5, 2, 2))!.i).to.equal(1);
    expect(pickThread(pool(4, 4))!.i).to.equal(0);
    expect(pickThread(pool(9))!.i).to.equal(0);
  });

  it('has none when no thread is live', () => {
    expect(pickThread(pool())).to.equal(undefined);
  });
});
