/**
 * Switching a connection to WAL needs a moment of exclusive access to the file, and SQLite answers SQLITE_BUSY at once
 * (without its busy handler) when another connection is opening or recovering the same file then — which happens
 * whenever processes of the topology, or a writer thread and its owner, start together.
 */
import type Database from 'better-sqlite3';

const PAUSE_MS = 5;

/** Sets `journal_mode = WAL`, trying again while the file is busy, for at most `busyTimeoutMs`. */
export function enableWal(db: Database.Database, busyTimeoutMs: number): void {
  const deadline = Date.now() + busyTimeoutMs;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    try {
      const mode = db.pragma('journal_mode = WAL', { simple: true });
      if (String(mode).toLowerCase() !== 'wal')
        throw new Error(`could not switch ${db.name} to WAL (got ${String(mode)})`);
      return;
    } catch (error) {
      if ((error as { code?: unknown }).code !== 'SQLITE_BUSY' || Date.now() >= deadline) throw error;
      Atomics.wait(pause, 0, 0, PAUSE_MS); // opening is synchronous: a short blocking pause, at start-up only
    }
  }
}
