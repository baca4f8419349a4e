/**
 * The operation history of the SQLite deployments, in a file of its own (`DATA_DIR/history.db`, the read-store
 * layout: one collection, `operation_history`), written by a worker thread on its own connection.
 *
 * Why apart from `read.db`: every identified call adds an entry, so on the write path the history costs as much as a
 * projector (JSON of the entry, a row and two index entries, a commit). In its own thread the SQLite part leaves the
 * event loop (a few µs per write in `make bench`; building the entries and their JSON stays), and in its own file it
 * never waits for, nor holds, the read models' write lock (which a second connection to `read.db` would).
 *
 * Reads (the admin history route) go through `reads`, a SqliteReadStore of this file on the calling thread.
 * Entries that an earlier version kept in `read.db` are moved here when the file is opened (`adoptFrom`).
 */
import type { Doc, ReadStore } from '../../shared-schema/ports/read-store.js';
import { HISTORY_COLLECTION, HISTORY_SPEC, type HistoryEntry, type HistorySink, type HistoryStore } from './history.js';
import { SqliteReadStore } from '../adapters/sqlite/read-store.js';
import { WorkerCalls } from '../adapters/worker-calls.js';

export interface HistoryFileOptions {
  path: string;
  /** How long a write waits for another process's lock on the file (default 5 000 ms). */
  busyTimeoutMs?: number;
}

/** The message the thread gets for each group, and its answer. */
export type HistoryThreadCall = { id: number; entries: string };
export type HistoryThreadAnswer = { id: number; error?: string };

/**
 * The file as a read store (the same settings on the calling thread and in the writer thread); the writer thread
 * opens the file the calling thread created (`fileMustExist`).
 */
export function openHistoryStore(options: HistoryFileOptions, fileMustExist = false): SqliteReadStore {
  return SqliteReadStore.open({
    path: options.path,
    fileMustExist,
    synchronous: 'NORMAL',
    sweepIntervalMs: 0,
    ...(options.busyTimeoutMs ? { busyTimeoutMs: options.busyTimeoutMs } : {}),
  });
}

export class SqliteHistoryFile implements HistoryStore {
  readonly sink: HistorySink = { append: (entries) => this.append(entries) };
  private readonly calls: WorkerCalls<HistoryThreadAnswer>;
  private closed: Promise<void> | undefined;

  private constructor(
    readonly reads: SqliteReadStore,
    options: HistoryFileOptions,
  ) {
    this.calls = new WorkerCalls(
      new URL('./history-file-thread.js', import.meta.url),
      options,
      'history writer thread',
    );
  }

  /** Opens (creates) the file and its collection, then starts the writer thread. */
  static async open(options: HistoryFileOptions): Promise<SqliteHistoryFile> {
    const reads = openHistoryStore(options);
    try {
      await reads.ensureCollections([HISTORY_SPEC]);
    } catch (err) {
      await reads.close();
      throw err;
    }
    return new SqliteHistoryFile(reads, options);
  }

  /**
   * Moves the entries `source` holds in its `operation_history` collection (where versions before this file kept
   * them) into this file, then empties that collection. Idempotent: an entry copied twice is the same row.
   */
  async adoptFrom(source: ReadStore): Promise<number> {
    let count: number;
    try {
      count = await source.count(HISTORY_COLLECTION);
    } catch {
      return 0; // no such collection: nothing was ever kept there
    }
    if (count === 0) return 0;
    let after: string | undefined;
    let moved = 0;
    for (;;) {
      const page: Doc[] = await source.find(HISTORY_COLLECTION, {
        orderBy: [{ field: '_id' }],
        limit: 1000,
        ...(after ? { after: [after] } : {}),
      });
      if (page.length === 0) break;
      await this.reads.transact(async (tx) => {
        for (const doc of page) await tx.put(HISTORY_COLLECTION, doc);
      });
      moved += page.length;
      after = page[page.length - 1]._id;
    }
    await source.drop(HISTORY_COLLECTION);
    return moved;
  }

  /** Waits for the groups sent, ends the thread, closes the file. */
  close(): Promise<void> {
    this.closed ??= (async () => {
      await this.calls.close();
      await this.reads.close();
    })();
    return this.closed;
  }

  private async append(entries: readonly HistoryEntry[]): Promise<void> {
    if (this.closed) throw new Error('the history file is closed');
    const answer = await this.calls.call({ entries: JSON.stringify(entries) } satisfies Omit<HistoryThreadCall, 'id'>);
    if (answer.error !== undefined) throw new Error(answer.error);
  }
}
