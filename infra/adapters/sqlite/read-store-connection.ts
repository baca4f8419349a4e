/**
 * One better-sqlite3 connection of the read store with the statements it runs, each prepared once per SQL text.
 * Synchronous; the store decides which connection (writer or reader) serves a call and when.
 */
import type Database from 'better-sqlite3';
import type { Doc, Query, Scalar, SumQuery, SumRow, Where } from '../../../shared-schema/ports/read-store.js';
import {
  and,
  bindScalar,
  columnOf,
  columnValue,
  docFieldExpr,
  fieldExpr,
  fieldOfColumn,
  changeLogOf,
  ftsTableOf,
  keysetSegments,
  narrowedByKeyset,
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
  /**
   * Inside a unit of work (`beginUnit` … `endUnit`): the field columns of each row the unit has read or written, by
   * collection then `_id` (null: no such row), as the row holds them now. A `put` of such a row then knows which
   * columns it changes and writes in one statement. Only this connection writes inside its unit, so they stay true
   * until it ends.
   */
  private held: Map<string, Map<string, Bind[] | null>> | null = null;
  /**
   * Inside a unit: the checkpoints it set, by name, written together by `flushCheckpoints` before its COMMIT. The
   * runner sets every projector's checkpoint in each unit: one statement for all of them instead of one each.
   */
  private checkpoints: Map<string, number> | null = null;

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
    const { rows, pluck, exact, raw } = this.statements;
    return rows.size + pluck.size + exact.size + raw.size;
  }

  forgetColumns(): void {
    this.columns.clear();
  }

  /** A unit of work began on this connection (its BEGIN ran): rows read from now on keep their columns for `put`. */
  beginUnit(): void {
    this.held = new Map();
    this.checkpoints = new Map();
  }

  /** The unit ended (committed or rolled back): what it knew of its rows, and checkpoints not written, are forgotten. */
  endUnit(): void {
    this.held = null;
    this.checkpoints = null;
  }

  private heldOf(collection: string): Map<string, Bind[] | null> | undefined {
    if (this.held === null) return undefined;
    let rows = this.held.get(collection);
    if (rows === undefined) this.held.set(collection, (rows = new Map<string, Bind[] | null>()));
    return rows;
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
    const table = this.columnsOf(collection);
    const held = this.heldOf(collection);
    if (held === undefined) {
      const json = this.statement(table.getDoc, 'pluck').get(checkId(id));
      return typeof json === 'string' ? (JSON.parse(json) as Doc) : null;
    }
    // In a unit: the row's columns come with its document (the row is visited anyway), for a `put` that follows.
    const row = this.statement(table.getDocAndColumns, 'raw').get(checkId(id)) as Bind[] | undefined;
    if (row === undefined) {
      held.set(id, null);
      return null;
    }
    held.set(id, row.slice(1));
    return JSON.parse(row[0] as string) as Doc;
  }

  find(collection: string, query: Query = {}): Doc[] {
    const { statements, limit } = findSql(collection, query, this.columnsOf(collection).set);
    if (limit === 0) return [];
    let remaining = limit;
    const fields = query.fields;
    const read = (): Doc[] => {
      const docs: Doc[] = [];
      for (const { sql, params } of statements) {
        let rows: unknown[];
        if (fields === undefined) {
          rows = this.statement(sql, 'pluck').all(...params, remaining);
          for (const json of rows) docs.push(JSON.parse(json as string) as Doc);
        } else {
          // A projection: `_id` and each field as its column (or json_extract) holds it, no document parsed.
          rows = this.statement(sql, 'raw').all(...params, remaining);
          for (const row of rows as unknown[][]) {
            const doc: Doc = { _id: row[0] as string };
            for (let i = 0; i < fields.length; i++) doc[fields[i]] = row[i + 1];
            docs.push(doc);
          }
        }
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
   * when a field column changes, reads the row's columns and sets the document and the changed columns alone. SQLite
   * rewrites the index entries of every column an UPDATE sets, changed or not, and a projector's update seldom
   * changes an indexed field (measured: a unit of 65 product updates cost about twice as much with every column set);
   * when one does (a product's `last_write_at`, in one index of seven), the other indexes are left alone.
   */
  put(collection: string, doc: Doc): void {
    const table = this.columnsOf(collection);
    const row = table.row(doc);
    const id = row[0] as string;
    const unit = this.heldOf(collection);
    let held = unit?.get(id);
    if (held === undefined) {
      // Not read in this unit: one statement when the row is new or keeps its columns, else read them.
      if (this.run(table.upsertKeepingColumns, row) !== 0) {
        unit?.set(id, row.slice(2));
        return;
      }
      held = (this.statement(table.getColumns, 'raw').get(id) as Bind[] | undefined) ?? null;
    }
    if (held === null) this.run(table.upsert, row);
    else {
      const changed: number[] = [];
      // Compared as stored: a bound value reads back as the same string or number (the columns have no affinity).
      for (let i = 0; i < table.fields.length; i++) if (held[i] !== row[i + 2]) changed.push(i);
      this.run(table.updateOf(changed), [row[1], ...changed.map((i) => row[i + 2]), id]);
    }
    unit?.set(id, row.slice(2));
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
    this.heldOf(collection)?.set(id, null);
  }

  /** Drops the collection's table with its indexes (a missing one quietly). */
  drop(collection: string): void {
    this.db.exec(`DROP TABLE IF EXISTS ${tableOf(collection)}`); // its text-index and change-log triggers go with it
    this.db.exec(`DROP TABLE IF EXISTS ${ftsTableOf(collection)}`);
    this.db.exec(`DROP TABLE IF EXISTS ${changeLogOf(collection)}`);
    this.columns.delete(collection);
  }

  getCheckpoint(name: string): number {
    const set = this.checkpoints?.get(checkName(name));
    if (set !== undefined) return set;
    const position = this.statement('SELECT position FROM checkpoints WHERE name = ?', 'pluck').get(checkName(name));
    return typeof position === 'number' ? position : 0;
  }

  setCheckpoint(name: string, position: number): void {
    if (!Number.isSafeInteger(position) || position < 0)
      throw new RangeError(`checkpoint ${name}: position must be a non-negative integer`);
    if (this.checkpoints !== null) this.checkpoints.set(checkName(name), position);
    else this.run(checkpointsSql(1), [checkName(name), position]);
  }

  /** Writes the checkpoints the unit set (in the order first set), in one statement per CHECKPOINT_ROWS of them. */
  flushCheckpoints(): void {
    const set = this.checkpoints;
    if (set === null || set.size === 0) return;
    const params: Bind[] = [];
    for (const [name, position] of set) params.push(name, position);
    set.clear();
    for (let i = 0; i < params.length; i += 2 * CHECKPOINT_ROWS) {
      const part = params.slice(i, i + 2 * CHECKPOINT_ROWS);
      this.run(checkpointsSql(part.length / 2), part);
    }
  }
}

/** Checkpoints per statement at most (2 bound values each, well under SQLite's limit of bound values). */
const CHECKPOINT_ROWS = 500;

const checkpointTexts = new Map<number, string>();

/** The upsert of `rows` checkpoints: one text per number of rows (a runner sets the same number in every unit). */
function checkpointsSql(rows: number): string {
  let sql = checkpointTexts.get(rows);
  if (sql === undefined) {
    const values = Array.from({ length: rows }, () => '(?, ?)').join(', ');
    sql = `INSERT INTO checkpoints (name, position) VALUES ${values} ON CONFLICT(name) DO UPDATE SET position = excluded.position`;
    checkpointTexts.set(rows, sql);
  }
  return sql;
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
  /** `SELECT <columns> … WHERE _id = ?`, in `fields` order. */
  getColumns: string;
  /** `SELECT doc, <columns> … WHERE _id = ?`, the columns in `fields` order. */
  getDocAndColumns: string;
  /** `UPDATE … SET doc = ?, <the columns at these indexes of fields> = ? WHERE _id = ?` (made once per set). */
  updateOf(changed: readonly number[]): string;
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
  const updates = new Map<string, string>();
  return {
    fields,
    set: new Set(fields),
    upsert: `${insert} UPDATE SET ${['doc', ...quoted].map((c) => `${c} = excluded.${c}`).join(', ')}`,
    upsertKeepingColumns: `${insert} UPDATE SET doc = excluded.doc${quoted.length === 0 ? '' : ` WHERE ${quoted.map((c) => `${c} IS excluded.${c}`).join(' AND ')}`}`,
    insertIfAbsent: `${insert} NOTHING`,
    getDoc: `SELECT doc FROM ${table} WHERE _id = ?`,
    getColumns: `SELECT ${quoted.length === 0 ? 'NULL' : quoted.join(', ')} FROM ${table} WHERE _id = ?`,
    getDocAndColumns: `SELECT ${['doc', ...quoted].join(', ')} FROM ${table} WHERE _id = ?`,
    updateOf(changed) {
      const key = changed.join(',');
      let sql = updates.get(key);
      if (sql === undefined) {
        sql = `UPDATE ${table} SET ${['doc', ...changed.map((i) => quoted[i])].map((c) => `${c} = ?`).join(', ')} WHERE _id = ?`;
        updates.set(key, sql);
      }
      return sql;
    },
    updatePrefix: `UPDATE ${table} SET ${['doc', ...quoted].map((c) => `${c} = ?`).join(', ')}`,
    row(doc) {
      const json = docJson(doc); // checks the document first
      const values: Bind[] = [doc._id, json];
      for (const f of fields) values.push(columnValue((doc as Record<string, unknown>)[f]));
      return values;
    },
  };
}

/** The statements of a `find`, in order (each takes the remaining limit as its last parameter), and the limit. */
function findSql(collection: string, query: Query, columns: Columns): { statements: Fragment[]; limit: number } {
  const table = tableOf(collection);
  const keys = sortKeys(query.orderBy, columns);
  const base = whereParts(narrowedByKeyset(query.where, query.orderBy, query.after), columns);
  const order = orderByClause(keys);
  const out = query.fields === undefined ? 'doc' : projection(query.fields, columns);
  const statements = keysetSegments(keys, query.after).map((segment) => {
    const where = and(segment.sql === '1' ? base : [...base, segment]);
    return {
      sql: `SELECT ${out} FROM ${table} WHERE ${where.sql} ORDER BY ${order} ${LIMIT_BOUND}`,
      params: where.params,
    };
  });
  return { statements, limit: query.limit === undefined ? -1 : checkLimit(query.limit) };
}

/**
 * The select list of a projection: `_id`, then each field from its column when it has one, else from the document.
 * Both give a string, number or null as the document holds it (the port asks for scalars only).
 */
function projection(fields: unknown, columns: Columns): string {
  if (!Array.isArray(fields)) throw new TypeError('fields: expected an array of field names');
  // fieldExpr checks each name (a string, a plain identifier) before it reaches the SQL text.
  return ['_id', ...(fields as unknown[]).map((f) => fieldExpr(f as string, columns))].join(', ');
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
