/** Connection set-up and schema of the SQLite event store. */
import { makePrivate } from './private-file.js';
import Database from 'better-sqlite3';
import { enableWal } from './wal.js';

export interface ConnectionOptions {
  path: string;
  synchronous: 'FULL' | 'NORMAL';
  busyTimeoutMs: number;
  /** Open an existing event store for reading only (audits, rebuilds, replays): no pragma or schema is written. */
  readOnly?: boolean;
}

const SCHEMA_VERSION = 1;

/**
 * `position` is the rowid: AUTOINCREMENT keeps it strictly increasing for ever (never reused, even if the tail were
 * deleted). The UNIQUE(stream, revision) index serves `readStream` at the same cost whatever the stream's length;
 * (category, position) serves filtered `readAll`. `streams` holds each stream's last revision and position so an
 * expected-revision check is one primary-key lookup.
 */
const SCHEMA = `
  CREATE TABLE IF NOT EXISTS events (
    position INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL,
    stream TEXT NOT NULL,
    revision INTEGER NOT NULL,
    category TEXT NOT NULL,
    type TEXT NOT NULL,
    data TEXT NOT NULL,
    metadata TEXT NOT NULL,
    UNIQUE (stream, revision)
  );
  CREATE UNIQUE INDEX IF NOT EXISTS events_id ON events (id);
  CREATE INDEX IF NOT EXISTS events_category_position ON events (category, position);
  CREATE TABLE IF NOT EXISTS streams (
    stream TEXT PRIMARY KEY,
    revision INTEGER NOT NULL,
    position INTEGER NOT NULL
  ) WITHOUT ROWID;
`;

/** Opens the file (several processes may do so at once), in WAL mode, and creates the schema when missing. */
export function openConnection(options: ConnectionOptions): Database.Database {
  if (options.readOnly) return openReadOnly(options);
  makePrivate(options.path);
  const db = new Database(options.path);
  try {
    // busy_timeout first: the other pragmas and the schema transaction may wait for another process.
    db.pragma(`busy_timeout = ${Math.max(0, Math.floor(options.busyTimeoutMs))}`);
    enableWal(db, options.busyTimeoutMs);
    db.pragma(`synchronous = ${options.synchronous}`);
    const version = db.pragma('user_version', { simple: true }) as number;
    if (version > SCHEMA_VERSION)
      throw new Error(`${options.path} has event-store schema ${version}, newer than ${SCHEMA_VERSION}`);
    if (version < SCHEMA_VERSION) {
      db.exec('BEGIN IMMEDIATE');
      try {
        db.exec(SCHEMA);
        db.pragma(`user_version = ${SCHEMA_VERSION}`);
        db.exec('COMMIT');
      } catch (error) {
        if (db.inTransaction) db.exec('ROLLBACK');
        throw error;
      }
    }
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

/** An existing file of the current schema, opened with SQLITE_OPEN_READONLY: it can follow other writers, never write. */
function openReadOnly(options: ConnectionOptions): Database.Database {
  const db = new Database(options.path, { readonly: true, fileMustExist: true });
  try {
    db.pragma(`busy_timeout = ${Math.max(0, Math.floor(options.busyTimeoutMs))}`);
    const version = db.pragma('user_version', { simple: true }) as number;
    if (version !== SCHEMA_VERSION)
      throw new Error(`${options.path} has event-store schema ${version}; this code reads ${SCHEMA_VERSION}`);
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}
