/**
 * Chooses and opens the adapters of the three ports from the configuration:
 *
 * - event store: EventStoreDB when `EVENTSTORE_URL` is set, else the SQLite file `DATA_DIR/events.db`;
 * - read store: MongoDB when `MONGO_URL` is set, else the SQLite file `DATA_DIR/read.db`;
 * - messaging: NATS when `NATS_URL` is set, else in-process (one process only).
 *
 * `mode: 'embedded'` ignores the URLs and always opens the embedded adapters (what `startService` runs);
 * `mode: 'configured'` follows them (what the separate processes of infra/wiring/entry/ run). The SQLite files may be
 * shared by several processes on one machine; the in-process messaging may not, so the separate processes refuse
 * to start without NATS (see `requireSharedMessaging`).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import type { Clock } from '../../shared-schema/ports/clock.js';
import type { EventStore } from '../../shared-schema/ports/event-store.js';
import type { ReadStore } from '../../shared-schema/ports/read-store.js';
import type { Messaging } from '../../shared-schema/ports/messaging.js';
import { SqliteEventStore } from '../adapters/sqlite/event-store.js';
import { SqliteReadStore } from '../adapters/sqlite/read-store.js';
import { InProcessMessaging } from '../adapters/messaging/in-process.js';
import { readStoreHistory, type HistoryStore } from '../ops/history.js';
import { SqliteHistoryFile } from '../ops/history-file.js';
import { ConfigError, type Config } from './config.js';

export type StoreMode = 'embedded' | 'configured';

export interface AdapterChoice {
  events: 'sqlite' | 'esdb';
  reads: 'sqlite' | 'mongo';
  messaging: 'in-process' | 'nats';
}

export interface Stores {
  events: EventStore;
  reads: ReadStore;
  messaging: Messaging;
  /** Where the operation history is kept (`openHistory`). */
  history: HistoryStore;
  choice: AdapterChoice;
  /** Closes messaging, then the event store, then the history, then the read store. */
  close(): Promise<void>;
}

/** NATS subjects, buckets and streams of this deployment are namespaced by this prefix. */
export const NATS_PREFIX_ENV = 'NATS_PREFIX';

export function adapterChoice(config: Config, mode: StoreMode): AdapterChoice {
  if (mode === 'embedded') return { events: 'sqlite', reads: 'sqlite', messaging: 'in-process' };
  return {
    events: config.eventstoreUrl ? 'esdb' : 'sqlite',
    reads: config.mongoUrl ? 'mongo' : 'sqlite',
    messaging: config.natsUrl ? 'nats' : 'in-process',
  };
}

/** The separate processes share rate-brake windows, read-your-writes positions and wake-ups: NATS is required. */
export function requireSharedMessaging(config: Config): void {
  if (!config.natsUrl) throw new ConfigError(['NATS_URL is required to run the services as separate processes']);
}

/** The files of the embedded adapters in DATA_DIR. */
export const sqliteFiles = (config: Config): { events: string; reads: string } => ({
  events: path.join(config.dataDir, 'events.db'),
  reads: path.join(config.dataDir, 'read.db'),
});

/**
 * `log` hears every dropped EventStoreDB subscription connection (a warning per attempt to resubscribe); errors that
 * are not a lost connection end the subscription, and its consumer reports them (e.g. 'projection stopped').
 */
async function openEventStore(
  config: Config,
  mode: StoreMode,
  log?: Pick<Logger, 'warn'>,
  clock?: Clock,
): Promise<EventStore> {
  if (adapterChoice(config, mode).events === 'esdb') {
    const { EsdbEventStore } = await import('../adapters/esdb/event-store.js'); // loaded only when used (its client is heavy)
    return EsdbEventStore.connect(config.eventstoreUrl!, {
      streamPrefix: config.eventstoreStreamPrefix,
      // The server books events by its own clock; the manual clock, which it cannot follow, books them at the time
      // their command read from it (docs/adr/0076-ledger-movements-and-closings.md).
      booking: config.clock === 'manual' ? 'event' : 'server',
      onSubscriptionDrop: (err, attempt) =>
        log?.warn(
          { err, attempt },
          'event-store subscription lost its connection; subscribing again from the last event delivered',
        ),
    });
  }
  fs.mkdirSync(config.dataDir, { recursive: true });
  return SqliteEventStore.open({
    path: sqliteFiles(config).events,
    synchronous: config.sqliteSynchronous,
    writerThread: config.sqliteWriterThread,
    ...(clock ? { clock } : {}),
  });
}

/**
 * `clock` drives the SQLite store's expiry sweep (idempotency records), like every other time rule. The SQLite read
 * store commits without fsync (WAL, synchronous NORMAL): its documents and checkpoints commit together, so a power
 * loss can only take it back to an earlier checkpoint, from which the log replays. The log keeps SQLITE_SYNCHRONOUS.
 * `yieldWhenBusy`: another thread of this process writes the SQLite file too (adapters/sqlite/read-store.ts).
 */
async function openReadStore(
  config: Config,
  mode: StoreMode,
  clock: Clock,
  options: { yieldWhenBusy?: boolean } = {},
): Promise<ReadStore> {
  if (adapterChoice(config, mode).reads === 'mongo') {
    const { MongoReadStore } = await import('../adapters/mongo/read-store.js');
    return MongoReadStore.connect(config.mongoUrl!, config.mongoDb);
  }
  fs.mkdirSync(config.dataDir, { recursive: true });
  return SqliteReadStore.open({
    path: sqliteFiles(config).reads,
    synchronous: 'NORMAL',
    clock,
    yieldWhenBusy: options.yieldWhenBusy ?? false,
  });
}

/**
 * The operation history: on MongoDB a collection of the read store; on SQLite the file `DATA_DIR/history.db`, written
 * by a thread of its own (infra/ops/history-file.ts), which first takes over the entries earlier versions kept in
 * `read.db`.
 */
export async function openHistory(config: Config, mode: StoreMode, reads: ReadStore): Promise<HistoryStore> {
  if (adapterChoice(config, mode).reads === 'mongo') return readStoreHistory(reads);
  const file = await SqliteHistoryFile.open({ path: path.join(config.dataDir, 'history.db') });
  try {
    await file.adoptFrom(reads);
  } catch (err) {
    await file.close();
    throw err;
  }
  return file;
}

export async function openMessaging(
  config: Config,
  mode: StoreMode,
  clock: Clock,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Messaging> {
  if (adapterChoice(config, mode).messaging === 'nats') {
    const { NatsMessaging } = await import('../adapters/messaging/nats.js');
    return NatsMessaging.connect({ servers: config.natsUrl!, prefix: env[NATS_PREFIX_ENV] || 'default', clock });
  }
  return new InProcessMessaging(clock);
}

/** Opens all three; on a failure, closes what was already open. */
export async function openStores(
  config: Config,
  mode: StoreMode,
  clock: Clock,
  log?: Pick<Logger, 'warn'>,
  readStore: { yieldWhenBusy?: boolean } = {},
): Promise<Stores> {
  const opened: { close(): Promise<void> }[] = [];
  try {
    const events = await openEventStore(config, mode, log, clock);
    opened.push(events);
    const reads = await openReadStore(config, mode, clock, readStore);
    opened.push(reads);
    const history = await openHistory(config, mode, reads);
    opened.push(history);
    const messaging = await openMessaging(config, mode, clock);
    let closing: Promise<void> | undefined;
    return {
      events,
      reads,
      messaging,
      history,
      choice: adapterChoice(config, mode),
      close() {
        closing ??= (async () => {
          await messaging.close();
          await events.close();
          await history.close();
          await reads.close();
        })();
        return closing;
      },
    };
  } catch (err) {
    for (const o of opened.reverse()) await o.close().catch(() => undefined);
    throw err;
  }
}
