/** Rule 5 and the condition rule (shared-schema/shopper/offer-rules.ts), table-driven at the boundaries of SHOPPER.md. */
import { expect } from 'chai';
import { applyOfferRules, farBelow, priceSanity, type Condition } from '../../shared-schema/shopper/offer-rules.js';

type O = { id: string; condition: Condition; price_cents: number };
const o = (id: string, price_cents: number, condition: Condition = 'new'): O => ({ id, condition, price_cents });
const ids = (list: readonly O[]) => list.map((x) => x.id);

describe('rule 5: price sanity (far below the median of the other offers of the product and condition)', () => {
  const table: { name: string; offers: O[]; kept: string[] }[] = [
    { name: 'alone', offers: [o('a', 1)], kept: ['a'] },
    { name: 'one other offer: nothing to compare with', offers: [o('a', 1), o('b', 10000)], kept: ['a', 'b'] },
    {
      name: 'two others, odd median below half',
      offers: [o('a', 4999), o('b', 10000), o('c', 10000)],
      kept: ['b', 'c'],
    },
    {
      name: 'two others, exactly half is not below half',
      offers: [o('a', 5000), o('b', 10000), o('c', 10000)],
      kept: ['a', 'b', 'c'],
    },
    {
      name: 'two others, even count: mean of the middle two (9000, 11000 → 10000), 4999 out',
      offers: [o('a', 4999), o('b', 9000), o('c', 11000)],
      kept: ['b', 'c'],
    },
    {
      name: 'two others, even count, exactly half of the mean stays',
      offers: [o('a', 5000), o('b', 9000), o('c', 11000)],
      kept: ['a', 'b', 'c'],
    },
    {
      name: 'half of a mean that is not whole (9000, 10001 → 9500.5): 4750 is below',
      offers: [o('a', 4750), o('b', 9000), o('c', 10001)],
      kept: ['b', 'c'],
    },
    {
      name: 'half of a mean that is not whole (9000, 10001 → 9500.5): 4751 is not',
      offers: [o('a', 4751), o('b', 9000), o('c', 10001)],
      kept: ['a', 'b', 'c'],
    },
    {
      name: 'three others: the median is the middle one (7000), 3499 out',
      offers: [o('a', 3499), o('b', 6000), o('c', 7000), o('d', 100000)],
      kept: ['b', 'c', 'd'],
    },
    {
      name: 'three others: exactly half of the middle one stays',
      offers: [o('a', 3500), o('b', 6000), o('c', 7000), o('d', 100000)],
      kept: ['a', 'b', 'c', 'd'],
    },
    {
      name: 'several may be left out of one answer, each judged against the same set',
      offers: [o('a', 100), o('b', 100), o('c', 10000), o('d', 10000)],
      kept: ['c', 'd'],
    },
    {
      name: 'mixed conditions are compared only within their condition',
      offers: [o('n1', 10000), o('n2', 10000), o('u1', 3000, 'used'), o('u2', 3000, 'used'), o('u3', 1000, 'used')],
      kept: ['n1', 'n2', 'u1', 'u2'],
    },
    {
      name: 'a used offer never counts against new ones (only one other new)',
      offers: [o('n1', 1000), o('n2', 10000), o('u1', 10000, 'used')],
      kept: ['n1', 'n2', 'u1'],
    },
    {
      name: 'refurbished and used are different conditions',
      offers: [o('r1', 1000, 'refurbished'), o('u1', 10000, 'used'), o('u2', 10000, 'used')],
      kept: ['r1', 'u1', 'u2'],
    },
  ];
  for (const row of table) it(row.name, () => expect(ids(priceSanity(row.offers))).to.deep.equal(row.kept));

  it('is exact with large prices (no floating point)', () => {
    const big = 2 ** 50;
    expect(farBelow(big / 2, [big, big])).to.equal(false);
    expect(farBelow(big / 2 - 1, [big, big])).to.equal(true);
    expect(farBelow(big, [big * 2 + 1, big * 2 + 1])).to.equal(true);
  });
});

describe('the condition rule', () => {
  const table: { name: string; offers: O[]; offers_: string[]; alternatives: string[] }[] = [
    { name: 'new only', offers: [o('a', 10), o('b', 20)], offers_: ['a', 'b'], alternatives: [] },
    {
      name: 'used and refurbished are alternatives, order kept',
      offers: [o('u', 5, 'used'), o('n', 10), o('r', 7, 'refurbished')],
      offers_: ['n'],
      alternatives: ['u', 'r'],
    },
    { name: 'used only: empty offers', offers: [o('u', 5, 'used')], offers_: [], alternatives: ['u'] },
    {
      name: 'rule 5 first, then the split',
      offers: [o('n', 10000), o('u1', 100, 'used'), o('u2', 10000, 'used'), o('u3', 10000, 'used')],
      offers_: ['n'],
      alternatives: ['u2', 'u3'],
    },
  ];
  for (const row of table) {
    it(row.name, () => {
      const split = applyOfferRules(row.offers);
      expect(ids(split.offers)).to.deep.equal(row.offers_);
      expect(ids(split.alternatives)).to.deep.equal(row.alternatives);
    });
  }
});
