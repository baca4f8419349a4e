/** The ULIDs of request ids, job ids, event ids and history entries (shared-schema/domain/ids.ts). */
import { expect } from 'chai';
import { monotonicUlids, newJobId, newRequestId, ulid } from '../../shared-schema/domain/ids.js';

const CROCKFORD = /^[0-9ABCDEFGHJKMNPQRSTVWXYZ]{26}$/;

/** The time a ULID carries: its first 10 characters, base 32. */
const timeOf = (id: string) =>
  [...id.slice(0, 10)].reduce((t, c) => t * 32 + '0123456789ABCDEFGHJKMNPQRSTVWXYZ'.indexOf(c), 0);

// Each test its own generator: the process's `ulid` keeps the latest time any test gave it.
describe('ulid', () => {
  it('is 26 Crockford base-32 characters whose first ten are the time in milliseconds', () => {
    const at = Date.UTC(2026, 10, 27, 12, 0, 0, 123);
    const id = monotonicUlids()(at);
    expect(id).to.match(CROCKFORD);
    expect(timeOf(id)).to.equal(at);
    expect(ulid()).to.match(CROCKFORD);
    expect(newRequestId()).to.match(/^req_[0-9A-Z]{26}$/);
    expect(newJobId(at + 1)).to.match(/^job_[0-9A-Z]{26}$/);
  });

  it('sorts in the order made, within one millisecond and across them, and never repeats', () => {
    const start = Date.UTC(2026, 10, 27, 13, 0, 0, 0);
    const next = monotonicUlids();
    const ids: string[] = [];
    for (let ms = 0; ms < 50; ms++) for (let i = 0; i < 200; i++) ids.push(next(start + ms));
    expect([...ids].sort()).to.deep.equal(ids);
    expect(new Set(ids).size).to.equal(ids.length);
  });

  it('stays ordered when the clock goes back: it keeps the later time and counts on', () => {
    const next = monotonicUlids();
    const later = Date.UTC(2026, 10, 27, 14, 0, 0, 0);
    const a = next(later);
    const b = next(later - 5_000);
    expect(b > a).to.equal(true);
    expect(timeOf(b)).to.equal(later);
  });

  it('draws a fresh random part in each new millisecond (no two milliseconds share one)', () => {
    const start = Date.UTC(2026, 10, 27, 15, 0, 0, 0);
    const next = monotonicUlids();
    // 400 draws pass the 4 kB pool's refill (16 bytes each).
    const parts = Array.from({ length: 400 }, (_, i) => next(start + i).slice(10));
    expect(new Set(parts).size).to.equal(parts.length);
    const counts = new Map<string, number>();
    for (const c of parts.join('')) counts.set(c, (counts.get(c) ?? 0) + 1);
    expect(counts.size, 'every one of the 32 characters appears in 6,400 draws').to.equal(32);
  });
});
