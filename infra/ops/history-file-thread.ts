/** Entry point of the history file's writer thread (see history-file.ts `SqliteHistoryFile`). */
import { parentPort, workerData } from 'node:worker_threads';
import { nameThread } from '../adapters/thread-name.js';
import { storeSink, type HistoryEntry } from './history.js';
import {
  openHistoryStore,
  type HistoryFileOptions,
  type HistoryThreadAnswer,
  type HistoryThreadCall,
} from './history-file.js';

nameThread('pc-history');
const store = openHistoryStore(workerData as HistoryFileOptions, true);
const sink = storeSink(store);
let tail: Promise<void> = Promise.resolve();

parentPort!.on('message', (message: HistoryThreadCall | { close: true }) => {
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
