/**
 * The MongoDB translations of the read-store port, checked without a server. Keyset pagination is checked against
 * a small model of MongoDB's comparison rules (null and missing sort first and equal each other; a range operator
 * matches only values of its own type): paging through any data set in any mix of directions must give exactly
 * the fully sorted list.
 */
import { expect } from 'chai';
import fc from 'fast-check';
import { BSON, Decimal128, Long } from 'mongodb';
import type { Scalar, SortKey } from '../../shared-schema/ports/read-store.js';
import {
  andFilters,
  decimalStringToBigInt,
  decodeKey,
  encodeKey,
  fromMongoDoc,
  idFilter,
  keysetFilter,
  matchFilter,
  sortKeys,
  sumPipeline,
  toBigInt,
  toMongoDoc,
  toSort,
  whereToFilter,
} from '../../infra/adapters/mongo/query.js';

type Row = Record<string, Scalar | undefined>;

// --- a model of the MongoDB semantics the translation relies on (numbers, strings and null only) ---
const rank = (v: Scalar | undefined): number => (v === null || v === undefined ? 0 : typeof v === 'number' ? 1 : 2);
function cmp(a: Scalar | undefined, b: Scalar | undefined): number {
  const r = rank(a) - rank(b);
  if (r !== 0 || rank(a) === 0) return r;
  return (a as number | string) < (b as number | string) ? -1 : (a as number | string) > (b as number | string) ? 1 : 0;
}
function matches(row: Row, filter: Record<string, unknown>): boolean {
  return Object.entries(filter).every(([k, cond]) => {
    if (k === '$or') return (cond as Record<string, unknown>[]).some((f) => matches(row, f));
    if (k === '$and') return (cond as Record<string, unknown>[]).every((f) => matches(row, f));
    const v = row[k];
    if (cond === null || typeof cond !== 'object') return cmp(v, cond as Scalar) === 0;
    return Object.entries(cond as Record<string, Scalar>).every(([op, x]) => {
      const sameType = rank(v) === rank(x) && rank(x) !== 0;
      switch (op) {
        case '$gt':
          return sameType && cmp(v, x) > 0;
        case '$lt':
          return sameType && cmp(v, x) < 0;
        case '$ne':
          return cmp(v, x) !== 0;
        case '$exists':
          return (v !== undefined) === x;
        default:
          throw new Error(`model lacks ${op}`);
      }
    });
  });
}
function sortRows(rows: Row[], keys: Required<SortKey>[]): Row[] {
  return [...rows].sort((a, b) => {
    for (const k of keys) {
      const c = cmp(a[k.field], b[k.field]);
      if (c !== 0) return k.dir === 'desc' ? -c : c;
    }
    return 0;
  });
}

describe('MongoDB query translation', () => {
  it('translates equality, ranges, sets and "not equal", and ignores empty conditions', () => {
    expect(
      whereToFilter({ a: 1, b: null, c: { gte: 2, lt: 5 }, d: { in: ['x', 'y'] }, e: { ne: 'z' }, f: {} }),
    ).to.deep.equal({
      a: 1,
      b: null,
      c: { $gte: 2, $lt: 5 },
      d: { $in: ['x', 'y'] },
      e: { $ne: 'z' },
    });
    expect(andFilters({}, { a: 1 })).to.deep.equal({ a: 1 });
    expect(andFilters({ a: 1 }, { b: 2 })).to.deep.equal({ $and: [{ a: 1 }, { b: 2 }] });
  });

  it('never puts an object or array where a value goes: where, ranges, in, ne, after, replaceIf match and ids refuse them', () => {
    const raw = <T>(value: unknown): T => value as T; // what the port's types exclude, as it may arrive at run time
    for (const v of [{ $ne: null }, { $regex: '.*' }, { $gt: '' }, ['a'], new Date(0)]) {
      const tag = JSON.stringify(v);
      expect(() => whereToFilter({ s: raw<Scalar>(v) }), tag).to.throw(TypeError);
      for (const op of ['gt', 'gte', 'lt', 'lte', 'ne'] as const)
        expect(() => whereToFilter({ s: { [op]: raw<Scalar>(v) } }), `${op} ${tag}`).to.throw(TypeError);
      expect(() => whereToFilter({ s: { in: [raw<Scalar>(v)] } }), `in ${tag}`).to.throw(TypeError);
      expect(() => keysetFilter(sortKeys([{ field: 's' }]), [raw<Scalar>(v), 'id']), `after ${tag}`).to.throw(
        TypeError,
      );
      expect(() => keysetFilter(sortKeys([{ field: 's' }]), ['x', raw<Scalar>(v)]), `after _id ${tag}`).to.throw(
        TypeError,
      );
      expect(() => matchFilter('id', { s: raw<Scalar>(v) }), `match ${tag}`).to.throw(TypeError);
      expect(() => idFilter(raw<string>(v)), `id ${tag}`).to.throw(TypeError);
    }
    // An operator key in a condition's place is refused, not ignored (ignoring it would drop the condition: match all).
    expect(() => whereToFilter({ s: raw<Scalar>({ $ne: 'x' }) })).to.throw(TypeError, /unknown operator/);
    expect(() => whereToFilter({ s: raw<Scalar>({ regex: '.*' }) })).to.throw(TypeError, /unknown operator/);
    expect(() => whereToFilter({ s: { in: raw<Scalar[]>('abc') } })).to.throw(TypeError);
    expect(() => whereToFilter({ n: Number.NaN })).to.throw(RangeError);
    // Scalars go through as they are.
    expect(matchFilter('k1', { state: 'open', n: 2, flag: false, gone: null })).to.deep.equal({
      state: 'open',
      n: 2,
      flag: false,
      gone: null,
      _id: 'k1',
    });
    expect(keysetFilter(sortKeys([{ field: 's' }]), ['x', 'id'])).to.deep.equal({
      $or: [{ s: { $gt: 'x' } }, { $and: [{ s: 'x' }, { _id: { $gt: 'id' } }] }],
    });
  });

  it('always sorts by _id last, once', () => {
    expect(toSort(sortKeys([{ field: 'at', dir: 'desc' }]))).to.deep.equal([
      ['at', -1],
      ['_id', 1],
    ]);
    expect(toSort(sortKeys([{ field: '_id', dir: 'desc' }]))).to.deep.equal([['_id', -1]]);
  });

  it('refuses an "after" that does not hold one value per sort key', () => {
    expect(() => keysetFilter(sortKeys([{ field: 'a' }]), ['x'])).to.throw(RangeError);
  });

  it('keyset pages through any data in any mix of directions, nulls included, exactly once and in order', () => {
    const row = fc.record({
      a: fc.option(fc.integer({ min: 0, max: 3 }), { nil: null }),
      b: fc.option(fc.constantFrom('x', 'y', 'z'), { nil: null }),
      c: fc.option(fc.integer({ min: 0, max: 2 }), { nil: undefined }),
    });
    const order = fc
      .subarray(['a', 'b', 'c'])
      .chain((fields) =>
        fc.tuple(
          ...fields.map((f) =>
            fc.record({ field: fc.constant(f), dir: fc.constantFrom('asc' as const, 'desc' as const) }),
          ),
        ),
      );
    fc.assert(
      fc.property(fc.array(row, { maxLength: 25 }), order, fc.integer({ min: 1, max: 4 }), (raw, orderBy, pageSize) => {
        const rows: Row[] = raw.map((r, i) => ({ ...r, _id: `id${String(i).padStart(3, '0')}` }));
        const keys = sortKeys(orderBy);
        const expected = sortRows(rows, keys).map((r) => r._id);
        const seen: unknown[] = [];
        let after: Scalar[] | undefined;
        for (let guard = 0; guard < 100; guard++) {
          const filter = after ? keysetFilter(keys, after) : {};
          const page = sortRows(
            rows.filter((r) => matches(r, filter)),
            keys,
          ).slice(0, pageSize);
          if (page.length === 0) break;
          seen.push(...page.map((r) => r._id));
          const last = page[page.length - 1];
          after = keys.map((k) => last[k.field] ?? null);
        }
        expect(seen).to.deep.equal(expected);
      }),
      { numRuns: 300 },
    );
  });

  it('sums exactly: each field as a long, then as a decimal, grouped and ordered by key', () => {
    const pipeline = sumPipeline({ where: { env: 'live' }, groupBy: 'store_id', fields: ['gross', 'net'] });
    expect(pipeline).to.deep.equal([
      { $match: { env: 'live' } },
      {
        $group: {
          _id: '$store_id',
          count: { $sum: 1 },
          s0: { $sum: { $toDecimal: { $toLong: '$gross' } } },
          s1: { $sum: { $toDecimal: { $toLong: '$net' } } },
        },
      },
      { $sort: { _id: 1 } },
    ]);
    expect(sumPipeline({ fields: [] })[1]).to.deep.equal({ $group: { _id: null, count: { $sum: 1 } } });
  });

  it('turns decimal and long sums into exact bigints, past 2^64 too, and refuses fractions', () => {
    expect(toBigInt(Decimal128.fromString('123456789012345678901234567'))).to.equal(123456789012345678901234567n);
    expect(toBigInt(Long.fromString('9007199254740993'))).to.equal(9007199254740993n);
    expect(toBigInt(0)).to.equal(0n);
    expect(toBigInt(null)).to.equal(0n);
    expect(decimalStringToBigInt('-42.000')).to.equal(-42n);
    expect(decimalStringToBigInt('1.5E+3')).to.equal(1500n);
    expect(decimalStringToBigInt('120E-1')).to.equal(12n);
    expect(() => decimalStringToBigInt('12E-1')).to.throw(RangeError);
    expect(() => decimalStringToBigInt('0.5')).to.throw(RangeError);
    expect(() => toBigInt(1.5)).to.throw(RangeError);
  });

  it('stores what JSON would keep, plus a Date copy of expires_at for the TTL index', () => {
    const stored = toMongoDoc({ _id: 'k1', expires_at: '2026-03-01T00:00:00.000Z', gone: undefined, at: new Date(5) });
    expect(stored).to.deep.equal({
      _id: 'k1',
      expires_at: '2026-03-01T00:00:00.000Z',
      at: '1970-01-01T00:00:00.005Z',
      _expires: new Date('2026-03-01T00:00:00.000Z'),
    });
    expect(toMongoDoc({ _id: 'k2', expires_at: 1_700_000_000_000 })._expires).to.deep.equal(
      new Date(1_700_000_000_000),
    );
    expect(toMongoDoc({ _id: 'k3', expires_at: 'soon' })).to.not.have.property('_expires');
  });

  it('reads documents back exactly: no _expires, no BSON types', () => {
    const doc = fromMongoDoc({
      _id: 'k1',
      n: Long.fromNumber(42),
      nested: { big: Long.fromString('9007199254740991'), list: [Long.fromNumber(1), 'a', null] },
      _expires: new Date(0),
    });
    expect(doc).to.deep.equal({ _id: 'k1', n: 42, nested: { big: 9007199254740991, list: [1, 'a', null] } });
  });

  describe('keys: partner map keys survive BSON', () => {
    // Keys a partner may send in `attributes`: BSON refuses NUL in a key; `$…` and `a.b` are operators and paths to
    // MongoDB; the driver reads an object holding `_bsontype` as a BSON value. Built with JSON.parse, as a request
    // body is, so `__proto__` is an own key.
    const HOSTILE = [
      '$where',
      '$ref',
      '$id',
      '$db',
      'a.b',
      '.',
      'a\u0000b',
      '\u0000',
      '',
      '__proto__',
      '_bsontype',
      '%',
      '%24',
      '%2E',
      'x%2',
      '%%',
      '2024',
      'Memória RAM',
      'é.$',
    ];
    const text = JSON.stringify({
      _id: 'live:pt_1:sku',
      product: {
        attributes: Object.fromEntries(HOSTILE.map((k, i) => [k, `v${i}`])),
        variant_attributes: { $size: 'M' },
      },
      list: [{ 'a.b': { $gt: 1 } }],
      ['__proto__']: { polluted: 'no' },
    });
    const bsonRoundTrip = (doc: Record<string, unknown>) => BSON.deserialize(BSON.serialize(doc, { checkKeys: true }));

    it('without the encoding, BSON refuses such a document (the products projector threw, every read model stopped)', () => {
      expect(() => BSON.serialize({ attributes: { 'a\u0000b': 'x' } })).to.throw(/null bytes/);
      expect(() => BSON.serialize(JSON.parse(text) as Record<string, unknown>)).to.throw();
      expect(() => BSON.serialize({ attributes: JSON.parse('{"_bsontype":"ObjectId"}') as unknown })).to.throw();
      expect(() =>
        BSON.serialize(JSON.parse('{"a":{"$where":"1"}}') as Record<string, unknown>, { checkKeys: true }),
      ).to.throw(/must not start with/);
    });

    it('encoded keys pass BSON with checkKeys on (no NUL, no leading $, no dot) and read back exactly', () => {
      const stored = toMongoDoc(JSON.parse(text) as { _id: string });
      const back = fromMongoDoc(bsonRoundTrip(stored));
      expect(JSON.stringify(back)).to.equal(text);
      const attributes = (back.product as { attributes: object }).attributes;
      expect(Object.getPrototypeOf(attributes)).to.equal(Object.prototype);
      expect(Object.keys(attributes)).to.have.members(HOSTILE);
      expect(text).to.contain('"__proto__":{"polluted":"no"}');
      expect(Object.prototype.hasOwnProperty.call(back, '__proto__')).to.equal(true);
      expect((back as Record<string, unknown>).polluted).to.equal(undefined);
      expect(({} as Record<string, unknown>).polluted).to.equal(undefined);
    });

    it('every string key round-trips, and no encoded key is special to BSON or MongoDB (property)', () => {
      fc.assert(
        fc.property(
          fc.string({
            unit: fc.constantFrom(
              '$',
              '.',
              '%',
              '\u0000',
              '_',
              'b',
              's',
              'o',
              'n',
              't',
              'y',
              'p',
              'e',
              '2',
              'E',
              'F',
              '5',
              'é',
            ),
          }),
          fc.string(),
          (a, b) => {
            for (const key of [a, b, `_bsontype${a}`, '_bsontype']) {
              const encoded = encodeKey(key);
              expect(decodeKey(encoded)).to.equal(key);
              // eslint-disable-next-line no-control-regex -- NUL is one of the characters MongoDB refuses in a key
              expect(encoded).to.not.match(/^\$|[.\u0000]/);
              expect(encoded).to.not.equal('');
              expect(encoded).to.not.equal('_bsontype');
            }
            const doc = JSON.parse(JSON.stringify({ _id: 'x', m: { [a]: 1, [b]: { [a]: [a] } } })) as { _id: string };
            expect(JSON.stringify(fromMongoDoc(bsonRoundTrip(toMongoDoc(doc))))).to.equal(JSON.stringify(doc));
          },
        ),
        { seed: 12, numRuns: 500 },
      );
    });

    it("the service's own field names encode to themselves, so indexes, filters and sorts name them as they are", () => {
      for (const f of ['_id', 'partner_id', 'env', 'sku', 'base_state', 'cover_checked_at', 'expires_at', '_expires'])
        expect(encodeKey(f)).to.equal(f);
      expect(whereToFilter({ partner_id: 'p', 'a.b': 1, $where: { gt: 2 } })).to.deep.equal({
        partner_id: 'p',
        'a%2Eb': 1,
        '%24where': { $gt: 2 },
      });
      expect(toSort(sortKeys([{ field: 'sku', dir: 'desc' }]))).to.deep.equal([
        ['sku', -1],
        ['_id', 1],
      ]);
    });
  });
});
