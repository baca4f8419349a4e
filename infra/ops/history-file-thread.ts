/** Entry point of the history file's writer thread (see history-file.ts `SqliteHistoryFile`). */
import { parentPort, workerData } from 'node:worker_threads';
import { storeSink, type HistoryEntry } from './history.js';
import type { HistoryFileOptions, HistoryThreadAnswer, HistoryThreadMessage } from './history-file.js';
import { SqliteReadStore } from '../sqlite/read-store.js';

const options = workerData as HistoryFileOptions;
const store = SqliteReadStore.open({ path: options.path, synchronous: 'NORMAL', sweepIntervalMs: 0, ...(options.busyTimeoutMs ? { busyTimeoutMs: options.busyTimeoutMs } : {}) });
const sink = storeSink(store);
let tail: Promise<void> = Promise.resolve();

parentPort!.on('message', (message: HistoryThreadMessage) => {
  if ('close' in message) {
    tail = tail.then(async () => {
      await store.close();
      parentPort!.close();
    });
    return;
  }
  tail = tail.then(async () => {
    let answer: HistoryThreadAnswer;
    try {
      await sink.append(JSON.parse(message.entries) as HistoryEntry[]);
      answer = { id: message.id };
    } catch (err) {
      answer = { id: message.id, error: err instanceof Error ? err.message : String(err) };
    }
    parentPort!.postMessage(answer);
  });
});
