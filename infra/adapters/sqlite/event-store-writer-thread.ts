/** Entry point of the event store's writer thread (see event-store-writer.ts `WriterThread`). */
import { parentPort, workerData } from 'node:worker_threads';
import { nameThread } from '../thread-name.js';
import { openConnection } from './event-store-schema.js';
import {
  GroupWriter,
  packOutcomes,
  unpackGroup,
  type WireBookingTime,
  type WriterThreadOptions,
} from './event-store-writer.js';

nameThread('pc-event-writer');
const options = workerData as WriterThreadOptions;
const db = openConnection({
  path: options.path,
  synchronous: options.synchronous,
  busyTimeoutMs: options.busyTimeoutMs,
});
const writer = new GroupWriter(db);

parentPort!.on('message', (message: { id: number; group: string; now: WireBookingTime } | { close: true }) => {
  if ('close' in message) {
    db.close();
    parentPort!.close();
    return;
  }
  const outcomes = packOutcomes(
    writer.commit(unpackGroup(message.group), message.now === 'system' ? Date.now : message.now),
  );
  parentPort!.postMessage({ id: message.id, outcomes }, [outcomes.results.buffer as ArrayBuffer]);
});
