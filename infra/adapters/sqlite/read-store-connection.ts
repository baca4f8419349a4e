/**
 * One better-sqlite3 connection of the read store with the statements it runs, each prepared once per SQL text.
 * Synchronous; the store decides which connection (writer or reader) serves a call and when.
 */
import type Database from 'better-sqlite3';
import type { Doc, Query, Scalar, SumQuery, SumRow, Where } from '../../../shared-schema/ports/read-store.js';
import {
  and,
  bindScalar,
  checkField,
  columnOf,
  columnValue,
  docFieldExpr,
  fieldExpr,
  fieldOfColumn,
  changeLogOf,
  ftsTableOf,
  keysetSegments,
  orderByClause,
  sortKeys,
  tableOf,
  whereParts,
  type Bind,
  type Columns,
  type Fragment,
} from './read-store-sql.js';
import { LIMIT_BOUND } from './limit.js';

type Statement = Database.Statement<unknown[], unknown>;
type Mode = 'rows' | 'pluck' | 'exact' | 'raw';

/** Distinct SQL texts come from code shapes (plus `in` list lengths); the cap (per mode) only guards against the latter. */
export const MAX_STATEMENTS = 500;

export class SqliteConnection {
  private readonly statements: Record<Mode, Map<string, Statement>> = {
    rows: new Map(),
    pluck: new Map(),
    exact: new Map(),
    raw: new Map(),
  };
  private readonly snapshot: (read: () => Doc[]) => Doc[];
  /** The field columns of each collection's table, read off the table once it exists (see `columnsOf`). */
  private readonly columns = new Map<string, TableColumns>();

  constructor(readonly db: Database.Database) {
    this.snapshot = db.transaction((read: () => Doc[]) => read());
  }

  /**
   * The field columns of a collection's table, as the table has them (so a table made by another process, such as a
   * rebuilt generation, is read through its columns too). Remembered once the table exists; `forgetColumns` after
   * this process changes a table. A process that started before another one added columns to a table must restart
   * before writing to it (deployments restart every process on an upgrade).
   */
  columnsOf(collection: string): TableColumns {
    const known = this.columns.get(collection);
    if (known) return known;
    const info = this.db.prepare(`PRAGMA table_info(${tableOf(collection)})`).all() as { name: string }[];
    const entry = tableColumns(
      collection,
      info.map((c) => fieldOfColumn(c.name)).filter((f): f is string => f !== null),
    );
    if (info.length > 0) this.columns.set(collection, entry);
    return entry;
  }

  /** Prepared statements held, all modes together (at most 4 × MAX_STATEMENTS). */
  get statementCount(): number {
    return (
      this.statements.rows.size + this.statements.pluck.size + this.statements.exact.size + this.statements.raw.size
    );
  }

  forgetColumns(): void {
    this.columns.clear();
  }

  /**
   * The prepared statement for `sql`, from the cache when this text ran before. One cache per mode, keyed by the SQL
   * text itself (the hot texts are strings made once per table, whose hash V8 keeps); a full cache is emptied.
   */
  statement(sql: string, mode: Mode = 'rows'): Statement {
    const cache = this.statements[mode];
    let stmt = cache.get(sql);
    if (stmt !== undefined) return stmt;
    try {
      stmt = this.db.prepare(sql);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      const table = /^no such table: coll_(\w+)/.exec(message);
      if (table)
        throw new Error(`unknown collection "${table[1]}": ensureCollections was not called for it`, { cause: err });
      throw err;
    }
    if (mode === 'pluck') stmt.pluck(true);
    if (mode === 'exact') stmt.safeIntegers(true);
    if (mode === 'raw') stmt.raw(true);
    if (cache.size >= MAX_STATEMENTS) cache.clear();
    cache.set(sql, stmt);
    return stmt;
  }

  run(sql: string, params: readonly Bind[] = []): number {
    return this.statement(sql).run(...params).changes;
  }

  get(collection: string, id: string): Doc | null {
    const json = this.statement(this.columnsOf(collection).getDoc, 'pluck').get(checkId(id));
    return typeof json === 'string' ? (JSON.parse(json) as Doc) : null;
  }

  find(collection: string, query: Query = {}): Doc[] {
    const { statements, limit, select } = findSql(collection, query, this.columnsOf(collection).set);
    if (limit === 0) return [];
    let remaining = limit;
    const read = (): Doc[] => {
      const docs: Doc[] = [];
      for (const { sql, params } of statements) {
        if (select !== undefined) {
          // Selected fields: the row's values as they are (text or null), no document parsed.
          const rows = this.statement(sql, 'raw').all(...params, remaining) as unknown[][];
          for (const row of rows) {
            const doc: Doc = { _id: row[0] as string };
            for (let i = 0; i < select.length; i++) doc[select[i]] = selectedValue(row[i + 1], select[i]);
            docs.push(doc);
          }
          if (remaining !== -1) {
            remaining -= rows.length;
            if (remaining === 0) break;
          }
          continue;
        }
        const rows = this.statement(sql, 'pluck').all(...params, remaining) as string[];
        for (const json of rows) docs.push(JSON.parse(json) as Doc);
        if (remaining !== -1) {
          remaining -= rows.length;
          if (remaining === 0) break;
        }
      }
      return docs;
    };
    // Several statements: one read transaction makes them one snapshot.
    return statements.length > 1 && !this.db.inTransaction ? this.snapshot(read) : read();
  }

  count(collection: string, where?: Where): number {
    const { sql, params } = countSql(collection, where, this.columnsOf(collection).set);
    return this.statement(sql, 'pluck').get(...params) as number;
  }

  sum(collection: string, query: SumQuery): SumRow[] {
    const { sql, params } = sumSql(collection, query, this.columnsOf(collection).set);
    const rows = this.statement(sql, 'exact').all(...params) as Record<string, unknown>[];
    return rows.map((row) => ({
      key: groupKey(row.k, row.t),
      count: Number(row.n),
      sums: Object.fromEntries(query.fields.map((f, i) => [f, exactSum(row[`s${i}`], f)])),
    }));
  }

  /** The plan SQLite picks for each statement of a read (diagnosis and tests): EXPLAIN QUERY PLAN details. */
  explain(collection: string, read: ReadShape): string[] {
    const columns = this.columnsOf(collection).set;
    const statements =
      'find' in read
        ? findSql(collection, read.find, columns).statements.map((s) => ({ sql: s.sql, params: [...s.params, -1] }))
        : 'count' in read
          ? [countSql(collection, read.count, columns)]
          : [sumSql(collection, read.sum, columns)];
    return statements.flatMap(({ sql, params }) =>
      (this.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[]).map((r) => r.detail),
    );
  }

  /**
   * Writes the row in one statement when it is new or keeps its field columns (only the document is rewritten then);
   * in two when a field column changes. SQLite rewrites the index entries of every column an UPDATE sets, changed or
   * not, and a projector's update seldom changes an indexed field (measured: a unit of 65 product updates cost about
   * twice as much with every column set).
   */
  put(collection: string, doc: Doc): void {
    const table = this.columnsOf(collection);
    const row = table.row(doc);
    if (this.run(table.upsertKeepingColumns, row) === 0) this.run(table.upsert, row);
  }

  insertIfAbsent(collection: string, doc: Doc): boolean {
    const table = this.columnsOf(collection);
    return this.run(table.insertIfAbsent, table.row(doc)) === 1;
  }

  replaceIf(collection: string, doc: Doc, match: Record<string, Scalar>): boolean {
    const table = this.columnsOf(collection);
    const conditions = Object.entries(match).map(([field, value]) => ({
      sql: `${fieldExpr(field, table.set)} IS ?`,
      params: [bindScalar(value, `match.${field}`)],
    }));
    const w = and([{ sql: '_id = ?', params: [doc._id] }, ...conditions]);
    return this.run(`${table.updatePrefix} WHERE ${w.sql}`, [...table.row(doc).slice(1), ...w.params]) === 1;
  }

  delete(collection: string, id: string): void {
    this.run(`DELETE FROM ${tableOf(collection)} WHERE _id = ?`, [checkId(id)]);
  }

  /** Drops the collection's table with its indexes (a missing one quietly). */
  drop(collection: string): void {
    this.db.exec(`DROP TABLE IF EXISTS ${tableOf(collection)}`); // its text-index and change-log triggers go with it
    this.db.exec(`DROP TABLE IF EXISTS ${ftsTableOf(collection)}`);
    this.db.exec(`DROP TABLE IF EXISTS ${changeLogOf(collection)}`);
    this.columns.delete(collection);
  }

  getCheckpoint(name: string): number {
    const position = this.statement('SELECT position FROM checkpoints WHERE name = ?', 'pluck').get(checkName(name));
    return typeof position === 'number' ? position : 0;
  }

  setCheckpoint(name: string, position: number): void {
    if (!Number.isSafeInteger(position) || position < 0)
      throw new RangeError(`checkpoint ${name}: position must be a non-negative integer`);
    this.run(
      'INSERT INTO checkpoints (name, position) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET position = excluded.position',
      [checkName(name), position],
    );
  }
}

export type ReadShape = { find: Query } | { count: Where | undefined } | { sum: SumQuery };

/** A table's field columns (sorted) and the SQL that writes its rows, made once per table. */
export interface TableColumns {
  fields: readonly string[];
  set: Columns;
  upsert: string;
  /** Inserts the row, or rewrites its document alone when its field columns are unchanged; else changes nothing. */
  upsertKeepingColumns: string;
  insertIfAbsent: string;
  /** `SELECT doc … WHERE _id = ?`. */
  getDoc: string;
  /** `UPDATE … SET doc = ?, <columns> = ?`, to be followed by a WHERE clause; binds `row(doc)` without `_id`. */
  updatePrefix: string;
  /** The bound values of a document's row: `_id`, its JSON, then its field columns in `fields` order. */
  row(doc: Doc): Bind[];
}

function tableColumns(collection: string, unsorted: readonly string[]): TableColumns {
  const fields = [...unsorted].sort();
  const table = tableOf(collection);
  const quoted = fields.map(columnOf);
  const names = ['_id', 'doc', ...quoted].join(', ');
  const values = ['?', '?', ...quoted.map(() => '?')].join(', ');
  const insert = `INSERT INTO ${table} (${names}) VALUES (${values}) ON CONFLICT(_id) DO`;
  return {
    fields,
    set: new Set(fields),
    upsert: `${insert} UPDATE SET ${['doc', ...quoted].map((c) => `${c} = excluded.${c}`).join(', ')}`,
    upsertKeepingColumns: `${insert} UPDATE SET doc = excluded.doc${quoted.length === 0 ? '' : ` WHERE ${quoted.map((c) => `${c} IS excluded.${c}`).join(' AND ')}`}`,
    insertIfAbsent: `${insert} NOTHING`,
    getDoc: `SELECT doc FROM ${table} WHERE _id = ?`,
    updatePrefix: `UPDATE ${table} SET ${['doc', ...quoted].map((c) => `${c} = ?`).join(', ')}`,
    row(doc) {
      const json = docJson(doc); // checks the document first
      const values: Bind[] = [doc._id, json];
      for (const f of fields) values.push(columnValue((doc as Record<string, unknown>)[f]));
      return values;
    },
  };
}

/** A selected field's value: a string, or null (a field the document lacks, or null); anything else is refused. */
function selectedValue(value: unknown, field: string): string | null {
  if (value === null || typeof value === 'string') return value;
  throw new TypeError(`select: the field ${field} holds a value that is not a string`);
}

/**
 * The statements of a `find`, in order (each takes the remaining limit as its last parameter), and the limit. With
 * `select`, each row is `_id` and the selected fields, from their columns when the table has them.
 */
function findSql(
  collection: string,
  query: Query,
  columns: Columns,
): { statements: Fragment[]; limit: number; select: readonly string[] | undefined } {
  const table = tableOf(collection);
  const select = query.select === undefined ? undefined : checkSelect(query.select);
  const out = select === undefined ? 'doc' : ['_id', ...select.map((f) => fieldExpr(f, columns))].join(', ');
  const keys = sortKeys(query.orderBy, columns);
  const base = whereParts(query.where, columns);
  const order = orderByClause(keys);
  const statements = keysetSegments(keys, query.after).map((segment) => {
    const where = and(segment.sql === '1' ? base : [...base, segment]);
    return {
      sql: `SELECT ${out} FROM ${table} WHERE ${where.sql} ORDER BY ${order} ${LIMIT_BOUND}`,
      params: where.params,
    };
  });
  return { statements, limit: query.limit === undefined ? -1 : checkLimit(query.limit), select };
}

function checkSelect(select: unknown): readonly string[] {
  if (!Array.isArray(select)) throw new TypeError('select must be an array of field names');
  for (const f of select as unknown[]) {
    if (typeof f !== 'string' || f === '_id') throw new RangeError(`select: invalid field ${JSON.stringify(f)}`);
    checkField(f);
  }
  return select as readonly string[];
}

function countSql(collection: string, where: Where | undefined, columns: Columns): Fragment {
  const w = and(whereParts(where, columns));
  return { sql: `SELECT COUNT(*) FROM ${tableOf(collection)} WHERE ${w.sql}`, params: w.params };
}

/** Sums and group keys read the document (json_extract's exact integers and JSON types); filters use the columns. */
function sumSql(collection: string, query: SumQuery, columns: Columns): Fragment {
  const w = and(whereParts(query.where, columns));
  if (!Array.isArray(query.fields)) throw new TypeError('sum: fields must be an array');
  const sums = query.fields.map((f: string, i) => `, COALESCE(SUM(${docFieldExpr(f)}), 0) AS s${i}`).join('');
  const table = tableOf(collection);
  if (query.groupBy === undefined) {
    return { sql: `SELECT NULL AS k, NULL AS t, COUNT(*) AS n${sums} FROM ${table} WHERE ${w.sql}`, params: w.params };
  }
  // A field kept in a column groups by it without reading each document (the column holds json_extract's value);
  // a number there may stand for a boolean, so only then is the document's JSON type read.
  const group = fieldExpr(query.groupBy, columns);
  const jsonType = `json_type(doc, '$.${query.groupBy}')`;
  const type =
    query.groupBy === '_id'
      ? "'text'"
      : group === docFieldExpr(query.groupBy)
        ? `MIN(${jsonType})`
        : `MIN(CASE WHEN typeof(${group}) IN ('text', 'null') THEN typeof(${group}) ELSE ${jsonType} END)`;
  return {
    sql: `SELECT ${group} AS k, ${type} AS t, COUNT(*) AS n${sums} FROM ${table} WHERE ${w.sql} GROUP BY ${group} ORDER BY ${group}`,
    params: w.params,
  };
}

function checkId(id: unknown): string {
  if (typeof id !== 'string' || id.length === 0) throw new TypeError('_id must be a non-empty string');
  return id;
}

function checkName(name: unknown): string {
  if (typeof name !== 'string' || name.length === 0) throw new TypeError('checkpoint name must be a non-empty string');
  return name;
}

function checkLimit(limit: number): number {
  if (!Number.isSafeInteger(limit) || limit < 0)
    throw new RangeError(`limit must be a non-negative integer, got ${limit}`);
  return limit;
}

function docJson(doc: Doc): string {
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc))
    throw new TypeError('a document must be an object');
  checkId(doc._id);
  return JSON.stringify(doc);
}

/** json_extract turned true/false into 1/0; json_type remembers which it was. Integers arrive as BigInt here. */
function groupKey(value: unknown, jsonType: unknown): Scalar {
  if (jsonType === 'true' || jsonType === 'false') return Number(value) !== 0;
  if (typeof value === 'bigint') return Number(value);
  return value as Scalar;
}

function exactSum(value: unknown, field: string): bigint {
  if (typeof value === 'bigint') return value;
  throw new RangeError(`sum of ${field}: the field holds values that are not integers`);
}
