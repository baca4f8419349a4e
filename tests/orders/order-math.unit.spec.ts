import { expect } from 'chai';
import {
  lineFigures,
  orderFigures,
  toBigCents,
  fromBigCents,
  type OrderLine,
} from '../../shared-schema/domain/order-math.js';
import type { Commission } from '../../shared-schema/domain/commission.js';

const pct = (rate: number): Commission => ({ type: 'percentage', rate });
const fixed = (amount_cents: number): Commission => ({ type: 'fixed', amount_cents });
const line = (
  quantity: number,
  unit_price_cents: number,
  refunded_cents: number,
  commission: Commission,
): OrderLine => ({
  quantity,
  unit_price_cents,
  refunded_cents,
  commission,
});
const expectedOf = (l: OrderLine) => lineFigures(l).expected;
const MAX = Number.MAX_SAFE_INTEGER;

describe('order math', () => {
  describe('percentage: round_half_up(net × rate_hundredths / 10000) per line', () => {
    it('rounds 2.5 up to 3 (banker’s rounding would give 2)', () => {
      expect(expectedOf(line(1, 250, 0, pct(1)))).to.equal(3n);
    });
    it('rounds 3.5 up to 4 and 0.5 up to 1 (truncation would give 3 and 0)', () => {
      expect(expectedOf(line(1, 350, 0, pct(1)))).to.equal(4n);
      expect(expectedOf(line(1, 5000, 0, pct(0.01)))).to.equal(1n);
    });
    it('rounds 0.4999 down to 0 and 1.4999 down to 1', () => {
      expect(expectedOf(line(1, 4999, 0, pct(0.01)))).to.equal(0n);
      expect(expectedOf(line(1, 14999, 0, pct(0.01)))).to.equal(1n);
    });
    it('rounds 4.9996 to 5 with a rate that is not exact in binary (0.29 %)', () => {
      expect(expectedOf(line(1, 1724, 0, pct(0.29)))).to.equal(5n);
      expect(expectedOf(line(2, 50, 0, pct(1.15)))).to.equal(1n); // 100 × 1.15 % = 1.15
    });
    it('rounds exact halves up where floating point would land below them (0.57 %, 1.15 %)', () => {
      expect(expectedOf(line(1, 5000, 0, pct(0.57)))).to.equal(29n); // 28.5; 5000 * 0.57 / 100 = 28.499999…
      expect(expectedOf(line(1, 3000, 0, pct(1.15)))).to.equal(35n); // 34.5
    });
    it('applies to the net of the whole line (quantity × unit − refunded), not per unit', () => {
      // 3 × 50 = 150, 1 % → 1.5 → 2; per unit it would be 3 × round(0.5) = 3
      expect(expectedOf(line(3, 50, 0, pct(1)))).to.equal(2n);
      // net 150 − 100 = 50, 10 % → 5
      expect(expectedOf(line(3, 50, 100, pct(10)))).to.equal(5n);
    });
    it('gives 0 on a zero net and at rate 0, and the whole net at 100 %', () => {
      expect(expectedOf(line(2, 100, 200, pct(12.5)))).to.equal(0n);
      expect(expectedOf(line(2, 100, 0, pct(0)))).to.equal(0n);
      expect(expectedOf(line(10000, 1_000_000_000, 0, pct(100)))).to.equal(10_000_000_000_000n);
    });
  });

  describe('fixed: round_half_up(amount × quantity × net / gross) per line', () => {
    it('pays amount per unit when nothing is refunded', () => {
      expect(expectedOf(line(3, 100, 0, fixed(1000)))).to.equal(3000n);
    });
    it('is reduced in proportion to the refunded value', () => {
      expect(expectedOf(line(3, 100, 100, fixed(1000)))).to.equal(2000n);
      expect(expectedOf(line(3, 100, 50, fixed(1000)))).to.equal(2500n);
      expect(expectedOf(line(3, 100, 1, fixed(1000)))).to.equal(2990n);
      expect(expectedOf(line(3, 100, 300, fixed(1000)))).to.equal(0n);
    });
    it('rounds the proportion half up: 0.5 → 1, 0.25 → 0, 0.667 → 1, 2.5 → 3', () => {
      expect(expectedOf(line(1, 4, 2, fixed(1)))).to.equal(1n);
      expect(expectedOf(line(1, 4, 3, fixed(1)))).to.equal(0n);
      expect(expectedOf(line(1, 3, 1, fixed(1)))).to.equal(1n);
      expect(expectedOf(line(2, 2, 3, fixed(5)))).to.equal(3n); // 5 × 2 × 1 / 4 = 2.5
    });
    it('gives 0 when the gross is 0 (free items)', () => {
      expect(expectedOf(line(5, 0, 0, fixed(700)))).to.equal(0n);
    });
    it('stays exact beyond 2^53: amount 2^53−1 × quantity 10 000', () => {
      const f = lineFigures(line(10000, 1_000_000_000, 0, fixed(MAX)));
      expect(f.expected).to.equal(90_071_992_547_409_910_000n);
      // one cent refunded of 10^13: 90071992547409910000 × (10^13 − 1) / 10^13 = 90071992547400902800.745… → …801
      expect(expectedOf(line(10000, 1_000_000_000, 1, fixed(MAX)))).to.equal(90_071_992_547_400_902_801n);
    });
  });

  describe('no rule', () => {
    it('is unknown (null) while the line has a balance, 0 once fully refunded', () => {
      expect(expectedOf(line(1, 100, 0, null))).to.equal(null);
      expect(expectedOf(line(1, 100, 99, null))).to.equal(null);
      expect(expectedOf(line(1, 100, 100, null))).to.equal(0n);
      expect(expectedOf(line(3, 0, 0, null))).to.equal(0n);
    });
  });

  describe('order totals', () => {
    it('sums gross, refunded and net; known subtotal skips unknown lines; expected null if any line is null', () => {
      const o = orderFigures([line(2, 1000, 500, pct(10)), line(1, 300, 0, null), line(4, 25, 0, fixed(7))]);
      expect(o.gross_cents).to.equal(2400);
      expect(o.refunded_cents).to.equal(500);
      expect(o.net_cents).to.equal(1900);
      expect(o.lines.map((l) => l.expected)).to.deep.equal([150n, null, 28n]);
      expect(o.expected).to.equal(null);
      expect(o.known_expected).to.equal(178n);
    });
    it('is known again when the unknown line is fully refunded', () => {
      const o = orderFigures([line(2, 1000, 500, pct(10)), line(1, 300, 300, null)]);
      expect(o.expected).to.equal(150n);
      expect(o.known_expected).to.equal(150n);
    });
    it('rounds per line, not on the order total', () => {
      // two lines of 0.5 each: per line 1 + 1 = 2; on the total it would be 1
      const o = orderFigures([line(1, 50, 0, pct(1)), line(1, 50, 0, pct(1))]);
      expect(o.expected).to.equal(2n);
    });
    it('keeps orders at the contract limits exact', () => {
      const lines = [line(10000, 50_000_000, 0, fixed(MAX)), line(10000, 50_000_000, 12_345, pct(99.99))];
      const o = orderFigures(lines);
      expect(o.gross_cents).to.equal(1_000_000_000_000);
      expect(o.net_cents).to.equal(1_000_000_000_000 - 12_345);
      // net 499 999 987 655 × 9999 / 10000 = 499 949 987 656.2345 → 499 949 987 656
      expect(o.lines[1].expected).to.equal(499_949_987_656n);
      expect(o.expected).to.equal(90_071_993_047_359_897_656n);
      expect(o.known_expected).to.equal(90_071_993_047_359_897_656n);
    });
  });

  describe('BigCents (exact integers in JSON documents)', () => {
    it('is a number up to 2^53−1 and decimal text beyond, and reads back exactly', () => {
      expect(toBigCents(0n)).to.equal(0);
      expect(toBigCents(BigInt(MAX))).to.equal(MAX);
      expect(toBigCents(BigInt(MAX) + 1n)).to.equal('9007199254740992');
      expect(fromBigCents('90071992547409910000')).to.equal(90_071_992_547_409_910_000n);
      expect(fromBigCents(MAX)).to.equal(BigInt(MAX));
    });
    it('refuses what is not a non-negative exact integer', () => {
      expect(() => toBigCents(-1n)).to.throw(RangeError);
      expect(() => fromBigCents(1.5)).to.throw(RangeError);
      expect(() => fromBigCents(MAX + 1)).to.throw(RangeError);
      expect(() => fromBigCents('012')).to.throw(RangeError);
      expect(() => fromBigCents('1e3')).to.throw(RangeError);
    });
  });
});
