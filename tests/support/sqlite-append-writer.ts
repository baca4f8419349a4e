/**
 * Child process for the SQLite event-store fault tests. Usage:
 *   node sqlite-append-writer.js <db file> <stream prefix> <stream count> [max acks, 0 = until killed]
 * One writer loop per stream appends batches of 3 events with the exact expected revision, as fast as it can (all
 * loops at once, so the store groups them). Prints `<stream> <revision>` once per ACKNOWLEDGED append. On a
 * conflict (another process wrote the stream) it re-reads the stream's revision and tries again.
 * WRITER_THREAD=1 opens the store with its writer thread.
 */
import { SqliteEventStore } from '../../infra/adapters/sqlite/event-store.js';
import { WrongExpectedRevisionError } from '../../shared-schema/ports/event-store.js';

const [dbPath, prefix, countText, maxAcksText] = process.argv.slice(2);
if (!dbPath || !prefix || !countText) {
  console.error('usage: sqlite-append-writer <db file> <stream prefix> <stream count> [max acks]');
  process.exit(2);
}
const maxAcks = Number(maxAcksText ?? 0);
let acks = 0;

process.stdout.on('error', () => process.exit(0)); // the parent went away
setTimeout(() => process.exit(3), 60_000).unref(); // never outlive a broken test for long

const store = SqliteEventStore.open({
  path: dbPath,
  pollIntervalMs: 20,
  writerThread: process.env.WRITER_THREAD === '1',
});
const metadata = { recorded_at: new Date().toISOString(), actor: `pid-${process.pid}` };

async function lastRevision(stream: string): Promise<number> {
  const events = await store.readStream(stream);
  return events.length - 1;
}

async function writeLoop(stream: string): Promise<void> {
  let last = await lastRevision(stream);
  while (maxAcks === 0 || acks < maxAcks) {
    const batch = (last + 1) / 3;
    const events = [0, 1, 2].map((part) => ({ type: 'Part', data: { batch, part, pid: process.pid }, metadata }));
    try {
      const result = await store.appendToStream(stream, events, last < 0 ? 'no_stream' : last);
      last = result.nextRevision;
      acks++;
      process.stdout.write(`${stream} ${result.nextRevision}\n`);
    } catch (error) {
      if (!(error instanceof WrongExpectedRevisionError)) throw error;
      last = await lastRevision(stream);
    }
  }
}

const loops = Array.from({ length: Number(countText) }, (_, i) => writeLoop(`${prefix}-${i}`));
Promise.all(loops).then(
  async () => {
    await store.close();
    process.exit(0);
  },
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
