/**
 * Text search over a read-model collection: an extension of the read-store port (read-store.ts) that an adapter may
 * offer. A collection declares which top-level string fields are searchable (`CollectionSpec.text`); the adapter
 * keeps its text index in step with the documents inside the same unit of work as every `put`/`delete` (the SQLite
 * adapter with triggers into an FTS5 table), so a projector needs nothing but its `tx`.
 *
 * Words are folded by the adapter the same way on both sides: case and accents ignored (`cafe` finds `Café`), words
 * split at anything that is not a letter or a digit (`textWords` gives the query side of that rule). A query is
 * structured (words, not engine syntax), so no caller can hand the engine an operator, and its cost is bounded: at
 * most `MAX_QUERY_WORDS` words, a prefix only on the last word and only from `MIN_PREFIX_LENGTH` characters, and at
 * most `limit` documents back.
 */
import type { Doc, Where } from './read-store.js';

export const MAX_QUERY_WORDS = 12;
export const MIN_PREFIX_LENGTH = 3;
export const MAX_TEXT_LIMIT = 2000;
/** The most entries of the text index one statement of a query looks at (the bound on a `where`'s cost). */
export const MAX_TEXT_SCAN = 20_000;

export interface TextQuery {
  /** Every word must match a word of one of the collection's text fields (AND). Folded words (`textWords`). */
  words: readonly string[];
  /** The last word may match as a prefix (ignored when it is shorter than MIN_PREFIX_LENGTH). */
  prefixLast: boolean;
  /**
   * At most this many documents (1..MAX_TEXT_LIMIT); which ones, when more match, is the adapter's choice (SQLite:
   * those whose first text field alone holds every word first; MongoDB: its index's order).
   */
  limit: number;
  /**
   * Only documents that also meet these conditions (the read store's `Where`, on top-level fields) are matches: they
   * are applied before `limit`, so documents left out by them never take a place of the limit (the documents that
   * `sharing` brings are not filtered by them). The cost stays bounded: an adapter may look at a bounded number of
   * index entries for one query (SQLite: MAX_TEXT_SCAN per pass), so with more entries failing `where` than that,
   * fewer than `limit` may come back.
   */
  where?: Where;
  /**
   * Also every document whose field `sharing` (a top-level field holding strings) holds the value of one found by the
   * words (for the offers, `gtin`: every offer of the products found), read with them in one snapshot where the
   * engine has one. Each document once, those found by the words first; `limit` bounds the words' matches only, the
   * others are as many as share their values. Documents without a string there bring none.
   */
  sharing?: string;
}

/** A read store that can search the text fields of a collection (`CollectionSpec.text`). */
export interface TextSearchable {
  textSearch<T extends Doc = Doc>(collection: string, query: TextQuery): Promise<T[]>;
}

/** The distinct string values of `field` in `docs` (the values a `sharing` query looks for). */
export function sharedValues(docs: readonly Doc[], field: string): string[] {
  const values = new Set<string>();
  for (const d of docs) {
    const v = d[field];
    if (typeof v === 'string') values.add(v);
  }
  return [...values];
}

/** Plain ASCII: NFD leaves it as it is and it holds no combining mark, so lower case alone folds it. */
function isAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0x7f) return false;
  return true;
}

/** Folds like the index: NFD, combining marks removed, lower case. */
export function foldText(s: string): string {
  if (isAscii(s)) return s.toLowerCase();
  return s
    .normalize('NFD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase();
}

/** The folded words of a text (letters and digits; anything else separates). */
export function textWords(s: string): string[] {
  return foldText(s)
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w.length > 0);
}

/** Checks a query against the bounds; throws RangeError (adapters call it before they query). */
export function checkTextQuery(q: TextQuery): void {
  if (q.words.length === 0 || q.words.length > MAX_QUERY_WORDS) throw new RangeError(`words: 1..${MAX_QUERY_WORDS}`);
  for (const w of q.words) {
    if (typeof w !== 'string' || w.length === 0 || w.length > 200 || textWords(w).length !== 1 || textWords(w)[0] !== w)
      throw new RangeError(`word: ${JSON.stringify(w)} is not a folded word`);
  }
  if (!Number.isSafeInteger(q.limit) || q.limit < 1 || q.limit > MAX_TEXT_LIMIT)
    throw new RangeError(`limit: 1..${MAX_TEXT_LIMIT}`);
  if (q.sharing !== undefined && (typeof q.sharing !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(q.sharing)))
    throw new RangeError('sharing: a plain field name');
}

export function isTextSearchable(x: object): x is TextSearchable {
  return typeof (x as Partial<TextSearchable>).textSearch === 'function';
}

/** The read store in use has no text index. */
export class TextSearchUnavailable extends Error {
  constructor() {
    super('this read store offers no text search');
    this.name = 'TextSearchUnavailable';
  }
}
