/** Entry point of the projection thread (see projection-thread.ts `ProjectionThread`). */
import { parentPort, workerData } from 'node:worker_threads';
import { nameThread } from '../adapters/thread-name.js';
import { systemClock } from '../../shared-schema/ports/clock.js';
import { categoryOf } from '../../shared-schema/ports/event-store.js';
import { CATEGORIES } from '../../shared-schema/domain/streams.js';
import { GenerationalReadStore } from '../../projections/generations.js';
import { ProjectionRunner } from '../../projections/runner.js';
import { UnitGate } from '../../projections/unit-gate.js';
import { SqliteEventStore } from '../adapters/sqlite/event-store.js';
import { SqliteReadStore } from '../adapters/sqlite/read-store.js';
import { runnerLogHooks } from '../ops/projection-logs.js';
import { PROJECTORS } from './projectors.js';
import { SharedMemoryClock } from './shared-clock.js';
import { onCommits } from '../adapters/commit-signal.js';
import {
  CommittedCells,
  toWire,
  type FromThread,
  type ProjectionThreadData,
  type ToThread,
} from './projection-thread.js';

nameThread('pc-projection');
const port = parentPort!;
const data = workerData as ProjectionThreadData;
const post = (message: FromThread) => port.postMessage(message);
const clock = data.clock ? SharedMemoryClock.attach(data.clock) : systemClock;
const cells = new CommittedCells(data.committed);

/** A logger for the runner's hooks whose lines are written by the service's logger, on the main thread. */
const forward =
  (level: 'error' | 'warn') =>
  (fields: Record<string, unknown>, msg: string): void =>
    post({ type: 'log', level, fields: fields.err ? { ...fields, err: toWire(fields.err) } : fields, msg });
const log = { error: forward('error'), warn: forward('warn') };

async function main(): Promise<void> {
  const events = SqliteEventStore.open({
    path: data.eventsPath,
    readOnly: true,
    ...(data.pollIntervalMs !== undefined ? { pollIntervalMs: data.pollIntervalMs } : {}),
  });
  // The expiry sweep stays with the main thread's store: this one only runs units.
  const store = SqliteReadStore.open({
    path: data.readsPath,
    fileMustExist: true,
    synchronous: 'NORMAL',
    clock,
    sweepIntervalMs: 0,
  });
  const reads = new GenerationalReadStore(store, PROJECTORS);
  const gate = new UnitGate(reads);
  const holds = new Map<number, () => void>();
  let partner = false;
  const runner = new ProjectionRunner(events, gate, PROJECTORS, {
    ...runnerLogHooks(log),
    now: () => clock.now(),
    onCommitted: (batch) => {
      partner ||= batch.some((e) => categoryOf(e.stream) === CATEGORIES.partner);
    },
    onAdvanced: (position) => {
      if (cells.committed(position, partner)) post({ type: 'committed' });
      partner = false;
    },
    onError: (err) => post({ type: 'failed', error: toWire(err) }),
  });
  let stopping: Promise<void> | undefined;
  onCommits(data.appended, () => events.notifyAppended());
  port.on('message', (m: ToThread) => {
    switch (m.type) {
      case 'hold':
        void gate.hold().then((release) => {
          holds.set(m.id, release);
          post({ type: 'held', id: m.id });
        });
        return;
      case 'release': {
        const release = holds.get(m.id);
        holds.delete(m.id);
        // A rebuild may have switched a generation while this thread was held: its next unit writes the new one.
        void reads
          .load()
          .catch((err: unknown) => log.error({ err }, 'projection thread could not reload the generation map'))
          .finally(() => release?.());
        return;
      }
      case 'stop':
        stopping ??= (async () => {
          for (const release of holds.values()) release();
          holds.clear();
          data.appended.port.close();
          await runner.stop();
          await events.close();
          await reads.close();
          post({ type: 'closed' });
        })();
        return;
    }
  });
  await reads.load();
  await runner.start();
  cells.committed(runner.position, false);
  post({ type: 'ready' });
}

main().catch((err: unknown) => post({ type: 'start_failed', error: toWire(err) }));
