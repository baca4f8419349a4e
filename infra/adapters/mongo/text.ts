/**
 * Text search on MongoDB (shared-schema/ports/text-search.ts), without a server-side text index: each document of a
 * collection that declares `text` fields carries, in a side field `_text`, the folded words of those fields
 * (`textWords`: the port's own folding, so the stored side and the query side fold the same way), with an ordinary
 * ascending index on it — a multikey index, one key per distinct word.
 *
 * Why not `$text` with `default_language: 'portuguese'`: a MongoDB text index stems (Portuguese: `azuis` and `azul`
 * become one term), drops stop words (`de`, `para`, …, so a word of the query would match nothing or everything),
 * and cannot search a prefix — and the port promises what FTS5 does in the embedded default: every word of the
 * query is a whole word of the document, the last one may be a prefix (from MIN_PREFIX_LENGTH). Both adapters then
 * answer the contract suite alike (tests/contracts/text-search-contract.ts).
 *
 * The query (`textFilter`): the whole words with `$all`, the prefix with an anchored, case-sensitive `$regex`
 * (`^word`: MongoDB reads it as a range of index keys, the "prefix expression" of its `$regex` documentation). The
 * server answers from the index keys of one of those words and checks the others on each document; `limit`
 * stops it at that many matches, so a search costs at most the documents holding its rarest-chosen word, like a
 * doclist of FTS5, and never a scan of the collection.
 */
import type { Doc } from '../../../shared-schema/ports/read-store.js';
import {
  checkTextQuery,
  MIN_PREFIX_LENGTH,
  textWords,
  type TextQuery,
} from '../../../shared-schema/ports/text-search.js';
import { TEXT_FIELD } from './query.js';

export { TEXT_FIELD };

/** The distinct folded words of a document's text fields (non-string values hold none). */
export function textWordsOf(doc: Doc, fields: readonly string[]): string[] {
  const words = new Set<string>();
  for (const f of fields) {
    const v = doc[f];
    if (typeof v === 'string') for (const w of textWords(v)) words.add(w);
  }
  return [...words];
}

/** Regex metacharacters: folded words hold only letters and digits, escaped all the same. */
const escapeRegex = (s: string): string => s.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&');

/** The filter of a text query (checked first: RangeError for what is not a folded word or out of bounds). */
export function textFilter(q: TextQuery): Record<string, unknown> {
  checkTextQuery(q);
  const last = q.words[q.words.length - 1];
  const prefix = q.prefixLast && last.length >= MIN_PREFIX_LENGTH;
  const whole = [...new Set(prefix ? q.words.slice(0, -1) : q.words)];
  const parts: Record<string, unknown>[] = [];
  if (whole.length > 0) parts.push({ [TEXT_FIELD]: { $all: whole } });
  if (prefix) parts.push({ [TEXT_FIELD]: { $regex: `^${escapeRegex(last)}` } });
  return parts.length === 1 ? parts[0] : { $and: parts };
}

/** The index on the words (ascending: multikey over the array). */
export const TEXT_INDEX: [string, 1][] = [[TEXT_FIELD, 1]];
export const TEXT_INDEX_NAME = 'text_words';
