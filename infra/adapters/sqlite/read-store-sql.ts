/**
 * SQL text for the SQLite read store: names, field expressions, WHERE clauses, ORDER BY and keyset segments.
 *
 * Every value is a bound parameter; only validated collection and field names reach the SQL text. A field that some
 * index of its collection names is kept in a column of its own (`f_<field>`, no type affinity) beside the document,
 * written with every document, and the indexes are built on those columns; any other field is read with
 * `json_extract(doc, '$.field')`. Both yield the same values: INTEGER/REAL for JSON numbers, TEXT for strings, NULL
 * for null or a missing field and 1/0 for true/false, so numbers compare as numbers and strings as strings, and
 * SQLite's order is NULL < numbers < strings (booleans sort as 0/1). Columns, not expressions over `doc`, because
 * SQLite rewrites an expression index entry whenever `doc` changes, but leaves a column index alone when the
 * column keeps its value: a product update wrote about four times fewer WAL bytes (docs/adr/0008-sqlite-read-store-layout.md).
 */
import type { Condition, Query, Scalar, SortKey, Where } from '../../../shared-schema/ports/read-store.js';

const COLLECTION_NAME = /^[a-z][a-z0-9_]*$/;
const FIELD_NAME = /^[a-z_][a-z0-9_]*$/;

export type Bind = string | number | null;

export interface Fragment {
  sql: string;
  params: Bind[];
}

function checkCollection(name: string): string {
  if (typeof name !== 'string' || !COLLECTION_NAME.test(name)) {
    throw new RangeError(`invalid collection name ${JSON.stringify(name)} (expected ${COLLECTION_NAME})`);
  }
  return name;
}

/** The quoted table of a collection; prefixed so that no collection can clash with the `checkpoints` table. */
export function tableOf(collection: string): string {
  return `"coll_${checkCollection(collection)}"`;
}

/** The indexed fields of a table, which have columns of their own (empty: every field is read from `doc`). */
export type Columns = ReadonlySet<string>;
export const NO_COLUMNS: Columns = new Set();

export function checkField(field: string): string {
  if (typeof field !== 'string' || !FIELD_NAME.test(field)) {
    throw new RangeError(`invalid field name ${JSON.stringify(field)} (expected ${FIELD_NAME})`);
  }
  return field;
}

const COLUMN_PREFIX = 'f_';

/** The column holding an indexed field (quoted for SQL text). */
export const columnOf = (field: string): string => `"${COLUMN_PREFIX}${checkField(field)}"`;

/** The field a column of a table holds, or null for `_id`, `doc` and anything else. */
export const fieldOfColumn = (column: string): string | null =>
  column.startsWith(COLUMN_PREFIX) ? column.slice(COLUMN_PREFIX.length) : null;

/** The SQL expression reading a top-level field: `_id`, the field's column when it has one, else json_extract. */
export function fieldExpr(field: string, columns: Columns = NO_COLUMNS): string {
  checkField(field);
  if (field === '_id') return '_id';
  return columns.has(field) ? columnOf(field) : docFieldExpr(field);
}

/** A field read from the document itself (sums and group keys, which need json_extract's exact integers and types). */
export function docFieldExpr(field: string): string {
  return field === '_id' ? '_id' : `json_extract(doc, '$.${checkField(field)}')`;
}

/**
 * The value of a document's field as stored in its column: what json_extract reads from the document's JSON
 * (JSON.stringify's view of the value: toJSON applied, non-finite numbers null, booleans 1/0, objects as JSON text).
 */
export function columnValue(value: unknown): Bind {
  let v = value;
  if (v !== null && typeof v === 'object' && typeof (v as { toJSON?: unknown }).toJSON === 'function')
    v = (v as { toJSON: () => unknown }).toJSON();
  switch (typeof v) {
    case 'string':
      return v;
    case 'number':
      return Number.isFinite(v) ? v : null;
    case 'boolean':
      return v ? 1 : 0;
    case 'object':
      return v === null ? null : JSON.stringify(v);
    default:
      return null; // undefined, functions, symbols: absent from the JSON
  }
}

/** A JS scalar as SQLite sees the same JSON value through json_extract (booleans become 1/0). */
export function bindScalar(value: unknown, what: string): Bind {
  if (value === null) return null;
  switch (typeof value) {
    case 'string':
      return value;
    case 'number':
      if (!Number.isFinite(value)) throw new RangeError(`${what}: ${value} is not a JSON number`);
      return value;
    case 'boolean':
      return value ? 1 : 0;
    default:
      throw new TypeError(`${what}: expected a string, number, boolean or null, got ${typeof value}`);
  }
}

/** Null-safe equality: `x IS NULL` or `x = ?`. */
function equal(x: string, value: Bind): Fragment {
  return value === null ? { sql: `${x} IS NULL`, params: [] } : { sql: `${x} = ?`, params: [value] };
}

const RANGE_OPS = { gt: '>', gte: '>=', lt: '<', lte: '<=' } as const;
const CONDITION_KEYS = new Set(['gt', 'gte', 'lt', 'lte', 'in', 'ne']);

function conditionParts(field: string, cond: Condition, columns: Columns): Fragment[] {
  const x = fieldExpr(field, columns);
  const what = `where.${field}`;
  if (cond === null || typeof cond !== 'object') return [equal(x, bindScalar(cond, what))];
  if (Array.isArray(cond)) throw new TypeError(`${what}: use { in: [...] } for a set of values`);
  const proto: unknown = Object.getPrototypeOf(cond);
  if (proto !== Object.prototype && proto !== null)
    throw new TypeError(`${what}: expected a scalar or a condition, got an object`);
  for (const key of Object.keys(cond)) {
    if (!CONDITION_KEYS.has(key)) throw new TypeError(`${what}: unknown operator ${JSON.stringify(key)}`);
  }
  const parts: Fragment[] = [];
  // Ranges stay inside one type, as in MongoDB: a numeric bound never matches strings and vice versa.
  let kind: 'number' | 'string' | undefined;
  for (const [op, sqlOp] of Object.entries(RANGE_OPS) as [keyof typeof RANGE_OPS, string][]) {
    const bound = cond[op];
    if (bound === undefined) continue;
    if (typeof bound !== 'number' && typeof bound !== 'string') {
      throw new TypeError(`${what}.${op}: a range bound must be a number or a string`);
    }
    if (kind !== undefined && kind !== typeof bound) throw new TypeError(`${what}: range bounds of mixed types`);
    kind = typeof bound as 'number' | 'string';
    parts.push({ sql: `${x} ${sqlOp} ?`, params: [bindScalar(bound, `${what}.${op}`)] });
  }
  // In SQLite's order every number is below '' and every string is at or above it.
  if (kind === 'number' && cond.lt === undefined && cond.lte === undefined)
    parts.push({ sql: `${x} < ''`, params: [] });
  if (kind === 'string' && cond.gt === undefined && cond.gte === undefined)
    parts.push({ sql: `${x} >= ''`, params: [] });
  if (cond.in !== undefined) {
    if (!Array.isArray(cond.in)) throw new TypeError(`${what}.in: expected an array`);
    const values = cond.in.map((v, i) => bindScalar(v, `${what}.in[${i}]`));
    const present = values.filter((v): v is string | number => v !== null);
    const alternatives: string[] = [];
    // A long list of strings is one JSON parameter: the statement's text, and so its prepared plan, is the same
    // whatever the number of values (a `?` per value made a new statement for each count).
    const asJson = present.length > IN_LIST_INLINE_MAX && present.every((v) => typeof v === 'string');
    if (present.length > 0)
      alternatives.push(
        asJson ? `${x} IN (SELECT value FROM json_each(?))` : `${x} IN (${present.map(() => '?').join(', ')})`,
      );
    if (present.length < values.length) alternatives.push(`${x} IS NULL`);
    const sql =
      alternatives.length === 0 ? '0' : alternatives.length === 1 ? alternatives[0] : `(${alternatives.join(' OR ')})`;
    parts.push({ sql, params: asJson ? [JSON.stringify(present)] : present });
  }
  if (cond.ne !== undefined) {
    const ne = bindScalar(cond.ne, `${what}.ne`);
    // `IS NOT` is null-safe: a missing field is "not equal" to any value, as with MongoDB's $ne.
    parts.push(ne === null ? { sql: `${x} IS NOT NULL`, params: [] } : { sql: `${x} IS NOT ?`, params: [ne] });
  }
  return parts;
}

/**
 * `where` with the first sort key's range taken from the keyset when the keyset's value already implies it: rows
 * after the cursor lie at or beyond that value. SQLite bounds an index range by one of the lower (upper) bounds a
 * column is given, not by the tightest, so beside a window's own start a page after a cursor would walk the index
 * again from the window's start (a month read in pages of n would cost rows²/2n index steps). The rows that match do
 * not change: a bound is replaced only by one that implies it.
 */
export function narrowedByKeyset(
  where: Where | undefined,
  orderBy: readonly SortKey[] | undefined,
  after: Query['after'],
): Where | undefined {
  const first = orderBy?.[0] ?? { field: '_id' };
  const cond = where?.[first.field];
  const v = Array.isArray(after) ? (after[0] as Scalar) : undefined;
  if (!where || cond === null || typeof cond !== 'object' || (typeof v !== 'string' && typeof v !== 'number')) {
    return where;
  }
  // SQLite compares text as bytes (BINARY): compare UTF-8 bytes, not UTF-16 code units. Another type: no claim.
  const order = (a: Scalar | undefined): number | undefined => {
    if (typeof a === 'number' && typeof v === 'number') return Math.sign(v - a);
    if (typeof a === 'string' && typeof v === 'string') return Buffer.compare(Buffer.from(v), Buffer.from(a));
    return undefined;
  };
  const implied = (bound: Scalar | undefined, strict: boolean, sign: 1 | -1): boolean => {
    if (bound === undefined) return true;
    const o = order(bound);
    return o !== undefined && (strict ? o === sign : o === sign || o === 0);
  };
  const { gt, gte, lt, lte, ...rest } = cond;
  if (first.dir !== 'desc') {
    if ((gt === undefined && gte === undefined) || !implied(gt, true, 1) || !implied(gte, false, 1)) return where;
    return {
      ...where,
      [first.field]: { ...rest, gte: v, ...(lt !== undefined ? { lt } : {}), ...(lte !== undefined ? { lte } : {}) },
    };
  }
  if ((lt === undefined && lte === undefined) || !implied(lt, true, -1) || !implied(lte, false, -1)) return where;
  return {
    ...where,
    [first.field]: { ...rest, lte: v, ...(gt !== undefined ? { gt } : {}), ...(gte !== undefined ? { gte } : {}) },
  };
}

/** The conditions of `where`, ANDed; `sql` is empty when there are none. */
/** Up to this many values an `in` list is bound one `?` each; more, and strings only, as one JSON array. */
const IN_LIST_INLINE_MAX = 8;

export function whereParts(where: Where | undefined, columns: Columns = NO_COLUMNS): Fragment[] {
  if (where === undefined) return [];
  if (where === null || typeof where !== 'object') throw new TypeError('where: expected an object');
  const parts: Fragment[] = [];
  for (const [field, cond] of Object.entries(where)) {
    if (cond === undefined) throw new TypeError(`where.${field}: undefined (leave the field out instead)`);
    parts.push(...conditionParts(field, cond, columns));
  }
  return parts;
}

export function and(parts: readonly Fragment[]): Fragment {
  if (parts.length === 0) return { sql: '1', params: [] };
  return { sql: parts.map((p) => `(${p.sql})`).join(' AND '), params: parts.flatMap((p) => p.params) };
}

interface Key {
  x: string;
  desc: boolean;
}

/** The effective sort keys: `orderBy` up to an explicit `_id`, else with `_id` ascending appended. */
export function sortKeys(orderBy: readonly SortKey[] | undefined, columns: Columns = NO_COLUMNS): Key[] {
  const keys: Key[] = [];
  for (const key of orderBy ?? []) {
    if (key.dir !== undefined && key.dir !== 'asc' && key.dir !== 'desc') {
      throw new RangeError(`orderBy.${key.field}: dir must be 'asc' or 'desc'`);
    }
    keys.push({ x: fieldExpr(key.field, columns), desc: key.dir === 'desc' });
    if (key.field === '_id') return keys;
  }
  keys.push({ x: '_id', desc: false });
  return keys;
}

export function orderByClause(keys: readonly Key[]): string {
  return keys.map((k) => `${k.x} ${k.desc ? 'DESC' : 'ASC'}`).join(', ');
}

const FALSE: Fragment = { sql: '0', params: [] };

/** Rows strictly after `value` on one key, in SQLite's order (NULL first ascending, last descending). */
function strictlyAfter(key: Key, value: Bind): Fragment {
  if (!key.desc)
    return value === null ? { sql: `${key.x} IS NOT NULL`, params: [] } : { sql: `${key.x} > ?`, params: [value] };
  return value === null ? FALSE : { sql: `(${key.x} < ? OR ${key.x} IS NULL)`, params: [value] };
}

/** Rows after the cursor on keys[i..]: after on key i, or equal on key i and after on the rest. Filter only. */
function afterFrom(keys: readonly Key[], values: readonly Bind[], i: number): Fragment {
  if (i >= keys.length) return FALSE;
  const head = strictlyAfter(keys[i], values[i]);
  const rest = afterFrom(keys, values, i + 1);
  const tail = rest === FALSE ? FALSE : and([equal(keys[i].x, values[i]), rest]);
  if (head === FALSE) return tail;
  if (tail === FALSE) return head;
  return { sql: `(${head.sql} OR ${tail.sql})`, params: [...head.params, ...tail.params] };
}

/**
 * The keyset condition as an ordered list of segments: the rows of segment 1 (in sort order) all come before those
 * of segment 2. Each segment bounds the first key with a plain range so the index serves it; rows whose first key
 * is NULL (first ascending, last descending) get a segment of their own. No `after`: one unconstrained segment.
 */
export function keysetSegments(keys: readonly Key[], after: Query['after']): Fragment[] {
  if (after === undefined) return [{ sql: '1', params: [] }];
  if (!Array.isArray(after) || after.length < keys.length) {
    throw new RangeError(`after: expected ${keys.length} values (one per orderBy key, then _id)`);
  }
  const values = keys.map((_, i) => bindScalar(after[i] as Scalar, `after[${i}]`));
  const [first] = keys;
  const v = values[0];
  const rest = afterFrom(keys, values, 1);
  const withRest = (bound: Fragment): Fragment =>
    rest === FALSE
      ? bound
      : { sql: `${bound.sql} OR (${first.x} = ? AND ${rest.sql})`, params: [...bound.params, v, ...rest.params] };
  const nullGroup = rest === FALSE ? [] : [and([{ sql: `${first.x} IS NULL`, params: [] }, rest])];
  if (v === null) {
    return first.desc ? nullGroup : [...nullGroup, { sql: `${first.x} IS NOT NULL`, params: [] }];
  }
  const op = first.desc ? '<' : '>';
  const strict = withRest({ sql: `${first.x} ${op} ?`, params: [v] });
  const bounded = rest === FALSE ? strict : and([{ sql: `${first.x} ${op}= ?`, params: [v] }, strict]);
  return first.desc ? [bounded, { sql: `${first.x} IS NULL`, params: [] }] : [bounded];
}

/**
 * One index name per field list, readable and collision-free (field names may themselves contain `_`). `kind`
 * `columns` names the index on field columns; the default is the name of the older index on json_extract
 * expressions, which `ensureCollections` drops from a file written by an earlier version.
 */
export function indexName(
  collection: string,
  fields: readonly string[],
  kind: 'columns' | 'expressions' = 'expressions',
): string {
  let hash = 0x811c9dc5;
  for (const ch of fields.join(',')) hash = Math.imul(hash ^ ch.charCodeAt(0), 0x01000193) >>> 0;
  return `"ix_${collection}__${fields.join('__')}__${hash.toString(16)}${kind === 'columns' ? '__c' : ''}"`;
}

/**
 * The text index of a collection with `text` fields (ports/text-search.ts): an FTS5 table `fts_<collection>` whose
 * rowid is the collection row's rowid, folded by `unicode61 remove_diacritics 2`, kept in step by triggers on the
 * collection's table (so inside the same transaction as every put and delete). The link is the rowid: the read store
 * never runs VACUUM (which may renumber rowids of tables without an INTEGER PRIMARY KEY); a rebuild is the way to
 * compact. An UPDATE re-indexes only when a text field changed (a price PATCH leaves the index alone).
 */
export function ftsTableOf(collection: string): string {
  return `"fts_${checkCollection(collection)}"`;
}

/**
 * The lengths of the text index's prefix indexes (3 = MIN_PREFIX_LENGTH, ports/text-search.ts). A prefix query of
 * one of these lengths reads one entry of the index, lazily, and stops at the query's LIMIT like a whole word; a
 * longer prefix merges, in memory, the document lists of every word it starts (cost ∝ their documents: 4–6 ms for
 * a common material word at 1,000,000 offers, the most of a search when the index had only '3'). Each length adds an
 * entry per word of at least that length: ~1.5× the index and ~1.7× its write cost (docs/adr/0039-text-search-port.md).
 */
export const FTS_PREFIX_LENGTHS = [3, 4, 5, 6, 7, 8] as const;

/** `USING fts5(…)` of a collection's text index, as `sqlite_master` keeps it (changed → rebuilt at start). */
export function ftsModuleArgs(fields: readonly string[]): string {
  const cols = fields.map((f) => `t_${f}`);
  return `USING fts5(${cols.join(', ')}, tokenize = 'unicode61 remove_diacritics 2', prefix = '${FTS_PREFIX_LENGTHS.join(' ')}')`;
}

/**
 * The change log of a collection with a text index: `chg_<collection> (seq INTEGER PRIMARY KEY, r)`, one row per
 * insert, update or delete of a row of the collection (its rowid), written by triggers in the writer's transaction,
 * the last CHANGE_LOG_KEEP of them kept (each new row removes the one that many before it). Row 0 holds a random
 * token drawn when the log is made, so that a reader can tell a log made anew (the collection dropped and made
 * again) from the one it read before. The embedded search reads it, in the snapshot of each search, to forget the
 * offers it holds that changed since its last search (infra/adapters/sqlite/held-offers.ts).
 */
export function changeLogOf(collection: string): string {
  return `"chg_${checkCollection(collection)}"`;
}

/** Changes a change log keeps: a reader further behind than this forgets everything it holds. */
export const CHANGE_LOG_KEEP = 100_000;

function changeLogSql(collection: string, keep: number): string[] {
  const table = tableOf(collection);
  const log = changeLogOf(collection);
  const name = checkCollection(collection);
  const add = (row: 'new' | 'old') =>
    `INSERT INTO ${log} (r) VALUES (${row}.rowid); DELETE FROM ${log} WHERE seq = (SELECT max(seq) FROM ${log}) - ${keep} AND seq > 0;`;
  return [
    `CREATE TABLE IF NOT EXISTS ${log} (seq INTEGER PRIMARY KEY, r INTEGER NOT NULL)`,
    `INSERT OR IGNORE INTO ${log} (seq, r) VALUES (0, abs(random() % 9007199254740991))`,
    `CREATE TRIGGER IF NOT EXISTS "chg_${name}_ai" AFTER INSERT ON ${table} BEGIN ${add('new')} END`,
    `CREATE TRIGGER IF NOT EXISTS "chg_${name}_au" AFTER UPDATE ON ${table} BEGIN ${add('new')} END`,
    `CREATE TRIGGER IF NOT EXISTS "chg_${name}_ad" AFTER DELETE ON ${table} BEGIN ${add('old')} END`,
  ];
}

export function textIndexSql(
  collection: string,
  fields: readonly string[],
  changesKept: number = CHANGE_LOG_KEEP,
): string[] {
  if (fields.length === 0 || fields.length > 8) throw new RangeError(`collection ${collection}: 1..8 text fields`);
  fields.forEach(checkField);
  const table = tableOf(collection);
  const fts = ftsTableOf(collection);
  const name = checkCollection(collection);
  const cols = fields.map((f) => `t_${f}`);
  const values = (row: 'new' | 'old') =>
    fields.map((f) => `coalesce(json_extract(${row}.doc, '$.${f}'), '')`).join(', ');
  const changed = fields
    .map((f) => `json_extract(old.doc, '$.${f}') IS NOT json_extract(new.doc, '$.${f}')`)
    .join(' OR ');
  return [
    `CREATE VIRTUAL TABLE IF NOT EXISTS ${fts} ${ftsModuleArgs(fields)}`,
    `CREATE TRIGGER IF NOT EXISTS "fts_${name}_ai" AFTER INSERT ON ${table} BEGIN INSERT INTO ${fts} (rowid, ${cols.join(', ')}) VALUES (new.rowid, ${values('new')}); END`,
    `CREATE TRIGGER IF NOT EXISTS "fts_${name}_ad" AFTER DELETE ON ${table} BEGIN DELETE FROM ${fts} WHERE rowid = old.rowid; END`,
    `CREATE TRIGGER IF NOT EXISTS "fts_${name}_au" AFTER UPDATE ON ${table} WHEN ${changed} BEGIN DELETE FROM ${fts} WHERE rowid = old.rowid; INSERT INTO ${fts} (rowid, ${cols.join(', ')}) VALUES (new.rowid, ${values('new')}); END`,
    ...changeLogSql(collection, changesKept),
  ];
}

/** The FTS5 MATCH text of a checked query: each folded word quoted (no operator can reach the engine). */
export function ftsMatch(words: readonly string[], prefixLast: boolean, minPrefix: number): string {
  return words
    .map(
      (w, i) => `"${w.replace(/"/g, '""')}"${prefixLast && i === words.length - 1 && w.length >= minPrefix ? '*' : ''}`,
    )
    .join(' ');
}
