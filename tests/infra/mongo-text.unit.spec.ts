/**
 * Text search on MongoDB (infra/adapters/mongo/text.ts), checked without a server: the stored words, the query built for a
 * text query, and what that query selects under MongoDB's documented matching of an array field (`$all`: every value
 * is an element; `$regex` on an array: some element matches), run on the text-search contract's own cases.
 */
import { expect } from 'chai';
import type { Db, MongoClient } from 'mongodb';
import type { Doc } from '../../shared-schema/ports/read-store.js';
import type { TextQuery } from '../../shared-schema/ports/text-search.js';
import { fromMongoDoc, toMongoDoc } from '../../infra/adapters/mongo/query.js';
import { TEXT_FIELD, textFilter, textWordsOf } from '../../infra/adapters/mongo/text.js';

/** MongoDB's matching of the filters textFilter builds, over a document's `_text` array. */
function matches(words: readonly string[], filter: Record<string, unknown>): boolean {
  return Object.entries(filter).every(([k, cond]) => {
    if (k === '$and') return (cond as Record<string, unknown>[]).every((f) => matches(words, f));
    expect(k).to.equal(TEXT_FIELD);
    const c = cond as { $all?: string[]; $regex?: string };
    expect(Object.keys(c)).to.have.length(1);
    if (c.$all) return c.$all.every((w) => words.includes(w));
    const re = new RegExp(c.$regex!, 'u');
    return words.some((w) => re.test(w));
  });
}

describe('MongoDB text search: words and queries', () => {
  const FIELDS = ['title', 'other'];
  const docs: Doc[] = [
    { _id: 'a', title: 'Café Torrado', other: 'Marca Boa', price: 1 },
    { _id: 'b', title: 'CAMISETA azul', other: '7891234567895' },
    { _id: 'c', title: 'Cafeteira', other: null },
  ];
  const ids = (words: string[], prefixLast = true, limit = 100): string[] => {
    const q: TextQuery = { words, prefixLast, limit };
    const filter = textFilter(q);
    return docs
      .filter((d) => matches(textWordsOf(d, FIELDS), filter))
      .map((d) => d._id)
      .sort();
  };

  it('stores the distinct folded words of the declared string fields only', () => {
    expect(textWordsOf(docs[0], FIELDS)).to.deep.equal(['cafe', 'torrado', 'marca', 'boa']);
    expect(textWordsOf({ _id: 'x', title: 'Ação-AÇÃO 2x', other: 7, note: 'ignored' }, FIELDS)).to.deep.equal([
      'acao',
      '2x',
    ]);
    expect(textWordsOf({ _id: 'x' }, FIELDS)).to.deep.equal([]);
  });

  it('builds $all for whole words and an anchored case-sensitive $regex for the prefix', () => {
    expect(textFilter({ words: ['cafe'], prefixLast: false, limit: 5 })).to.deep.equal({
      [TEXT_FIELD]: { $all: ['cafe'] },
    });
    expect(textFilter({ words: ['caf'], prefixLast: true, limit: 5 })).to.deep.equal({
      [TEXT_FIELD]: { $regex: '^caf' },
    });
    expect(textFilter({ words: ['ca'], prefixLast: true, limit: 5 })).to.deep.equal({ [TEXT_FIELD]: { $all: ['ca'] } });
    expect(textFilter({ words: ['cafe', 'cafe', 'tor'], prefixLast: true, limit: 5 })).to.deep.equal({
      $and: [{ [TEXT_FIELD]: { $all: ['cafe'] } }, { [TEXT_FIELD]: { $regex: '^tor' } }],
    });
  });

  it('selects what the contract asks: folding, every word, prefix only on the last word from 3 characters', () => {
    expect(ids(['cafe'], false)).to.deep.equal(['a']);
    expect(ids(['camiseta'], false)).to.deep.equal(['b']);
    expect(ids(['cafe', 'boa'], false)).to.deep.equal(['a']);
    expect(ids(['cafe', 'azul'], false)).to.deep.equal([]);
    expect(ids(['7891234567895'], false)).to.deep.equal(['b']);
    expect(ids(['caf'])).to.deep.equal(['a', 'c']);
    expect(ids(['caf'], false)).to.deep.equal([]);
    expect(ids(['ca'])).to.deep.equal([]);
    expect(ids(['caf', 'torrado'])).to.deep.equal([]);
    expect(ids(['torrado', 'caf'])).to.deep.equal(['a']);
  });

  it('refuses what is not a folded word and limits out of bounds, before any query (no engine syntax gets through)', () => {
    for (const words of [[], ['Café'], ['a b'], ['"x" OR y'], ['x*'], ['^a'], ['.*'], Array(13).fill('x')]) {
      expect(() => textFilter({ words, prefixLast: true, limit: 10 }), JSON.stringify(words)).to.throw(RangeError);
    }
    expect(() => textFilter({ words: ['x'], prefixLast: false, limit: 0 })).to.throw(RangeError);
  });

  it('keeps `_text` a side field: never taken from a caller, never read back', () => {
    const stored = toMongoDoc({ _id: 'x', title: 'Chá', [TEXT_FIELD]: ['forged'] });
    expect(stored).to.not.have.property(TEXT_FIELD);
    expect(fromMongoDoc({ _id: 'x', title: 'Chá', [TEXT_FIELD]: ['cha'] })).to.deep.equal({ _id: 'x', title: 'Chá' });
  });
});

/**
 * The store's side of it against a stand-in of the driver (no server): what `ensureCollections`, a unit's `put` and
 * `textSearch` send. The stand-in records calls; it does not evaluate them (the matching is checked above).
 */
describe('MongoReadStore text search through a stand-in driver', () => {
  type Call = { collection: string; op: string; args: unknown[] };
  function standIn(existing: Record<string, Record<string, unknown>[]>) {
    const calls: Call[] = [];
    // The indexes each collection holds: `_id_`, one an earlier version declared, and those created (named as the
    // driver names them: the `name` option, else each key and its direction joined by `_`).
    const indexes = new Map<string, Set<string>>();
    const held = (name: string) => indexes.get(name) ?? indexes.set(name, new Set(['_id_', 'earlier_1'])).get(name)!;
    const collection = (name: string) => ({
      createIndex: async (...args: unknown[]) => {
        calls.push({ collection: name, op: 'createIndex', args });
        const [keys, options] = args as [[string, number][], { name?: string } | undefined];
        const index = options?.name ?? keys.map(([k, d]) => `${k}_${d}`).join('_');
        held(name).add(index);
        return index;
      },
      listIndexes: () => ({ toArray: async () => [...held(name)].map((index) => ({ name: index })) }),
      dropIndex: async (index: string) => {
        calls.push({ collection: name, op: 'dropIndex', args: [index] });
        held(name).delete(index);
      },
      bulkWrite: async (...args: unknown[]) => void calls.push({ collection: name, op: 'bulkWrite', args }),
      updateOne: async (...args: unknown[]) => void calls.push({ collection: name, op: 'updateOne', args }),
      find: (...args: unknown[]) => {
        calls.push({ collection: name, op: 'find', args });
        const rows = existing[name] ?? [];
        return {
          async *[Symbol.asyncIterator]() {
            yield* rows;
          },
          toArray: async () => rows,
        };
      },
    });
    const db = { createCollection: async () => undefined, collection };
    const session = {
      startTransaction() {},
      commitTransaction: async () => undefined,
      abortTransaction: async () => undefined,
      endSession: async () => undefined,
    };
    const client = { startSession: () => session, close: async () => undefined };
    return { calls, db, client };
  }

  it('indexes the words, gives words to documents written before, writes them with each put, and queries them', async () => {
    const { MongoReadStore } = await import('../../infra/adapters/mongo/read-store.js');
    const { calls, db, client } = standIn({ texts: [{ _id: 'old', title: 'Café' }], plain: [] });
    const store = new MongoReadStore(client as unknown as MongoClient, db as unknown as Db);
    await store.ensureCollections([
      { name: 'texts', indexes: [], text: ['title'] },
      { name: 'plain', indexes: [] },
    ]);
    expect(calls.filter((c) => c.op === 'createIndex').map((c) => [c.collection, c.args])).to.deep.equal([
      ['texts', [[[TEXT_FIELD, 1]], { name: 'text_words' }]],
    ]);
    // The index an earlier version declared is dropped; the ones declared stay.
    expect(calls.filter((c) => c.op === 'dropIndex').map((c) => [c.collection, c.args])).to.deep.equal([
      ['texts', ['earlier_1']],
      ['plain', ['earlier_1']],
      ['checkpoints', ['earlier_1']],
    ]);
    const backfill = calls.find((c) => c.op === 'bulkWrite' && c.collection === 'texts')!;
    expect(backfill.args[0]).to.deep.equal([
      {
        updateOne: {
          filter: { _id: 'old', [TEXT_FIELD]: { $exists: false } },
          update: { $set: { [TEXT_FIELD]: ['cafe'] } },
        },
      },
    ]);
    calls.length = 0;
    await store.transact(async (tx) => {
      await tx.put('texts', { _id: 'n', title: 'Chá Verde', price: 3 });
      await tx.put('plain', { _id: 'p', title: 'Chá' });
    });
    const writes = calls
      .filter((c) => c.op === 'bulkWrite')
      .map((c) => [c.collection, (c.args[0] as { replaceOne: { replacement: unknown } }[])[0].replaceOne.replacement]);
    expect(writes).to.deep.equal([
      ['texts', { title: 'Chá Verde', price: 3, [TEXT_FIELD]: ['cha', 'verde'] }],
      ['plain', { title: 'Chá' }],
    ]);
    calls.length = 0;
    await store.textSearch('texts', { words: ['cha', 'ver'], prefixLast: true, limit: 7 });
    expect(calls.map((c) => [c.op, c.args[0], (c.args[1] as { limit: number }).limit])).to.deep.equal([
      ['find', { $and: [{ [TEXT_FIELD]: { $all: ['cha'] } }, { [TEXT_FIELD]: { $regex: '^ver' } }] }, 7],
    ]);
    // `where` goes in the same filter as the words, so the server applies it before the limit.
    calls.length = 0;
    await store.textSearch('texts', {
      words: ['cha'],
      prefixLast: false,
      limit: 7,
      where: { at: { gte: '2026-01-01' } },
    });
    expect(calls.map((c) => [c.op, c.args[0], (c.args[1] as { limit: number }).limit])).to.deep.equal([
      ['find', { $and: [{ [TEXT_FIELD]: { $all: ['cha'] } }, { at: { $gte: '2026-01-01' } }] }, 7],
    ]);
    await store.textSearch('texts', { words: ['Chá'], prefixLast: false, limit: 7 }).then(
      () => expect.fail('accepted an unfolded word'),
      (err: Error) => expect(err).to.be.instanceOf(RangeError),
    );
  });
});
