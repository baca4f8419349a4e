/**
 * The operation history of the SQLite deployments, in a file of its own (`DATA_DIR/history.db`, the read-store
 * layout: one collection, `operation_history`), written by a worker thread on its own connection.
 *
 * Why apart from `read.db`: every identified call adds an entry, so on the write path the history costs as much as a
 * projector (JSON of the entry, a row and two index entries, a commit). In its own thread it no longer takes the event
 * loop's time (`make bench`, PUT through the gateway: about 10 µs less of the main thread per write), and in its own
 * file it never waits for, nor holds, the read models' write lock (which a second connection to `read.db` would).
 *
 * Reads (the admin history route) go through `reads`, a SqliteReadStore of this file on the calling thread.
 * Entries that an earlier version kept in `read.db` are moved here when the file is opened (`adoptFrom`).
 */
import { Worker } from 'node:worker_threads';
import type { Doc, ReadStore } from '../../shared-schema/ports/read-store.js';
import { HISTORY_COLLECTION, HISTORY_SPEC, type HistoryEntry, type HistorySink, type HistoryStore } from './history.js';
import { SqliteReadStore } from '../sqlite/read-store.js';

export interface HistoryFileOptions {
  path: string;
  /** How long a write waits for another process's lock on the file (default 5 000 ms). */
  busyTimeoutMs?: number;
}

export type HistoryThreadMessage = { id: number; entries: string } | { close: true };
export type HistoryThreadAnswer = { id: number; error?: string };

export class SqliteHistoryFile implements HistoryStore {
  readonly sink: HistorySink;
  private readonly worker: Worker;
  private readonly pending = new Map<number, { resolve: () => void; reject: (error: Error) => void }>();
  private nextId = 1;
  private failure: Error | undefined;
  private closed: Promise<void> | undefined;

  private constructor(
    readonly reads: SqliteReadStore,
    options: HistoryFileOptions,
  ) {
    this.worker = new Worker(new URL('./history-file-thread.js', import.meta.url), { workerData: options });
    this.worker.unref();
    this.worker.on('message', (answer: HistoryThreadAnswer) => {
      const waiter = this.pending.get(answer.id);
      this.pending.delete(answer.id);
      if (this.pending.size === 0) this.worker.unref();
      if (answer.error === undefined) waiter?.resolve();
      else waiter?.reject(new Error(answer.error));
    });
    this.worker.on('error', (error) => this.fail(error));
    this.worker.on('exit', (code) => this.fail(new Error(`the history writer thread exited (${code})`)));
    this.sink = { append: (entries) => this.append(entries) };
  }

  /** Opens (creates) the file and its collection, then starts the writer thread. */
  static async open(options: HistoryFileOptions): Promise<SqliteHistoryFile> {
    const reads = SqliteReadStore.open({ path: options.path, synchronous: 'NORMAL', sweepIntervalMs: 0, ...(options.busyTimeoutMs ? { busyTimeoutMs: options.busyTimeoutMs } : {}) });
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
      const page: Doc[] = await source.find(HISTORY_COLLECTION, { orderBy: [{ field: '_id' }], limit: 1000, ...(after ? { after: [after] } : {}) });
      if (page.length === 0) break;
      await this.reads.transact(async (tx) => {
        for (const doc of page) await tx.put(HISTORY_COLLECTION, doc);
      });
      moved += page.length;
      after = page[page.length - 1]!._id;
    }
    await source.drop(HISTORY_COLLECTION);
    return moved;
  }

  /** Waits for the groups sent, ends the thread, closes the file. */
  close(): Promise<void> {
    this.closed ??= (async () => {
      if (!this.failure) {
        const exited = new Promise<void>((resolve) => this.worker.once('exit', () => resolve()));
        this.worker.ref();
        this.worker.postMessage({ close: true } satisfies HistoryThreadMessage);
        await exited;
      }
      await this.reads.close();
    })();
    return this.closed;
  }

  private append(entries: readonly HistoryEntry[]): Promise<void> {
    if (this.closed) return Promise.reject(new Error('the history file is closed'));
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    return new Promise<void>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.ref();
      this.worker.postMessage({ id, entries: JSON.stringify(entries) } satisfies HistoryThreadMessage);
    });
  }

  private fail(error: Error): void {
    this.failure ??= error;
    for (const waiter of this.pending.values()) waiter.reject(this.failure);
    this.pending.clear();
  }
}
