/**
 * The behaviour every ReadStore adapter must show, written only against the port so that each adapter (SQLite,
 * MongoDB) runs it unchanged: `readStoreContract('sqlite', open)` inside a spec file.
 *
 * Ordering rules the suite relies on: null and a missing field sort alike, below every number, and numbers sort
 * below strings; strings compare by code point (the suite uses ASCII only). Range conditions stay within one type.
 */
import { expect } from 'chai';
import type { Doc, ReadStore, Scalar, SortKey } from '../../shared-schema/ports/read-store.js';
import { LEDGER, LEDGER_COLLECTIONS, csvLine, type MovementDoc } from '../../shared-schema/read-models/ledger.js';
import {
  balanceBefore,
  closingCsv,
  closingOf,
  closingSha256,
  countIn,
  movementKey,
  movementsIn,
} from '../../query-api/ledger.js';

export interface OpenedStore {
  store: ReadStore;
  cleanup: () => Promise<void>;
  /** What the engine itself holds, for the cases that check what the port cannot show (a dropped collection is gone). */
  inspect?: {
    /** Whether the engine has this collection (table), and how many secondary indexes it has (0 when missing). */
    collection(name: string): Promise<{ exists: boolean; indexes: number }>;
  };
}

export interface ContractOptions {
  /** Puts in the "big unit" case: 100 000 by default (the size a store's fan-out reached in production). */
  bigUnit?: number;
}

/** Deterministic pseudo-random numbers in [0, 1) (mulberry32), so a failure can be replayed. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function rank(v: unknown): number {
  return v === null || v === undefined ? 0 : typeof v === 'number' ? 1 : 2;
}

/** The port's order on one value: null/missing < numbers < strings. */
function compareValues(a: unknown, b: unknown): number {
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb || ra === 0) return ra - rb;
  if (ra === 1) return (a as number) - (b as number);
  return (a as string) < (b as string) ? -1 : (a as string) > (b as string) ? 1 : 0;
}

function sortInMemory(docs: readonly Doc[], orderBy: readonly SortKey[]): Doc[] {
  const keys = [...orderBy, { field: '_id', dir: 'asc' as const }];
  return [...docs].sort((x, y) => {
    for (const k of keys) {
      const c = compareValues(x[k.field], y[k.field]);
      if (c !== 0) return k.dir === 'desc' ? -c : c;
    }
    return 0;
  });
}

const ids = (docs: readonly Doc[]): string[] => docs.map((d) => d._id);
const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export function readStoreContract(name: string, open: () => Promise<OpenedStore>, options: ContractOptions = {}): void {
  describe(`ReadStore contract: ${name}`, function () {
    let opened: OpenedStore;
    let store: ReadStore;
    const run = `${Date.now().toString(36)}${Math.floor(Math.random() * 1e6).toString(36)}`;
    let seq = 0;
    /** A new, empty collection with these indexes, unique to this run. */
    async function collection(indexes: readonly (readonly string[])[] = []): Promise<string> {
      seq += 1;
      const c = `contract_${run}_${seq}`;
      await store.ensureCollections([{ name: c, indexes }]);
      return c;
    }
    async function putAll(c: string, docs: readonly Doc[]): Promise<void> {
      await store.transact(async (tx) => {
        for (const doc of docs) await tx.put(c, doc);
      });
    }

    before(async () => {
      opened = await open();
      store = opened.store;
    });
    after(async () => {
      await opened?.cleanup();
    });

    describe('documents', () => {
      it('round-trips nested JSON, and put replaces the whole document', async () => {
        const c = await collection();
        const doc = {
          _id: 'd1',
          name: 'Loja "Ação" ✓',
          amount_cents: 9_007_199_254_740_991,
          rate: -0.125,
          active: false,
          missing: null,
          nested: { list: [1, 'two', { three: [true, null] }], empty: {}, none: [] },
        };
        await putAll(c, [doc]);
        expect(await store.get(c, 'd1')).to.deep.equal(doc);
        expect(await store.get(c, 'nope')).to.equal(null);
        await putAll(c, [{ _id: 'd1', name: 'only' }]);
        expect(await store.get(c, 'd1')).to.deep.equal({ _id: 'd1', name: 'only' });
      });

      it('a put that changes indexed fields is found by the new values only; one that keeps them shows the new document', async () => {
        const c = await collection([['a', 'b'], ['b']]);
        await putAll(c, [
          { _id: 'x', a: 1, b: 'old', note: 'first' },
          { _id: 'y', a: 1, b: 'old' },
        ]);
        await putAll(c, [{ _id: 'x', a: 1, b: 'old', note: 'second' }]);
        expect(await store.find(c, { where: { a: 1, b: 'old' } })).to.deep.equal([
          { _id: 'x', a: 1, b: 'old', note: 'second' },
          { _id: 'y', a: 1, b: 'old' },
        ]);
        await putAll(c, [
          { _id: 'x', a: 2, b: 'new' },
          { _id: 'y', a: 1 },
        ]);
        expect(ids(await store.find(c, { where: { b: 'old' } }))).to.deep.equal([]);
        expect(ids(await store.find(c, { where: { a: 2, b: 'new' } }))).to.deep.equal(['x']);
        expect(ids(await store.find(c, { where: { a: 1, b: null } }))).to.deep.equal(['y']);
        expect(await store.count(c, { b: 'new' })).to.equal(1);
      });

      it('a unit that reads documents, then puts, deletes and puts them again, leaves them found by their last values', async () => {
        const c = await collection([['a'], ['b']]);
        await putAll(c, [
          { _id: 'x', a: 1, b: 'one' },
          { _id: 'y', a: 1, b: 'one' },
        ]);
        await store
          .transact(async (tx) => {
            await tx.get(c, 'x');
            await tx.put(c, { _id: 'x', a: 9, b: 'nine' });
            throw new Error('rolled back');
          })
          .catch(() => undefined);
        // Written between units, outside any unit.
        expect(await store.replaceIf(c, { _id: 'y', a: 2, b: 'two' }, { a: 1 })).to.equal(true);
        await store.transact(async (tx) => {
          expect(await tx.get(c, 'x')).to.deep.equal({ _id: 'x', a: 1, b: 'one' });
          await tx.put(c, { _id: 'x', a: 2, b: 'one', note: 'changed a' });
          await tx.put(c, { _id: 'x', a: 1, b: 'one', note: 'a back' });
          expect(await tx.get(c, 'y')).to.deep.equal({ _id: 'y', a: 2, b: 'two' });
          await tx.put(c, { _id: 'y', a: 2, b: 'one' });
          await tx.delete(c, 'y');
          await tx.put(c, { _id: 'y', a: 3, b: 'three' });
          expect(await tx.get(c, 'z')).to.equal(null);
          await tx.put(c, { _id: 'z', a: 4, b: 'four' });
          await tx.put(c, { _id: 'z', a: 5, b: 'four' });
        });
        expect(await store.find(c, { where: { a: 1 } })).to.deep.equal([{ _id: 'x', a: 1, b: 'one', note: 'a back' }]);
        expect(ids(await store.find(c, { where: { a: 2 } }))).to.deep.equal([]);
        expect(ids(await store.find(c, { where: { b: 'one' } }))).to.deep.equal(['x']);
        expect(ids(await store.find(c, { where: { a: 3, b: 'three' } }))).to.deep.equal(['y']);
        expect(ids(await store.find(c, { where: { a: 5, b: 'four' } }))).to.deep.equal(['z']);
        expect(await store.count(c, { a: 4 })).to.equal(0);
      });

      it('keys are data: "$where", "a.b", NUL, "", "__proto__", "_bsontype", "%24" round-trip exactly, at any depth', async () => {
        // Partner maps (product `attributes`) reach the store as keys. Built with JSON.parse so that `__proto__` is
        // an own key, as it is in a parsed request body.
        const hostile = [
          '$where',
          '$ref',
          '$id',
          'a.b',
          '.',
          'a\u0000b',
          '',
          '__proto__',
          '_bsontype',
          '%',
          '%24',
          '%2E',
          'x%',
          '\\',
          'Memória RAM',
          '2024',
        ];
        const map = Object.fromEntries(hostile.map((k, i) => [k, `v${i}`]));
        const text = JSON.stringify({
          _id: 'k1',
          kind: 'hostile',
          attributes: map,
          nested: { list: [map, { inner: map }], ['__proto__']: { $gt: 1 }, _bsontype: { a: 1 } },
        });
        expect(text).to.contain('"__proto__":{"$gt":1}');
        const doc = JSON.parse(text) as Doc;
        const c = await collection([['kind']]);
        await putAll(c, [doc]);
        const got = await store.get(c, 'k1');
        expect(JSON.stringify(got)).to.equal(text);
        const attributes = got!.attributes as Record<string, unknown>;
        expect(Object.getPrototypeOf(attributes)).to.equal(Object.prototype);
        expect(Object.keys(attributes)).to.have.members(hostile);
        expect(Object.prototype.hasOwnProperty.call(attributes, '__proto__')).to.equal(true);
        expect(
          JSON.stringify(await store.find(c, { where: { kind: 'hostile' }, orderBy: [{ field: 'kind' }] })),
        ).to.equal(`[${text}]`);
        await store.transact(async (tx) => {
          expect(JSON.stringify(await tx.get(c, 'k1'))).to.equal(text);
        });
        expect(await store.insertIfAbsent(c, JSON.parse(text.replace('"k1"', '"k2"')) as Doc)).to.equal(true);
        expect(JSON.stringify(await store.get(c, 'k2'))).to.equal(text.replace('"k1"', '"k2"'));
        expect(await store.replaceIf(c, doc, { kind: 'hostile' })).to.equal(true);
        expect(JSON.stringify(await store.get(c, 'k1'))).to.equal(text);
      });

      it('declaring the same collections again keeps their documents', async () => {
        const c = await collection([['a']]);
        await putAll(c, [{ _id: 'x', a: 1 }]);
        await store.ensureCollections([{ name: c, indexes: [['a'], ['a', 'b']] }]);
        expect(await store.get(c, 'x')).to.deep.equal({ _id: 'x', a: 1 });
      });
    });

    describe('find conditions', () => {
      let c: string;
      const docs: Doc[] = [
        { _id: 'a', n: 1, s: 'apple', flag: true, opt: 'x', v: 5 },
        { _id: 'b', n: 2, s: 'banana', flag: false, opt: null, v: 'five' },
        { _id: 'c', n: 3, s: 'cherry', flag: true, v: 50 },
        { _id: 'd', n: 4, s: 'date', flag: false, opt: 'y', v: '' },
        { _id: 'e', n: 5.5, s: 'elder', flag: true, opt: 'x' },
      ];
      const where = async (w: Parameters<ReadStore['find']>[1]): Promise<string[]> => ids(await store.find(c, w));
      before(async () => {
        c = await collection([['n'], ['s'], ['opt', 'n']]);
        await putAll(c, docs);
      });

      it('without a query returns every document in _id order', async () => {
        expect(await where({})).to.deep.equal(['a', 'b', 'c', 'd', 'e']);
      });
      it('equality on numbers, strings and booleans', async () => {
        expect(await where({ where: { n: 3 } })).to.deep.equal(['c']);
        expect(await where({ where: { s: 'date' } })).to.deep.equal(['d']);
        expect(await where({ where: { flag: true } })).to.deep.equal(['a', 'c', 'e']);
        expect(await where({ where: { flag: false } })).to.deep.equal(['b', 'd']);
        expect(await where({ where: { _id: 'b' } })).to.deep.equal(['b']);
      });
      it('equality with null matches null and missing fields', async () => {
        expect(await where({ where: { opt: null } })).to.deep.equal(['b', 'c']);
      });
      it('gt, gte, lt, lte on numbers and strings, alone and together', async () => {
        expect(await where({ where: { n: { gt: 3 } } })).to.deep.equal(['d', 'e']);
        expect(await where({ where: { n: { gte: 3 } } })).to.deep.equal(['c', 'd', 'e']);
        expect(await where({ where: { n: { lt: 2 } } })).to.deep.equal(['a']);
        expect(await where({ where: { n: { lte: 2 } } })).to.deep.equal(['a', 'b']);
        expect(await where({ where: { n: { gt: 1, lte: 4 } } })).to.deep.equal(['b', 'c', 'd']);
        expect(await where({ where: { n: { gt: 5 } } })).to.deep.equal(['e']);
        expect(await where({ where: { s: { gte: 'banana', lt: 'date' } } })).to.deep.equal(['b', 'c']);
        expect(await where({ where: { s: { gt: 'c' } } })).to.deep.equal(['c', 'd', 'e']);
      });
      it('a range stays within its type: numbers never match string bounds and vice versa', async () => {
        expect(await where({ where: { v: { gt: 0 } } })).to.deep.equal(['a', 'c']);
        expect(await where({ where: { v: { lt: 10 } } })).to.deep.equal(['a']);
        expect(await where({ where: { v: { gte: '' } } })).to.deep.equal(['b', 'd']);
        expect(await where({ where: { v: { lt: 'zzz' } } })).to.deep.equal(['b', 'd']);
      });
      it('in, with and without null, and empty', async () => {
        expect(await where({ where: { n: { in: [1, 4, 99] } } })).to.deep.equal(['a', 'd']);
        expect(await where({ where: { opt: { in: ['y', null] } } })).to.deep.equal(['b', 'c', 'd']);
        expect(await where({ where: { s: { in: [] } } })).to.deep.equal([]);
      });
      it('in, with a long list (on _id, indexed and other fields, with null, a limit, in order)', async () => {
        const others = Array.from({ length: 300 }, (_, i) => `none-${i}`);
        expect(await where({ where: { _id: { in: [...others, 'e', 'b', 'c'] } } })).to.deep.equal(['b', 'c', 'e']);
        expect(await where({ where: { s: { in: ['date', ...others, 'apple'] } } })).to.deep.equal(['a', 'd']);
        expect(await where({ where: { opt: { in: [...others, 'y', null] } } })).to.deep.equal(['b', 'c', 'd']);
        expect(await where({ where: { v: { in: [...others, 'five', ''] } } })).to.deep.equal(['b', 'd']);
        expect(await where({ where: { _id: { in: [...others, 'e', 'b', 'c'] }, n: { gt: 2 } } })).to.deep.equal([
          'c',
          'e',
        ]);
        expect(await where({ where: { _id: { in: [...others, 'e', 'b', 'c'] } }, limit: 2 })).to.deep.equal(['b', 'c']);
        expect(
          await where({ where: { _id: { in: [...others, 'a', 'b', 'c'] } }, orderBy: [{ field: 'n', dir: 'desc' }] }),
        ).to.deep.equal(['c', 'b', 'a']);
        // A number of the list never matches a string of the same digits, nor the other way round.
        expect(await where({ where: { v: { in: [...others, '5', '50'] } } })).to.deep.equal([]);
      });
      it('ne matches documents where the field is missing or null, ne null only present values', async () => {
        expect(await where({ where: { opt: { ne: 'x' } } })).to.deep.equal(['b', 'c', 'd']);
        expect(await where({ where: { opt: { ne: null } } })).to.deep.equal(['a', 'd', 'e']);
        expect(await where({ where: { flag: { ne: true } } })).to.deep.equal(['b', 'd']);
      });
      it('conditions on several fields all apply, and limit cuts the result', async () => {
        expect(await where({ where: { opt: 'x', n: { lt: 5 } } })).to.deep.equal(['a']);
        expect(await where({ where: { flag: true }, limit: 2 })).to.deep.equal(['a', 'c']);
        expect(await where({ where: { flag: true }, limit: 0 })).to.deep.equal([]);
      });
    });

    describe('order and keyset pagination', () => {
      it('orders by mixed directions with _id ascending as the last tie-breaker', async () => {
        const c = await collection([['g', 'n']]);
        await putAll(c, [
          { _id: 'r5', g: 'b', n: 1 },
          { _id: 'r2', g: 'a', n: 1 },
          { _id: 'r4', g: 'a', n: 2 },
          { _id: 'r1', g: 'a', n: 2 },
          { _id: 'r3', g: 'b', n: 3 },
          { _id: 'r6', g: 'a', n: 2 },
        ]);
        const found = await store.find(c, {
          orderBy: [
            { field: 'g', dir: 'asc' },
            { field: 'n', dir: 'desc' },
          ],
        });
        expect(ids(found)).to.deep.equal(['r1', 'r4', 'r6', 'r2', 'r3', 'r5']);
        const reversed = await store.find(c, { orderBy: [{ field: 'g', dir: 'desc' }, { field: 'n' }] });
        expect(ids(reversed)).to.deep.equal(['r5', 'r3', 'r2', 'r1', 'r4', 'r6']);
      });

      it('pages visit every row exactly once, in sort order, for mixed directions and nulls', async () => {
        const c = await collection([['a', 'b'], ['b', 'a'], ['c'], ['k', 'a']]);
        const rnd = random(20240611);
        const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)];
        const docs: Doc[] = [];
        for (let i = 0; i < 300; i++) {
          const doc: Doc = { _id: `id${Math.floor(rnd() * 1e9).toString(36)}_${i}`, k: pick(['p', 'q']) };
          const a = pick([0, 1, 2, 3, -1.5, null, undefined]);
          const b = pick(['x', 'y', 'z', 'xy', null, undefined]);
          if (a !== undefined) doc.a = a;
          if (b !== undefined) doc.b = b;
          doc.c = Math.floor(rnd() * 40) - 20;
          docs.push(doc);
        }
        await putAll(c, docs);
        const orders: { orderBy: SortKey[]; where?: Record<string, Scalar> }[] = [
          { orderBy: [] },
          {
            orderBy: [
              { field: 'a', dir: 'asc' },
              { field: 'b', dir: 'desc' },
            ],
          },
          {
            orderBy: [
              { field: 'a', dir: 'desc' },
              { field: 'b', dir: 'asc' },
            ],
          },
          {
            orderBy: [
              { field: 'b', dir: 'desc' },
              { field: 'a', dir: 'desc' },
            ],
          },
          {
            orderBy: [
              { field: 'b', dir: 'asc' },
              { field: 'c', dir: 'desc' },
            ],
          },
          { orderBy: [{ field: 'c', dir: 'desc' }] },
          { orderBy: [{ field: 'a', dir: 'desc' }], where: { k: 'p' } },
        ];
        for (const { orderBy, where } of orders) {
          const expected = ids(sortInMemory(where ? docs.filter((d) => d.k === where.k) : docs, orderBy));
          for (let round = 0; round < 3; round++) {
            const seen: string[] = [];
            let after: Scalar[] | undefined;
            for (let pages = 0; pages <= docs.length; pages++) {
              const limit = 1 + Math.floor(rnd() * 40);
              const page = await store.find(c, { where, orderBy, after, limit });
              seen.push(...ids(page));
              if (page.length < limit) break;
              const last = page[page.length - 1];
              after = [...orderBy.map((k) => (last[k.field] ?? null) as Scalar), last._id];
            }
            expect(seen, JSON.stringify(orderBy)).to.deep.equal(expected);
          }
        }
      });

      it('follows a feed by two numbers from a start before every row ([0, 0, ""]), with equality filters', async () => {
        // The shape of the notifications feed (GET /v1/events): (position, seq) under (partner_id, env[, type]).
        const c = await collection([
          ['partner_id', 'env', 'position', 'seq'],
          ['partner_id', 'env', 'type', 'position', 'seq'],
        ]);
        const docs: Doc[] = [];
        for (const position of [7, 3, 1024, 99, 5_000_000_000]) {
          for (let seq = 0; seq < (position === 99 ? 12 : 1); seq++) {
            for (const [partner_id, env] of [
              ['p1', 'live'],
              ['p1', 'test'],
              ['p2', 'live'],
            ]) {
              const type = seq % 3 === 1 ? 'b' : 'a';
              docs.push({ _id: `${env}:${partner_id}:n_${position}_${seq}`, partner_id, env, type, position, seq });
            }
          }
        }
        await putAll(c, docs);
        const wheres: Record<string, string>[] = [
          { partner_id: 'p1', env: 'live' },
          { partner_id: 'p1', env: 'live', type: 'b' },
        ];
        for (const where of wheres) {
          const expected = ids(
            sortInMemory(
              docs.filter((d) => Object.entries(where).every(([k, v]) => d[k] === v)),
              [{ field: 'position' }, { field: 'seq' }],
            ),
          );
          const seen: string[] = [];
          let after: Scalar[] = [0, 0, ''];
          for (let pages = 0; pages <= docs.length; pages++) {
            const page = await store.find(c, {
              where,
              orderBy: [{ field: 'position' }, { field: 'seq' }],
              after,
              limit: 5,
            });
            seen.push(...ids(page));
            const last = page[page.length - 1];
            if (!last) break;
            after = [last.position as number, last.seq as number, last._id];
          }
          expect(seen, JSON.stringify(where)).to.deep.equal(expected);
          expect(seen.length).to.be.above(0);
        }
      });
    });

    describe('comparison values are scalars', () => {
      // What a caller's types rule out may still arrive at run time (a decoded cursor, a parsed body): the store
      // refuses it before querying, so an object never reaches the engine as a value (to MongoDB it is an operator).
      const operators: unknown[] = [
        { $ne: null },
        { $regex: '.*' },
        { $gt: '' },
        ['a'],
        { toString: 'x' },
        new Date(0),
      ];
      let c: string;
      before(async () => {
        c = await collection([['s']]);
        await putAll(c, [
          { _id: 'a', s: 'x' },
          { _id: 'b', s: 'y' },
        ]);
      });
      const refused = async (what: string, run: () => Promise<unknown>): Promise<void> => {
        let error: unknown;
        try {
          await run();
        } catch (err) {
          error = err;
        }
        expect(error, what).to.be.instanceOf(TypeError);
      };
      /** A value the port's types exclude, as it would come from outside them. */
      const raw = <T>(value: unknown): T => value as T;

      it('find refuses an object or array as an equality value, a range bound, an in element, ne, or an after value', async () => {
        for (const v of operators) {
          const tag = JSON.stringify(v);
          await refused(`where ${tag}`, () => store.find(c, { where: { s: raw<Scalar>(v) } }));
          await refused(`gt ${tag}`, () => store.find(c, { where: { s: { gt: raw<Scalar>(v) } } }));
          await refused(`in ${tag}`, () => store.find(c, { where: { s: { in: [raw<Scalar>(v)] } } }));
          await refused(`ne ${tag}`, () => store.find(c, { where: { s: { ne: raw<Scalar>(v) } } }));
          await refused(`after[0] ${tag}`, () =>
            store.find(c, { orderBy: [{ field: 's' }], after: [raw<Scalar>(v), 'a'] }),
          );
          await refused(`after[1] ${tag}`, () =>
            store.find(c, { orderBy: [{ field: 's' }], after: ['x', raw<Scalar>(v)] }),
          );
        }
      });
      it('refuses an unknown operator in a condition instead of ignoring it', async () => {
        await refused('$ne', () => store.find(c, { where: { s: raw<Scalar>({ $ne: 'x' }) } }));
        await refused('regex', () => store.find(c, { where: { s: raw<Scalar>({ regex: '.*' }) } }));
        await refused('count', () => store.count(c, { s: raw<Scalar>({ $ne: null }) }));
        await refused('sum', () => store.sum(c, { where: { s: raw<Scalar>({ $ne: null }) }, fields: [] }));
      });
      it('replaceIf refuses an object as a match value and replaces nothing', async () => {
        await refused('match', () => store.replaceIf(c, { _id: 'a', s: 'z' }, { s: raw<Scalar>({ $ne: null }) }));
        expect(await store.get(c, 'a')).to.deep.equal({ _id: 'a', s: 'x' });
      });
      it('scalar values still match as before', async () => {
        expect(ids(await store.find(c, { where: { s: { in: ['x', 'q'] } } }))).to.deep.equal(['a']);
        expect(ids(await store.find(c, { orderBy: [{ field: 's' }], after: ['x', 'a'] }))).to.deep.equal(['b']);
      });
    });

    describe('count and sum', () => {
      const big = 2 ** 52;
      const rows: Doc[] = [
        { _id: 'o1', store: 's1', paid: true, amount: big + 1, fee: 10 },
        { _id: 'o2', store: 's1', paid: true, amount: big + 3, fee: 20 },
        { _id: 'o3', store: 's2', paid: true, amount: big + 5, fee: -7 },
        { _id: 'o4', store: 's2', paid: false, amount: big + 7, fee: 1 },
        { _id: 'o5', store: 's3', paid: true, amount: 11, fee: 0 },
        { _id: 'o6', paid: true, amount: 2, fee: 2 },
      ];
      const total = (docs: Doc[], f: string): bigint => docs.reduce((s, d) => s + BigInt(d[f] as number), 0n);
      let c: string;
      before(async () => {
        c = await collection([['store', 'paid'], ['paid']]);
        await putAll(c, rows);
      });

      it('counts all documents or those matching a condition', async () => {
        expect(await store.count(c)).to.equal(6);
        expect(await store.count(c, { paid: true })).to.equal(5);
        expect(await store.count(c, { store: 's2', paid: true })).to.equal(1);
        expect(await store.count(c, { store: 'none' })).to.equal(0);
      });

      it('sums exactly past 2^53, ungrouped, with a where', async () => {
        const paid = rows.filter((r) => r.paid);
        const [all] = await store.sum(c, { where: { paid: true }, fields: ['amount', 'fee'] });
        expect(all).to.deep.equal({
          key: null,
          count: 5,
          sums: { amount: total(paid, 'amount'), fee: total(paid, 'fee') },
        });
        expect(all.sums.amount > BigInt(Number.MAX_SAFE_INTEGER)).to.equal(true);
      });

      it('sums exactly per group, with a count per group (missing group field is the null group)', async () => {
        const groups = await store.sum(c, { groupBy: 'store', fields: ['amount'] });
        const byKey = [...groups].sort((x, y) => compareValues(x.key, y.key));
        const expected = [null, 's1', 's2', 's3'].map((key) => {
          const members = rows.filter((r) => (r.store ?? null) === key);
          return { key, count: members.length, sums: { amount: total(members, 'amount') } };
        });
        expect(byKey).to.deep.equal(expected);
      });

      it('groups by an indexed field keeping its values as stored: booleans stay booleans, numbers numbers', async () => {
        const byPaid = await store.sum(c, { groupBy: 'paid', fields: ['fee'] });
        expect(byPaid.map((g) => [g.key, g.count, g.sums.fee])).to.deep.equal([
          [false, 1, 1n],
          [true, 5, 25n],
        ]);
        const mixed = await collection([['v']]);
        await putAll(mixed, [{ _id: 'a', v: 1 }, { _id: 'b', v: 'x' }, { _id: 'c', v: 1 }, { _id: 'd' }]);
        const groups = await store.sum(mixed, { groupBy: 'v', fields: [] });
        expect([...groups].sort((x, y) => compareValues(x.key, y.key)).map((g) => [g.key, g.count])).to.deep.equal([
          [null, 1],
          [1, 2],
          ['x', 1],
        ]);
      });

      it('an empty ungrouped sum is one row of zeros (an empty collection, a where matching nothing, inside a unit)', async () => {
        // SQL answers one row for an aggregate without GROUP BY; MongoDB's $group with _id null answers none: the
        // MongoDB adapter must add the row.
        const empty = await collection([['store']]);
        const zeros = [{ key: null, count: 0, sums: { amount: 0n, fee: 0n } }];
        expect(await store.sum(empty, { fields: ['amount', 'fee'] })).to.deep.equal(zeros);
        expect(await store.sum(empty, { where: { store: 's1' }, fields: ['amount', 'fee'] })).to.deep.equal(zeros);
        expect(await store.sum(c, { where: { store: 'none' }, fields: ['amount', 'fee'] })).to.deep.equal(zeros);
        expect(await store.sum(empty, { fields: [] })).to.deep.equal([{ key: null, count: 0, sums: {} }]);
        await store.transact(async (tx) => {
          expect(await tx.sum(empty, { fields: ['amount', 'fee'] })).to.deep.equal(zeros);
          expect(await tx.sum(empty, { groupBy: 'store', fields: ['amount'] })).to.deep.equal([]);
        });
        expect(await store.sum(empty, { groupBy: 'store', fields: ['amount'] })).to.deep.equal([]);
      });

      it('ungrouped sum over no documents is one row of zeros', async () => {
        expect(await store.sum(c, { where: { store: 'none' }, fields: ['amount'] })).to.deep.equal([
          { key: null, count: 0, sums: { amount: 0n } },
        ]);
        expect(await store.sum(c, { where: { store: 'none' }, groupBy: 'store', fields: ['amount'] })).to.deep.equal(
          [],
        );
      });
    });

    describe('units of work', () => {
      it('commits every write of a unit together and returns its result', async () => {
        const c = await collection();
        const result = await store.transact(async (tx) => {
          await tx.put(c, { _id: 'a', v: 1 });
          await tx.put(c, { _id: 'b', v: 2 });
          await tx.delete(c, 'b');
          await tx.setCheckpoint(`${c}_cp`, 42);
          return 'done';
        });
        expect(result).to.equal('done');
        expect(ids(await store.find(c))).to.deep.equal(['a']);
        expect(await store.getCheckpoint(`${c}_cp`)).to.equal(42);
      });

      it('writes nothing when the work throws, rethrows the error, and leaves the checkpoint', async () => {
        const c = await collection();
        await store.transact(async (tx) => {
          await tx.put(c, { _id: 'keep', v: 1 });
          await tx.setCheckpoint(`${c}_cp`, 7);
        });
        const failure = new Error('projector failed');
        let caught: unknown;
        try {
          await store.transact(async (tx) => {
            await tx.put(c, { _id: 'new', v: 2 });
            await tx.put(c, { _id: 'keep', v: 99 });
            await tx.delete(c, 'keep');
            await tx.setCheckpoint(`${c}_cp`, 8);
            await tick();
            throw failure;
          });
        } catch (err) {
          caught = err;
        }
        expect(caught).to.equal(failure);
        expect(await store.find(c)).to.deep.equal([{ _id: 'keep', v: 1 }]);
        expect(await store.getCheckpoint(`${c}_cp`)).to.equal(7);
        await store.transact(async (tx) => tx.put(c, { _id: 'after', v: 3 }));
        expect(await store.count(c)).to.equal(2);
      });

      it('reads inside a unit see its own writes; reads outside see them only after commit', async () => {
        const c = await collection([['v']]);
        await putAll(c, [{ _id: 'old', v: 1 }]);
        await store.transact(async (tx) => {
          await tx.put(c, { _id: 'new', v: 2 });
          await tx.put(c, { _id: 'old', v: 5 });
          expect(await tx.get(c, 'new')).to.deep.equal({ _id: 'new', v: 2 });
          expect(ids(await tx.find(c, { where: { v: { gte: 2 } } }))).to.deep.equal(['new', 'old']);
          expect(await tx.count(c)).to.equal(2);
          expect((await tx.sum(c, { fields: ['v'] }))[0].sums.v).to.equal(7n);
          expect(await store.get(c, 'new')).to.equal(null);
          expect(await store.get(c, 'old')).to.deep.equal({ _id: 'old', v: 1 });
          expect(await store.count(c)).to.equal(1);
        });
        expect(await store.get(c, 'new')).to.deep.equal({ _id: 'new', v: 2 });
        expect(await store.get(c, 'old')).to.deep.equal({ _id: 'old', v: 5 });
      });

      it('runs concurrent units one at a time, without interleaving', async () => {
        const c = await collection();
        await putAll(c, [{ _id: 'counter', n: 0 }]);
        const log: string[] = [];
        const unit = (name: string) =>
          store.transact(async (tx) => {
            log.push(`${name}:start`);
            const current = (await tx.get(c, 'counter')) as { _id: string; n: number };
            await tick();
            await tick();
            await tx.put(c, { _id: 'counter', n: current.n + 1 });
            log.push(`${name}:end`);
          });
        await Promise.all(['u1', 'u2', 'u3', 'u4'].map(unit));
        expect(await store.get(c, 'counter')).to.deep.equal({ _id: 'counter', n: 4 });
        for (let i = 0; i < log.length; i += 2) {
          expect(log[i].replace(':start', ''), log.join(' ')).to.equal(log[i + 1].replace(':end', ''));
        }
      });

      it(`a unit of ${(options.bigUnit ?? 100_000).toLocaleString('en')} puts commits, with its checkpoint, all or nothing`, async function () {
        // Projectors page their fan-outs, but a unit this big must still commit: a MongoDB transaction past its limits
        // aborts, and a unit that can never commit stops its projector for good.
        this.timeout(120_000);
        const size = options.bigUnit ?? 100_000;
        const c = await collection([['g']]);
        const cp = `${c}_cp`;
        await store.transact(async (tx) => {
          for (let i = 0; i < size; i++)
            await tx.put(c, { _id: `d${String(i).padStart(6, '0')}`, g: i % 10, v: i, name: `product ${i}` });
          expect(await tx.count(c)).to.equal(size);
          await tx.put(c, { _id: 'd000000', g: 0, v: 0, name: 'rewritten' });
          await tx.delete(c, 'd000001');
          await tx.setCheckpoint(cp, size);
        });
        expect(await store.count(c)).to.equal(size - 1);
        expect(await store.count(c, { g: 3 })).to.equal(size / 10);
        expect(await store.get(c, 'd000000')).to.deep.equal({ _id: 'd000000', g: 0, v: 0, name: 'rewritten' });
        expect(await store.get(c, 'd000001')).to.equal(null);
        const [row] = await store.sum(c, { fields: ['v'] });
        expect(row.sums.v).to.equal(BigInt((size * (size - 1)) / 2 - 1));
        expect(await store.getCheckpoint(cp)).to.equal(size);
        const failure = new Error('fails after the last put');
        let caught: unknown;
        try {
          await store.transact(async (tx) => {
            for (let i = 0; i < size; i++) await tx.put(c, { _id: `e${i}`, g: 99 });
            await tx.setCheckpoint(cp, size + 1);
            throw failure;
          });
        } catch (err) {
          caught = err;
        }
        expect(caught).to.equal(failure);
        expect(await store.count(c, { g: 99 })).to.equal(0);
        expect(await store.getCheckpoint(cp)).to.equal(size);
      });

      it('a checkpoint is 0 until saved, then the last saved value', async () => {
        const cp = `cp_${run}_${++seq}`;
        expect(await store.getCheckpoint(cp)).to.equal(0);
        await store.transact((tx) => tx.setCheckpoint(cp, 1234));
        expect(await store.getCheckpoint(cp)).to.equal(1234);
        await store.transact((tx) => tx.setCheckpoint(cp, 1300));
        expect(await store.getCheckpoint(cp)).to.equal(1300);
      });

      it('a unit that sets many checkpoints, some twice, saves the last value of each, or none when it fails', async () => {
        const names = Array.from({ length: 1203 }, (_, i) => `cp_${run}_${++seq}_${i}`);
        await store.transact(async (tx) => {
          for (const [i, name] of names.entries()) await tx.setCheckpoint(name, i);
          for (const name of names.slice(0, 3)) await tx.setCheckpoint(name, 5000);
        });
        const saved = await Promise.all(names.map((name) => store.getCheckpoint(name)));
        expect(saved).to.deep.equal(names.map((_, i) => (i < 3 ? 5000 : i)));
        const failure = new Error('fails after its checkpoints');
        let caught: unknown;
        try {
          await store.transact(async (tx) => {
            for (const name of names) await tx.setCheckpoint(name, 9999);
            throw failure;
          });
        } catch (err) {
          caught = err;
        }
        expect(caught).to.equal(failure);
        expect(await Promise.all(names.map((name) => store.getCheckpoint(name)))).to.deep.equal(saved);
        await store.transact((tx) => tx.setCheckpoint(names[10], 11));
        expect(await store.getCheckpoint(names[10])).to.equal(11);
        expect(await store.getCheckpoint(names[11])).to.equal(11);
      });
    });

    describe('single writes', () => {
      it('insertIfAbsent inserts once, then refuses and keeps the first document', async () => {
        const c = await collection();
        expect(await store.insertIfAbsent(c, { _id: 'k', v: 1 })).to.equal(true);
        expect(await store.insertIfAbsent(c, { _id: 'k', v: 2 })).to.equal(false);
        expect(await store.get(c, 'k')).to.deep.equal({ _id: 'k', v: 1 });
      });

      it('insertIfAbsent lets exactly one of many concurrent callers win', async () => {
        const c = await collection();
        const results = await Promise.all([1, 2, 3, 4, 5].map((v) => store.insertIfAbsent(c, { _id: 'r', v })));
        expect(results.filter(Boolean)).to.have.length(1);
      });

      it('replaceIf replaces only when the current fields equal the match', async () => {
        const c = await collection();
        await putAll(c, [{ _id: 'j', state: 'queued', version: 1, note: 'n' }]);
        expect(
          await store.replaceIf(c, { _id: 'j', state: 'running', version: 2 }, { state: 'queued', version: 1 }),
        ).to.equal(true);
        expect(await store.get(c, 'j')).to.deep.equal({ _id: 'j', state: 'running', version: 2 });
        expect(
          await store.replaceIf(c, { _id: 'j', state: 'done', version: 3 }, { state: 'queued', version: 1 }),
        ).to.equal(false);
        expect(
          await store.replaceIf(c, { _id: 'j', state: 'done', version: 3 }, { state: 'running', version: 1 }),
        ).to.equal(false);
        expect(await store.replaceIf(c, { _id: 'j', state: 'done' }, { note: null })).to.equal(true);
        expect(await store.get(c, 'j')).to.deep.equal({ _id: 'j', state: 'done' });
        expect(await store.replaceIf(c, { _id: 'ghost', v: 1 }, {})).to.equal(false);
        expect(await store.get(c, 'ghost')).to.equal(null);
      });

      it('remove deletes one document (and a missing one quietly)', async () => {
        const c = await collection();
        await putAll(c, [{ _id: 'a' }, { _id: 'b' }]);
        await store.remove(c, 'a');
        await store.remove(c, 'zzz');
        expect(ids(await store.find(c))).to.deep.equal(['b']);
      });

      it('drop removes one collection with its indexes, leaves others; ensureCollections declares it again, empty and indexed', async () => {
        const c = await collection([['v'], ['w', 'v']]);
        const other = await collection([['v']]);
        await putAll(c, [
          { _id: 'a', v: 1 },
          { _id: 'b', v: 2 },
        ]);
        await putAll(other, [{ _id: 'a', v: 1 }]);
        const inspect = opened.inspect;
        if (inspect) expect(await inspect.collection(c)).to.deep.equal({ exists: true, indexes: 2 });
        await store.drop(c);
        // Old generations of a rebuilt projection are dropped: nothing of them may be left behind.
        if (inspect) expect(await inspect.collection(c)).to.deep.equal({ exists: false, indexes: 0 });
        expect(await store.count(other)).to.equal(1);
        if (inspect) expect(await inspect.collection(other)).to.deep.equal({ exists: true, indexes: 1 });
        await store.drop(c); // a missing collection is dropped quietly
        await store.ensureCollections([{ name: c, indexes: [['v'], ['w', 'v']] }]);
        if (inspect) expect(await inspect.collection(c)).to.deep.equal({ exists: true, indexes: 2 });
        expect(await store.count(c)).to.equal(0);
        await putAll(c, [{ _id: 'c', v: 3 }]);
        expect(ids(await store.find(c, { where: { v: 3 } }))).to.deep.equal(['c']);
        expect(ids(await store.find(c))).to.deep.equal(['c']);
      });
      it('ensureCollections drops an index no longer declared and keeps answering from the ones that are', async () => {
        const c = await collection([['v'], ['w', 'v']]);
        await putAll(c, [
          { _id: 'a', v: 1, w: 'x' },
          { _id: 'b', v: 2, w: 'x' },
        ]);
        const inspect = opened.inspect;
        if (inspect) expect(await inspect.collection(c)).to.deep.equal({ exists: true, indexes: 2 });
        // The collection declared again as a later version of its reader shapes it: one index gone, one new.
        await store.ensureCollections([
          {
            name: c,
            indexes: [
              ['w', 'v'],
              ['v', '_id', 'w'],
            ],
          },
        ]);
        if (inspect) expect(await inspect.collection(c)).to.deep.equal({ exists: true, indexes: 2 });
        await store.ensureCollections([{ name: c, indexes: [['w', 'v']] }]);
        if (inspect) expect(await inspect.collection(c)).to.deep.equal({ exists: true, indexes: 1 });
        expect(ids(await store.find(c, { where: { v: 2 } }))).to.deep.equal(['b']);
        expect(ids(await store.find(c, { where: { w: 'x' }, orderBy: [{ field: 'v', dir: 'desc' }] }))).to.deep.equal([
          'b',
          'a',
        ]);
      });
    });
    describe('projections (`fields`)', () => {
      const docs: Doc[] = [
        { _id: 'a', g: 1, line: 'x,"y"\r\n', n: 3, note: 'a', nested: { k: 1 } },
        { _id: 'b', g: 1, line: null, n: -0.5, note: 'b' },
        { _id: 'c', g: 1, n: 9_007_199_254_740_991, note: 'c' }, // no `line`
        { _id: 'd', g: 2, line: 'other', n: 0, note: 'd' },
      ];
      /** What a projection must answer: `_id` and the fields, a missing one as null. */
      const projected = (d: Doc, fields: readonly string[]): Doc => {
        const out: Doc = { _id: d._id };
        for (const f of fields) out[f] = d[f] ?? null;
        return out;
      };
      // The same answers whether the projected field is in the document only or also declared `projected`
      // (SQLite: a column of its own).
      for (const declared of [false, true])
        it(`reads \`_id\` and the named fields only, a missing one as null, with where, order, keyset and limit${declared ? ' (field declared `projected`)' : ''}`, async () => {
          seq += 1;
          const c = `contract_${run}_${seq}`;
          await store.ensureCollections([
            { name: c, indexes: [['g', 'n']], ...(declared ? { projected: ['line'] } : {}) },
          ]);
          await putAll(c, docs);
          const fields = ['line', 'n'];
          const orderBy = [{ field: 'n', dir: 'desc' as const }];
          const where = { g: 1 };
          const all = await store.find(c, { where, orderBy, fields });
          expect(all).to.deep.equal(
            sortInMemory(
              docs.filter((d) => d.g === 1),
              orderBy,
            ).map((d) => projected(d, fields)),
          );
          const first = await store.find(c, { where, orderBy, fields, limit: 2 });
          expect(first).to.deep.equal(all.slice(0, 2));
          const rest = await store.find(c, { where, orderBy, fields, after: [first[1].n as number, first[1]._id] });
          expect(rest).to.deep.equal(all.slice(2));
          expect(await store.find(c, { where: { g: 2 }, fields: [] })).to.deep.equal([{ _id: 'd' }]);
          expect(await store.find(c, { where: { g: 2 }, fields: ['note', 'line'] })).to.deep.equal([
            { _id: 'd', note: 'd', line: 'other' },
          ]);
          // Inside a unit, the unit's own writes are read the same way.
          await store.transact(async (tx) => {
            await tx.put(c, { _id: 'e', g: 2, line: 'new', n: 1 });
            expect(await tx.find(c, { where: { g: 2 }, orderBy: [{ field: 'n' }], fields: ['line'] })).to.deep.equal([
              { _id: 'd', line: 'other' },
              { _id: 'e', line: 'new' },
            ]);
          });
        });

      it('refuses a field that is not a plain identifier', async () => {
        const c = await collection();
        await putAll(c, [{ _id: 'a', x: 1 }]);
        for (const bad of ['a.b', '$where', '', 'A b']) {
          let error: unknown;
          try {
            await store.find(c, { fields: [bad] });
          } catch (err) {
            error = err;
          }
          expect(error, bad).to.be.instanceOf(Error);
        }
      });
    });
    describe("the movements read model's reads (statement and closings)", () => {
      const tenant = { partnerId: `pt_contract_${run}`, env: 'test' as const };
      const at = (minute: number) => new Date(Date.UTC(2026, 9, 31, 23, minute)).toISOString();
      /** Five movements across stores, two at the same instant (recording order decides), one of another env. */
      const movement = (n: number, storeId: string, minute: number, env: 'test' | 'live' = 'test'): MovementDoc => ({
        _id: `${env}:${tenant.partnerId}:m:ev-${n}`,
        partner_id: tenant.partnerId,
        env,
        position: n * 10,
        event_id: `ev-${n}`,
        store_id: storeId,
        order_id: `o-${n}`,
        type: 'paid',
        occurred_at: at(minute),
        recorded_at: at(minute),
        net_delta: String(n * 100),
        known_delta: n === 5 ? '-90071992547409910' : '0',
        expected_delta: null,
        net_balance: String(((n * (n + 1)) / 2) * 100),
        known_balance: n === 5 ? '-90071992547409910' : '0',
        store_net_balance: String(n * 100),
        store_known_balance: '0',
      });

      before(async () => {
        await store.drop(LEDGER.movements);
        await store.ensureCollections(LEDGER_COLLECTIONS);
        await putAll(LEDGER.movements, [
          movement(3, 's2', 40),
          movement(1, 's1', 10),
          movement(2, 's1', 40),
          movement(5, 's1', 59),
          movement(4, 's1', 50, 'live'),
        ]);
      });
      after(async () => store.drop(LEDGER.movements));

      it('pages a window in booking then recording order, balances before a point, counts', async () => {
        const scope = { tenant };
        const window = { since: at(0), until: at(59) };
        const first = await movementsIn(store, scope, window, 2);
        expect(first.map((m) => m.event_id)).to.deep.equal(['ev-1', 'ev-2']);
        const rest = await movementsIn(store, scope, window, 2, movementKey(first[1]));
        expect(rest.map((m) => m.event_id)).to.deep.equal(['ev-3']);
        expect(await countIn(store, scope, window)).to.equal(3);
        expect(await balanceBefore(store, scope, at(40))).to.deep.equal({ net: 100n, known: 0n });
        expect(await balanceBefore(store, scope, at(41))).to.deep.equal({ net: 600n, known: 0n });
        expect(await balanceBefore(store, scope, at(0))).to.deep.equal({ net: 0n, known: 0n });
        expect(await balanceBefore(store, { tenant, storeId: 's1' }, at(41))).to.deep.equal({ net: 200n, known: 0n });
        const all = await movementsIn(store, { tenant, storeId: 's1' }, { since: at(0), until: at(60) }, 10);
        expect(all.map((m) => m.event_id)).to.deep.equal(['ev-1', 'ev-2', 'ev-5']);
        expect((await balanceBefore(store, scope, at(60))).known).to.equal(-90071992547409910n);
      });

      it("writes a period's CSV from the store, exact past 2^53", async () => {
        let text = '';
        for await (const chunk of closingCsv(store, tenant, '2026-10')) text += chunk;
        const lines = text.split('\r\n');
        expect(lines).to.have.length(6); // header, four movements of October in Brasília, the final empty string
        expect(lines[4]).to.equal(
          `${at(59)},${at(59)},s1,o-5,ev-5,paid,500,-90071992547409910,,1500,-90071992547409910`,
        );
      });

      it('writes the same CSV bytes whatever the page size it reads with', async () => {
        const csv = async (page?: number) => {
          let text = '';
          for await (const chunk of closingCsv(store, tenant, '2026-10', page)) text += chunk;
          return text;
        };
        const whole = await csv();
        for (const page of [1, 2, 3, 4, 5]) expect(await csv(page), `pages of ${page}`).to.equal(whole);
      });

      it('writes the same bytes from the lines movements carry (`csv`, written by the projector) as from their fields', async () => {
        const csv = async (page?: number) => {
          let text = '';
          for await (const chunk of closingCsv(store, tenant, '2026-10', page)) text += chunk;
          return text;
        };
        const fromFields = await csv();
        // Some movements with their line (a month that spans an upgrade), then all of them.
        for (const withLine of [
          [2, 5],
          [1, 2, 3, 4, 5],
        ]) {
          await putAll(
            LEDGER.movements,
            [movement(3, 's2', 40), movement(1, 's1', 10), movement(2, 's1', 40), movement(5, 's1', 59)]
              .filter((m) => withLine.includes(Number(m.event_id.slice(3))))
              .map((m) => ({ ...m, csv: csvLine(m) })),
          );
          for (const page of [undefined, 1, 2, 3, 4])
            expect(await csv(page), `lines on ${withLine.join(',')}, pages of ${page}`).to.equal(fromFields);
        }
      });

      it("keeps a closed period's count and hash, computed again when a later event's movement is booked into it", async () => {
        const kept = await closingOf(store, tenant, '2026-10');
        expect(kept).to.include({ movements: 4, sha256: await closingSha256(store, tenant, '2026-10') });
        expect(await closingOf(store, tenant, '2026-10')).to.deep.equal(kept);
        // A projection catching up past the period's end: a later event, booked at the period's last minute.
        const late = movement(6, 's2', 59);
        await putAll(LEDGER.movements, [late]);
        try {
          const again = await closingOf(store, tenant, '2026-10');
          expect(again.movements).to.equal(5);
          expect(again.sha256)
            .to.equal(await closingSha256(store, tenant, '2026-10'))
            .and.not.equal(kept.sha256);
          expect((await closingOf(store, tenant, '2026-11')).previous_sha256).to.equal(again.sha256);
        } finally {
          await store.remove(LEDGER.movements, late._id);
        }
      });
    });
  });
}
