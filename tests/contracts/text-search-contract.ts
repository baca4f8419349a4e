/**
 * The text-search extension of the read-store port (shared-schema/ports/text-search.ts), for any adapter that offers
 * it: folding (case, accents), every word required, prefix only on the last word and from MIN_PREFIX_LENGTH, the
 * index following put / delete / rollback in the same unit of work, a re-indexed update, bounds refused, drop.
 * The SQLite adapter runs it (text-search.sqlite.int.spec.ts), and the MongoDB one whenever MONGO_URL names a server
 * (text-search.mongo.int.spec.ts).
 */
import { expect } from 'chai';
import type { Doc, ReadStore } from '../../shared-schema/ports/read-store.js';
import { isTextSearchable, type TextQuery } from '../../shared-schema/ports/text-search.js';

export function textSearchContract(name: string, open: () => Promise<ReadStore>): void {
  describe(`text search contract: ${name}`, () => {
    let store: ReadStore;
    const C = 'texts';
    const ids = async (words: string[], prefixLast = true, limit = 100) => {
      if (!isTextSearchable(store)) throw new Error('not text searchable');
      const q: TextQuery = { words, prefixLast, limit };
      return (await store.textSearch<Doc>(C, q)).map((d) => d._id).sort();
    };
    beforeEach(async () => {
      store = await open();
      await store.ensureCollections([{ name: C, indexes: [], text: ['title', 'other'] }]);
      await store.transact(async (tx) => {
        await tx.put(C, { _id: 'a', title: 'Café Torrado', other: 'Marca Boa', price: 1 });
        await tx.put(C, { _id: 'b', title: 'CAMISETA azul', other: '7891234567895' });
        await tx.put(C, { _id: 'c', title: 'Cafeteira', other: null });
      });
    });
    afterEach(async () => store.close());

    it('folds case and accents on both sides, needs every word, searches every text field', async () => {
      expect(await ids(['cafe'], false)).to.deep.equal(['a']);
      expect(await ids(['camiseta'], false)).to.deep.equal(['b']);
      expect(await ids(['cafe', 'boa'], false)).to.deep.equal(['a']);
      expect(await ids(['cafe', 'azul'], false)).to.deep.equal([]);
      expect(await ids(['7891234567895'], false)).to.deep.equal(['b']);
    });
    it('prefix only on the last word and from 3 characters', async () => {
      expect(await ids(['caf'])).to.deep.equal(['a', 'c']);
      expect(await ids(['caf'], false)).to.deep.equal([]);
      expect(await ids(['ca'])).to.deep.equal([]);
      expect(await ids(['caf', 'torrado'])).to.deep.equal([]); // the first word is never a prefix
    });
    it('follows puts, updates and deletes of committed units, and nothing of a failed one', async () => {
      await store.transact(async (tx) => {
        await tx.put(C, { _id: 'a', title: 'Chá verde', other: '' });
        await tx.delete(C, 'b');
      });
      expect(await ids(['cafe'], false)).to.deep.equal([]);
      expect(await ids(['cha'], false)).to.deep.equal(['a']);
      expect(await ids(['camiseta'], false)).to.deep.equal([]);
      await store
        .transact(async (tx) => {
          await tx.put(C, { _id: 'd', title: 'Chá preto', other: '' });
          throw new Error('rolled back');
        })
        .catch(() => undefined);
      expect(await ids(['cha'], false)).to.deep.equal(['a']);
      await store.transact(async (tx) => tx.put(C, { _id: 'a', title: 'Chá verde', other: '', price: 2 })); // text unchanged
      expect(await ids(['cha', 'verde'], false)).to.deep.equal(['a']);
    });
    it('bounds the limit and refuses what is not a folded word (no engine syntax gets through)', async () => {
      expect(await ids(['caf'], true, 1)).to.have.length(1);
      for (const bad of [[], ['Café'], ['a b'], ['"x" OR y'], ['x*'], Array(13).fill('x')]) {
        await ids(bad).then(
          () => expect.fail(`accepted ${JSON.stringify(bad)}`),
          (err: Error) => expect(err).to.be.instanceOf(RangeError),
        );
      }
      await ids(['x'], false, 0).then(
        () => expect.fail('limit 0'),
        (err: Error) => expect(err).to.be.instanceOf(RangeError),
      );
    });
    it("with `sharing`, also every document holding a found one's value of that field, each once, matches first", async () => {
      const text = store;
      if (!isTextSearchable(text)) throw new Error('not text searchable');
      await store.transact(async (tx) => {
        await tx.put(C, { _id: 'a', title: 'Café Torrado', other: 'Marca Boa', g: 'g1' });
        await tx.put(C, { _id: 'c', title: 'Cafeteira', other: null, g: 'g2' });
        await tx.put(C, { _id: 's1', title: 'Moedor', other: '', g: 'g1' });
        await tx.put(C, { _id: 's2', title: 'Cafe moído', other: '', g: 'g1' });
        await tx.put(C, { _id: 's3', title: 'Filtro', other: '', g: 'g3' });
        await tx.put(C, { _id: 's4', title: 'Coador', other: '', g: 7 });
        await tx.put(C, { _id: 'n', title: 'Café solúvel', other: '', g: null });
      });
      const search = (words: string[], limit: number, sharing?: string) =>
        text.textSearch<Doc>(C, { words, prefixLast: false, limit, ...(sharing ? { sharing } : {}) });
      const all = await search(['cafe'], 10, 'g');
      const ids = all.map((d) => d._id);
      expect(ids.slice(0, 3).sort()).to.deep.equal(['a', 'n', 's2']); // the matches first
      expect(ids.slice(3)).to.deep.equal(['s1']); // then g1's other offer; `n` (null) brings nothing
      expect(all.find((d) => d._id === 's1')).to.deep.include({ title: 'Moedor', g: 'g1' });
      // The limit bounds the matches only; a match left out by it does not bring its value.
      const one = await search(['cafeteira'], 1, 'g');
      expect(one.map((d) => d._id)).to.deep.equal(['c']);
      await store.transact(async (tx) => tx.put(C, { _id: 's5', title: 'Jarra', other: '', g: 'g2' }));
      expect((await search(['cafeteira'], 1, 'g')).map((d) => d._id)).to.deep.equal(['c', 's5']);
      // Without `sharing`, the matches only; a field name that is not plain is refused.
      expect((await search(['cafe'], 10)).map((d) => d._id).sort()).to.deep.equal(['a', 'n', 's2']);
      await search(['cafe'], 10, 'g.x').then(
        () => expect.fail('accepted a dotted field'),
        (err: Error) => expect(err).to.be.instanceOf(RangeError),
      );
    });
    // The same answers whether the tested field is in the document only or also `filtered` (SQLite: a column).
    for (const filtered of [undefined, ['at']])
      it(`with \`where\`${filtered ? ' on a `filtered` field' : ''}, only documents meeting it are matches, before the limit; their values still bring others`, async () => {
        const text = store;
        if (!isTextSearchable(text)) throw new Error('not text searchable');
        if (filtered) {
          await store.drop(C);
          await store.ensureCollections([{ name: C, indexes: [], filtered, text: ['title', 'other'] }]);
        }
        await store.transact(async (tx) => {
          // Written first, so an adapter reading in write order meets them first.
          for (let i = 0; i < 30; i++)
            await tx.put(C, { _id: `old${i}`, title: 'Chaleira', other: '', at: '2026-01-01', g: 'g1' });
          await tx.put(C, { _id: 'new1', title: 'Chaleira', other: '', at: '2026-03-01', g: 'g2' });
          await tx.put(C, { _id: 'new2', title: 'Marca', other: 'chaleira', at: '2026-03-02' });
          await tx.put(C, { _id: 'sib', title: 'Tampa', other: '', at: '2026-01-01', g: 'g2' });
          await tx.put(C, { _id: 'none', title: 'Chaleira', other: '' });
        });
        const search = (limit: number, where: TextQuery['where'], sharing?: string) =>
          text.textSearch<Doc>(C, {
            words: ['chaleira'],
            prefixLast: false,
            limit,
            where,
            ...(sharing ? { sharing } : {}),
          });
        const fresh = { at: { gte: '2026-02-01' } };
        // Thirty older matches do not take the places of a limit of 2.
        expect((await search(2, fresh)).map((d) => d._id).sort()).to.deep.equal(['new1', 'new2']);
        // The title tier still comes first among the matches meeting `where`.
        expect((await search(1, fresh)).map((d) => d._id)).to.deep.equal(['new1']);
        // `where` selects the matches; a document sharing a match's value comes whatever its own fields.
        expect((await search(2, fresh, 'g')).map((d) => d._id)).to.deep.equal(['new1', 'new2', 'sib']);
        expect((await search(5, { at: { gte: '2027-01-01' } })).map((d) => d._id)).to.deep.equal([]);
        expect((await search(50, { at: null })).map((d) => d._id)).to.deep.equal(['none']);
        await search(2, { 'a b': 1 }).then(
          () => expect.fail('accepted a bad field name'),
          (err: Error) => expect(err).to.be.instanceOf(Error),
        );
      });
    it('drop removes the index; declaring again indexes documents already there', async () => {
      await store.drop(C);
      await store.ensureCollections([{ name: C, indexes: [] }]);
      await store.transact(async (tx) => tx.put(C, { _id: 'z', title: 'Zebra', other: '' }));
      await store.ensureCollections([{ name: C, indexes: [], text: ['title', 'other'] }]);
      expect(await ids(['zebra'], false)).to.deep.equal(['z']);
    });
  });
}
