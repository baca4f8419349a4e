/** Entry point of the event store's writer thread (see event-store-writer.ts `WriterThread`). */
import { parentPort, workerData } from 'node:worker_threads';
import { nameThread } from '../thread-name.js';
import { commitSender, type CommitSignal } from '../commit-signal.js';
import { openConnection } from './event-store-schema.js';
import {
  GroupWriter,
  packOutcomes,
  unpackGroup,
  wroteEvents,
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
/** Told of each commit that wrote events, once the event store has set it (`signalCommits`). */
let commits: ReturnType<typeof commitSender> | null = null;

type Message = { id: number; group: string; now: WireBookingTime } | { signal: CommitSignal } | { close: true };

parentPort!.on('message', (message: Message) => {
  if ('signal' in message) {
    commits = commitSender(message.signal);
    return;
  }
  if ('close' in message) {
    commits?.close();
    db.close();
    parentPort!.close();
    return;
  }
  const group = unpackGroup(message.group);
  const outcomes = writer.commit(group, message.now === 'system' ? Date.now : message.now);
  const packed = packOutcomes(outcomes);
  parentPort!.postMessage({ id: message.id, outcomes: packed }, [packed.results.buffer as ArrayBuffer]);
  if (wroteEvents(group, outcomes)) commits?.sent();
});
