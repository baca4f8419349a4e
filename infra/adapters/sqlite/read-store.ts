/**
 * The read-model port on an embedded SQLite file (better-sqlite3, WAL). Several processes may open the same file:
 * the projections process writes, query-api replicas read.
 *
 * Two connections per store: the writer runs units of work (BEGIN IMMEDIATE … COMMIT) and the single-statement
 * writes, one at a time through a mutex; the reader (query_only) serves reads made through the store itself, which
 * therefore see committed data only. Reads through a unit's `tx` go to the writer and see the unit's own writes.
 * Collection `x` is table `coll_x (_id TEXT PRIMARY KEY, doc TEXT NOT NULL)`; each declared index is an index on
 * `json_extract(doc, '$.field')` expressions followed by `_id`, so the `_id` tie-breaker is served too.
 */
import { makePrivate } from './private-file.js';
import { AsyncLocalStorage } from 'node:async_hooks';
import fs from 'node:fs';
import { isMainThread } from 'node:worker_threads';
import path from 'node:path';
import Database from 'better-sqlite3';
import { systemClock, type Clock } from '../../../shared-schema/ports/clock.js';
import type {
  CollectionSpec,
  Doc,
  Query,
  ReadStore,
  ReadTx,
  Scalar,
  SumQuery,
  SumRow,
  Where,
} from '../../../shared-schema/ports/read-store.js';
import { SqliteConnection, type ReadShape } from './read-store-connection.js';
import { LIMIT_BOUND } from './limit.js';
import { enableWal } from './wal.js';
import {
  checkField,
  columnOf,
  docFieldExpr,
  fieldExpr,
  fieldOfColumn,
  and,
  whereParts,
  ftsMatch,
  ftsModuleArgs,
  ftsTableOf,
  indexName,
  tableOf,
  textIndexSql,
} from './read-store-sql.js';
import {
  checkTextQuery,
  MAX_TEXT_SCAN,
  MIN_PREFIX_LENGTH,
  sharedValues,
  type TextQuery,
  type TextSearchable,
} from '../../../shared-schema/ports/text-search.js';

export interface SqliteReadStoreOptions {
  /** The database file (created with its directory when missing, unless `fileMustExist` or `readOnly`). */
  path: string;
  /**
   * Another part of the service created the file (the threads beside the one that opened it first): it is opened,
   * never created, nor its directory. A thread that starts after the data directory was removed fails instead of
   * making it again. Implied by `readOnly`.
   */
  fileMustExist?: boolean;
  /**
   * PRAGMA synchronous: NORMAL (default) may lose the last commits on power loss, never consistency. OFF only for a
   * store thrown away after use (an audit's scratch store): a crash of the machine may corrupt it.
   */
  synchronous?: 'FULL' | 'NORMAL' | 'OFF';
  /** Time for the expiry sweep (default: the system clock). */
  clock?: Clock;
  /** Milliseconds between sweeps of `expires` collections; 0 turns the timer off (default 60 000). */
  sweepIntervalMs?: number;
  /** How long a write waits for another process's lock before failing with SQLITE_BUSY (default 5 000). */
  busyTimeoutMs?: number;
  /**
   * Refuse, with an error, a call that would wait for the writer from inside a unit of work (a deadlock otherwise).
   * Off by default: it needs an AsyncLocalStorage, and on Node 20 one live AsyncLocalStorage turns on promise hooks
   * for every promise of the process (a few per cent of the write path in `make bench`). The contract suite turns it
   * on to show the misuse is caught; without it such a unit hangs (tests see a timeout).
   */
  detectReentry?: boolean;
  /**
   * Reads only (a reader thread beside the process that writes): both connections `query_only`, nothing created nor
   * set on the file, which the writing process has opened in WAL mode. Every write call fails.
   */
  readOnly?: boolean;
  /**
   * Another thread of this process writes the same file (the projection thread): a write of this store that finds
   * the write lock taken tries again on a timer, for at most `busyTimeoutMs`, instead of SQLite's busy wait, which
   * would stop this thread's event loop for as long as the other one's unit lasts. Default false.
   */
  yieldWhenBusy?: boolean;
  /** The size past which the writer starts the write-ahead log over (`boundLog`). Default WAL_BOUND_BYTES. */
  walBoundBytes?: number;
}

/**
 * The write-ahead log's bound. SQLite copies the log into the database every 1,000 pages (`wal_autocheckpoint`), but
 * starts writing it from its beginning again only when a copy finished while no reader was on an older part of it:
 * under steady reads beside steady writes that moment may not come, and the file grew to 1.3 GB in a minute of
 * `make bench-scale` (a database of 1.1 GB). Past this size the writer copies the log in RESTART mode, which waits for
 * the readers still on the old part (single statements: milliseconds), and `journal_size_limit` truncates the file
 * back to this size when the log starts over.
 */
export const WAL_BOUND_BYTES = 64 * 1024 * 1024;
/**
 * How long a RESTART copy waits for readers, on a worker thread (the projection thread's store). On the main thread,
 * or in a store that yields when busy, it does not wait: an event loop must not stop.
 */
const WAL_RESTART_WAIT_MS = 50;
/**
 * Milliseconds between two looks at the log's size (one `stat` each, after a commit); each copy that could not
 * finish (a reader holding an old snapshot for long, such as a backup) doubles the pause, up to the maximum.
 */
const WAL_LOOK_MS = 100;
const WAL_LOOK_MAX_MS = 5_000;

/** Rows per unit when documents already stored join a new text index (~0.2 s of the writer each). */
const TEXT_FILL_ROWS = 20_000;
/** The row of `checkpoints` holding how far the text index of a collection has taken in its stored documents. */
const fillMark = (collection: string): string => `text-index-fill:${collection}`;
const SET_FILL_MARK =
  'INSERT INTO checkpoints (name, position) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET position = excluded.position';

const isBusy = (err: unknown): boolean => String((err as { code?: unknown }).code).startsWith('SQLITE_BUSY');
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs tasks one at a time, in call order; a failed task does not block the next. */
class Mutex {
  private tail: Promise<unknown> = Promise.resolve();
  run<T>(task: () => T | Promise<T>): Promise<T> {
    const result = this.tail.then(() => task());
    this.tail = result.catch(() => undefined);
    return result;
  }
}

export class SqliteReadStore implements ReadStore, TextSearchable {
  private readonly mutex = new Mutex();
  /** Set inside a unit of work, to refuse calls that would wait for the mutex the unit holds (`detectReentry`). */
  private readonly inUnit: AsyncLocalStorage<true> | null;
  private readonly expiring = new Set<string>();
  /** Text index → its first column (`textSearch`); forgotten when this process changes tables. */
  private readonly firstTextColumns = new Map<string, string>();
  private readonly sweepTimer: NodeJS.Timeout | undefined;
  private closing = false;
  private lookedAt = 0;
  private lookPauseMs = WAL_LOOK_MS;

  private constructor(
    /** The database file. */
    readonly file: string,
    private readonly writer: SqliteConnection,
    private readonly reader: SqliteConnection,
    private readonly clock: Clock,
    sweepIntervalMs: number,
    detectReentry: boolean,
    /** Milliseconds a write waits for the lock on a timer (`yieldWhenBusy`); undefined: SQLite's busy wait. */
    private readonly busyYieldMs: number | undefined,
    /** `SqliteReadStoreOptions.walBoundBytes`. */
    private readonly walBoundBytes: number,
  ) {
    this.inUnit = detectReentry ? new AsyncLocalStorage<true>() : null;
    if (sweepIntervalMs > 0) {
      this.sweepTimer = setInterval(() => void this.sweepExpired().catch(() => undefined), sweepIntervalMs);
      this.sweepTimer.unref();
    }
  }

  static open(options: SqliteReadStoreOptions): SqliteReadStore {
    const busyTimeout = options.busyTimeoutMs ?? 5000;
    const synchronous = options.synchronous ?? 'NORMAL';
    if (synchronous !== 'FULL' && synchronous !== 'NORMAL' && synchronous !== 'OFF')
      throw new RangeError(`synchronous: ${String(synchronous)}`);
    if (options.path === ':memory:' || options.path === '') {
      throw new RangeError('SqliteReadStore needs a file: its reader and writer connections share it');
    }
    const fileMustExist = options.fileMustExist === true || options.readOnly === true;
    if (!fileMustExist) {
      fs.mkdirSync(path.dirname(path.resolve(options.path)), { recursive: true });
      makePrivate(options.path);
    }
    const writer = new Database(options.path, { fileMustExist });
    const reader = new Database(options.path, { fileMustExist });
    try {
      writer.pragma(`busy_timeout = ${options.yieldWhenBusy ? 0 : Math.floor(busyTimeout)}`);
      if (options.readOnly) writer.pragma('query_only = ON');
      else {
        enableWal(writer, busyTimeout);
        writer.pragma(`synchronous = ${synchronous}`);
        writer.pragma(`journal_size_limit = ${Math.floor(options.walBoundBytes ?? WAL_BOUND_BYTES)}`);
        writer.exec('CREATE TABLE IF NOT EXISTS checkpoints (name TEXT PRIMARY KEY, position INTEGER NOT NULL)');
      }
      reader.pragma(`busy_timeout = ${Math.floor(busyTimeout)}`);
      reader.pragma('query_only = ON');
    } catch (err) {
      writer.close();
      reader.close();
      throw err;
    }
    return new SqliteReadStore(
      options.path,
      new SqliteConnection(writer),
      new SqliteConnection(reader),
      options.clock ?? systemClock,
      options.sweepIntervalMs ?? 60_000,
      options.detectReentry ?? false,
      options.yieldWhenBusy ? busyTimeout : undefined,
      options.walBoundBytes ?? WAL_BOUND_BYTES,
    );
  }

  /**
   * Creates each collection's table and indexes. The fields its indexes, `filtered` and `projected` name get columns of
   * their own (read-store-sql.ts); a table written by an earlier version (indexes on json_extract expressions, or
   * fewer columns) gains the columns, filled from the documents, and loses the expression indexes, in the same
   * transaction.
   */
  async ensureCollections(specs: readonly CollectionSpec[]): Promise<void> {
    const plans = specs.map((spec) => {
      tableOf(spec.name); // validates the name before any SQL
      const indexes = (spec.expires ? [...spec.indexes, ['expires_at']] : spec.indexes).filter((fields) => {
        if (fields.length === 0) throw new RangeError(`collection ${spec.name}: an index needs at least one field`);
        fields.forEach(checkField);
        return !(fields.length === 1 && fields[0] === '_id'); // the primary key
      });
      const kept = [...(spec.filtered ?? []), ...(spec.projected ?? [])];
      kept.forEach(checkField);
      const fields = [...new Set([...indexes.flat(), ...kept])].filter((f) => f !== '_id').sort();
      return { spec, indexes, fields };
    });
    const fills: { mark: string; fts: string; table: string; cols: string; values: string }[] = [];
    const builds: string[] = [];
    await this.exclusive(async () => {
      const db = this.writer.db;
      const create = db.transaction(() => {
        for (const { spec, indexes, fields } of plans) {
          const table = tableOf(spec.name);
          db.exec(
            `CREATE TABLE IF NOT EXISTS ${table} (_id TEXT PRIMARY KEY, doc TEXT NOT NULL${fields.map((f) => `, ${columnOf(f)}`).join('')})`,
          );
          const present = new Set(
            (db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).map((c) => fieldOfColumn(c.name)),
          );
          for (const f of fields) {
            if (present.has(f)) continue;
            db.exec(`ALTER TABLE ${table} ADD COLUMN ${columnOf(f)}`);
            db.exec(`UPDATE ${table} SET ${columnOf(f)} = ${docFieldExpr(f)}`);
          }
          const indexed = (db.prepare(`PRAGMA index_list(${table})`).all() as { name: string }[]).map((i) => i.name);
          const held = db.prepare(`SELECT 1 FROM ${table} LIMIT 1`).get() !== undefined;
          const declared = new Set<string>();
          for (const index of indexes) {
            db.exec(`DROP INDEX IF EXISTS ${indexName(spec.name, index)}`);
            const name = indexName(spec.name, index, 'columns');
            declared.add(name.slice(1, -1));
            if (indexed.includes(name.slice(1, -1))) continue;
            const columns = index.map((f) => (f === '_id' ? '_id' : columnOf(f)));
            if (!index.includes('_id')) columns.push('_id');
            const sql = `CREATE INDEX IF NOT EXISTS ${name} ON ${table} (${columns.join(', ')})`;
            if (held) builds.push(sql);
            else db.exec(sql);
          }
          // An index of ours the spec no longer declares (a read that changed its shape) would only cost every put.
          for (const name of indexed) {
            if (name.startsWith('ix_') && name.endsWith('__c') && !declared.has(name)) db.exec(`DROP INDEX "${name}"`);
          }
          if (spec.text && spec.text.length > 0) {
            const fts = ftsTableOf(spec.name).slice(1, -1);
            const defined = db
              .prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?")
              .pluck()
              .get(fts) as string | undefined;
            // An index made with other options (an older prefix set) is made again; its triggers stay valid.
            const existed = defined !== undefined && defined.endsWith(ftsModuleArgs(spec.text));
            if (defined !== undefined && !existed) db.exec(`DROP TABLE ${ftsTableOf(spec.name)}`);
            for (const sql of textIndexSql(spec.name, spec.text)) db.exec(sql);
            // Documents already stored join a new text index below, in units; the mark says how far it got, so a
            // fill cut short by a crash goes on at the next start.
            if (!existed) db.prepare(SET_FILL_MARK).run(fillMark(spec.name), 0);
            fills.push({
              mark: fillMark(spec.name),
              fts: ftsTableOf(spec.name),
              table,
              cols: spec.text.map((f) => `t_${f}`).join(', '),
              values: spec.text.map((f) => `coalesce(json_extract(c.doc, '$.${f}'), '')`).join(', '),
            });
          }
        }
      });
      await this.whenFree(() => create.immediate());
      this.writer.forgetColumns();
      this.reader.forgetColumns();
      this.firstTextColumns.clear();
      for (const { spec } of plans) if (spec.expires) this.expiring.add(spec.name);
    });
    // An index new to a table that holds rows (a rebuild declares those its projector does not read through once the
    // documents are in; a newer version declares one more) is built in a unit of its own: a million rows take about
    // half a second an index, which other units of the writer should not wait for all at once.
    for (const sql of builds) await this.exclusive(() => this.whenFree(() => this.writer.db.exec(sql)));
    // Documents written before the collection had a text index (a rebuild declares it once its documents are in, an
    // older version had none) join it now, in units of TEXT_FILL_ROWS rows so that other units of the writer are not
    // held behind the whole collection. The triggers already keep the rows written meanwhile, so a row that is in
    // the text index by the time its unit comes is left alone.
    for (const { mark, fts, table, cols, values } of fills) {
      const db = this.writer.db;
      const fill = db.prepare(
        `INSERT INTO ${fts} (rowid, ${cols}) SELECT c.rowid, ${values} FROM ${table} c WHERE c.rowid > ? AND c.rowid <= ? AND NOT EXISTS (SELECT 1 FROM ${fts} f WHERE f.rowid = c.rowid)`,
      );
      const unit = db.transaction((): boolean => {
        const from = db.prepare('SELECT position FROM checkpoints WHERE name = ?').pluck().get(mark);
        if (typeof from !== 'number') return false;
        const top = db.prepare(`SELECT max(rowid) FROM ${table}`).pluck().get();
        if (typeof top !== 'number' || from >= top) {
          db.prepare('DELETE FROM checkpoints WHERE name = ?').run(mark);
          return false;
        }
        fill.run(from, from + TEXT_FILL_ROWS);
        db.prepare(SET_FILL_MARK).run(mark, from + TEXT_FILL_ROWS);
        return true;
      });
      while (await this.exclusive(() => this.whenFree(() => unit.immediate()))) {
        /* one unit at a time, others of the writer in between */
      }
    }
  }

  /**
   * After a commit, at most every WAL_LOOK_MS, starts the write-ahead log over when it has grown past its bound
   * (WAL_BOUND_BYTES). A copy that cannot finish (a reader still on the old part past the wait, another connection
   * copying) is tried again at a later look, later each time it fails; the unit it follows is committed whatever
   * happens here.
   */
  private boundLog(): void {
    const now = Date.now();
    if (now - this.lookedAt < this.lookPauseMs) return;
    this.lookedAt = now;
    const db = this.writer.db;
    try {
      if (fs.statSync(`${this.file}-wal`).size <= this.walBoundBytes) {
        this.lookPauseMs = WAL_LOOK_MS;
        return;
      }
      const busy = db.pragma('busy_timeout', { simple: true }) as number;
      const wait = isMainThread || this.busyYieldMs !== undefined ? 0 : WAL_RESTART_WAIT_MS;
      db.pragma(`busy_timeout = ${wait}`);
      let copied: { busy: number }[];
      try {
        copied = db.pragma('wal_checkpoint(RESTART)') as { busy: number }[];
      } finally {
        db.pragma(`busy_timeout = ${busy}`);
      }
      this.lookPauseMs = copied[0]?.busy === 0 ? WAL_LOOK_MS : Math.min(2 * this.lookPauseMs, WAL_LOOK_MAX_MS);
    } catch {
      // No log file yet, or SQLITE_BUSY from the pragma itself: the next look tries again.
    }
  }

  async transact<T>(work: (tx: ReadTx) => Promise<T>): Promise<T> {
    const unit = async (): Promise<T> => {
      const db = this.writer.db;
      await this.whenFree(() => db.exec('BEGIN IMMEDIATE'));
      const tx = new SqliteTx(this.writer);
      this.writer.beginUnit();
      let result: T;
      try {
        result = await work(tx);
        tx.end();
        this.writer.flushCheckpoints();
        db.exec('COMMIT');
      } catch (err) {
        tx.end();
        if (db.inTransaction) db.exec('ROLLBACK');
        throw err;
      } finally {
        this.writer.endUnit();
      }
      this.boundLog();
      return result;
    };
    return this.exclusive(() => (this.inUnit ? this.inUnit.run(true, unit) : unit()));
  }

  async get<T extends Doc = Doc>(collection: string, id: string): Promise<T | null> {
    this.assertOpen();
    return this.reader.get(collection, id) as T | null;
  }

  async find<T extends Doc = Doc>(collection: string, query?: Query): Promise<T[]> {
    this.assertOpen();
    return this.reader.find(collection, query) as T[];
  }

  async count(collection: string, where?: Where): Promise<number> {
    this.assertOpen();
    return this.reader.count(collection, where);
  }

  async sum(collection: string, query: SumQuery): Promise<SumRow[]> {
    this.assertOpen();
    return this.reader.sum(collection, query);
  }

  /**
   * Documents of `collection` whose text fields hold every word (the last one as a prefix when asked), at most
   * `limit`: first those whose FIRST text field alone holds every word (for the offers, the title: the best relevance
   * tier of the shopper ranking), then the others, each part in FTS5's order. The cost is bounded by the limit, not
   * by the matches; the second part is read only when the first leaves room. With `where`, the index's entries are
   * joined to their rows and tested as they stream by, at most MAX_TEXT_SCAN of them per part.
   */
  async textSearch<T extends Doc = Doc>(collection: string, query: TextQuery): Promise<T[]> {
    this.assertOpen();
    checkTextQuery(query);
    const fts = ftsTableOf(collection);
    const first = this.firstTextColumn(fts);
    const match = ftsMatch(query.words, query.prefixLast, MIN_PREFIX_LENGTH);
    const table = tableOf(collection);
    const where = and(whereParts(query.where, this.reader.columnsOf(collection).set));
    // The matching rows of the table: the index's entries joined to their rows (`where` tested as they stream by, at
    // most MAX_TEXT_SCAN of them), up to the limit; `out` is what is read of each row.
    const matching = (out: string): string =>
      query.where === undefined
        ? `SELECT ${out} FROM ${fts} f JOIN ${table} c ON c.rowid = f.rowid WHERE ${fts} MATCH ? ${LIMIT_BOUND}`
        : `SELECT ${out} FROM (SELECT rowid FROM ${fts} WHERE ${fts} MATCH ? LIMIT ${MAX_TEXT_SCAN}) f JOIN ${table} c ON c.rowid = f.rowid WHERE ${where.sql} ${LIMIT_BOUND}`;
    type Row = { r: number; d: string };
    const read = this.reader.statement(matching('c.rowid AS r, c.doc AS d'));
    const all = (text: string): Row[] => read.all(text, ...where.params, query.limit) as Row[];
    const matches = (): Row[] => {
      if (first === undefined) return all(match);
      const found = all(`${first} : (${match})`);
      if (found.length === query.limit) return found;
      // Every match of the first field is in `found`, so the first `limit` matches hold at least the room left of
      // the others, in FTS5's order: the same rows as `match NOT first : match`, without a second pass of the first.
      // Their rowids first: the documents of the rows not in `found` only are read (most are, when titles match).
      const seen = new Set(found.map((row) => row.r));
      const others: number[] = [];
      for (const r of this.reader.statement(matching('c.rowid'), 'pluck').all(match, ...where.params, query.limit)) {
        if (found.length + others.length === query.limit) break;
        if (!seen.has(r as number)) others.push(r as number);
      }
      if (others.length === 0) return found;
      const docs = new Map(
        (
          this.reader
            .statement(`SELECT rowid AS r, doc AS d FROM ${table} WHERE rowid IN (SELECT value FROM json_each(?))`)
            .all(JSON.stringify(others)) as Row[]
        ).map((row) => [row.r, row.d]),
      );
      for (const r of others) found.push({ r, d: docs.get(r)! });
      return found;
    };
    // One read transaction: every part sees the same snapshot.
    return this.reader.db.transaction((): T[] => {
      const rows = matches();
      const docs = rows.map((row) => JSON.parse(row.d) as T);
      const field = query.sharing;
      const values = field === undefined ? [] : sharedValues(docs, field);
      if (field === undefined || values.length === 0) return docs;
      // One statement whatever the number of values (its text, and so its prepared plan, is the same every time);
      // the rows already found are left out in SQLite, before their documents are read and parsed again.
      const sharing = this.reader.statement(
        `SELECT doc FROM ${table} WHERE ${fieldExpr(field, this.reader.columnsOf(collection).set)} IN (SELECT value FROM json_each(?)) AND rowid NOT IN (SELECT value FROM json_each(?))`,
        'pluck',
      );
      for (const json of sharing.all(JSON.stringify(values), JSON.stringify(rows.map((row) => row.r))) as string[])
        docs.push(JSON.parse(json) as T);
      return docs;
    })();
  }

  /** The first column of a text index (its collection's first text field), from its schema, read once. */
  private firstTextColumn(fts: string): string | undefined {
    const known = this.firstTextColumns.get(fts);
    if (known !== undefined) return known;
    const columns = this.reader.statement(`PRAGMA table_info(${fts})`).all() as { name: string }[];
    const first = columns[0]?.name;
    if (first !== undefined) this.firstTextColumns.set(fts, first);
    return first;
  }

  async getCheckpoint(name: string): Promise<number> {
    this.assertOpen();
    return this.reader.getCheckpoint(name);
  }

  insertIfAbsent(collection: string, doc: Doc): Promise<boolean> {
    return this.exclusive(() => this.whenFree(() => this.writer.insertIfAbsent(collection, doc)));
  }

  replaceIf(collection: string, doc: Doc, match: Record<string, Scalar>): Promise<boolean> {
    return this.exclusive(() => this.whenFree(() => this.writer.replaceIf(collection, doc, match)));
  }

  remove(collection: string, id: string): Promise<void> {
    return this.exclusive(() => this.whenFree(() => this.writer.delete(collection, id)));
  }

  /** Drops the collection's table and indexes; `ensureCollections` declares it again (rebuilds drop old generations). */
  drop(collection: string): Promise<void> {
    return this.exclusive(() =>
      this.whenFree(() => {
        this.writer.drop(collection);
        this.reader.forgetColumns();
        this.firstTextColumns.clear();
      }),
    );
  }

  /**
   * Deletes the documents of `expires` collections whose `expires_at` (epoch ms, or an ISO date-time compared as
   * a time, any offset) is in the past. Runs on a timer; callable directly. Returns how many were deleted.
   */
  sweepExpired(): Promise<number> {
    return this.exclusive(() =>
      this.whenFree(() => {
        const now = this.clock.now();
        const ms = now.getTime();
        // ISO strings are first narrowed by text (a day of slack covers offsets), then compared as times.
        const textBound = new Date(ms + 86_400_000).toISOString();
        let deleted = 0;
        for (const name of this.expiring) {
          const table = tableOf(name);
          const x = fieldExpr('expires_at', this.writer.columnsOf(name).set);
          deleted += this.writer.run(`DELETE FROM ${table} WHERE ${x} < ?`, [ms]); // numbers only: text sorts above
          deleted += this.writer.run(
            `DELETE FROM ${table} WHERE ${x} >= '' AND ${x} < ? AND julianday(${x}) < julianday(?)`,
            [textBound, now.toISOString()],
          );
        }
        return deleted;
      }),
    );
  }

  /** EXPLAIN QUERY PLAN details of a read on the reader connection (adapter-specific: diagnosis and tests). */
  explain(collection: string, read: ReadShape): string[] {
    this.assertOpen();
    return this.reader.explain(collection, read);
  }

  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    if (this.sweepTimer !== undefined) clearInterval(this.sweepTimer);
    await this.mutex.run(() => {
      this.writer.db.close();
      this.reader.db.close();
    });
  }

  private assertOpen(): void {
    if (this.closing) throw new Error('the read store is closed');
  }

  /**
   * Runs `write` (one statement or one transaction: it wrote nothing when it failed busy), trying it again on a
   * timer while another connection holds the write lock, with `yieldWhenBusy`; at once otherwise.
   */
  private async whenFree<T>(write: () => T): Promise<T> {
    if (this.busyYieldMs === undefined) return write();
    const deadline = Date.now() + this.busyYieldMs;
    for (let wait = 1; ; wait = Math.min(wait * 2, 16)) {
      try {
        return write();
      } catch (err) {
        if (!isBusy(err) || this.writer.db.inTransaction || Date.now() >= deadline) throw err;
      }
      await pause(wait);
    }
  }

  /** Runs `task` holding the writer: after every unit and write queued before it, before those queued after. */
  private exclusive<T>(task: () => T | Promise<T>): Promise<T> {
    try {
      this.assertOpen();
      if (this.inUnit?.getStore()) {
        throw new Error('called the store from inside its own unit of work (this would wait forever): use the tx');
      }
    } catch (err) {
      return Promise.reject(err);
    }
    return this.mutex.run(task);
  }
}

/** The handle a unit of work writes through; dead once the unit ends. */
class SqliteTx implements ReadTx {
  private live = true;
  constructor(private readonly conn: SqliteConnection) {}

  end(): void {
    this.live = false;
  }

  private use(): SqliteConnection {
    if (!this.live) throw new Error('this unit of work has ended');
    return this.conn;
  }

  async get<T extends Doc = Doc>(collection: string, id: string): Promise<T | null> {
    return this.use().get(collection, id) as T | null;
  }
  async find<T extends Doc = Doc>(collection: string, query?: Query): Promise<T[]> {
    return this.use().find(collection, query) as T[];
  }
  async count(collection: string, where?: Where): Promise<number> {
    return this.use().count(collection, where);
  }
  async sum(collection: string, query: SumQuery): Promise<SumRow[]> {
    return this.use().sum(collection, query);
  }
  async put(collection: string, doc: Doc): Promise<void> {
    this.use().put(collection, doc);
  }
  async delete(collection: string, id: string): Promise<void> {
    this.use().delete(collection, id);
  }
  async setCheckpoint(name: string, position: number): Promise<void> {
    this.use().setCheckpoint(name, position);
  }
}
