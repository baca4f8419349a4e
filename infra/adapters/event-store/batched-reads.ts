/**
 * An event store whose stream reads asked for in one turn of the event loop are made together at the start of the
 * next: one read per stream, and with a store that reads many streams at once (`readStreams`) one call for all of
 * them — a batch pass's 50 product streams, the concurrent PUTs' and cover checks' streams cost one statement, not
 * one each (a statement's fixed cost is most of a read). A caller only joins a read not yet made, so every caller
 * sees what the log held at some moment after it asked, as if it had read alone. Everything else goes straight to
 * the wrapped store (without `readStreams`: its callers read one by one, as the port allows).
 */
import type {
  AppendResult,
  EventStore,
  ExpectedRevision,
  NewEvent,
  ReadAllOptions,
  ReadStreamOptions,
  RecordedEvent,
  SubscribeOptions,
  Subscription,
} from '../../../shared-schema/ports/event-store.js';

/** The read of one stream asked for in this turn: from the lowest revision any of its callers wants. */
interface PendingRead {
  fromRevision: number;
  waiters: {
    fromRevision: number;
    resolve: (events: RecordedEvent[]) => void;
    reject: (err: unknown) => void;
  }[];
}

export class BatchedReads implements EventStore {
  /** Stream reads asked for in this turn, made together in the next, by stream. */
  private pending = new Map<string, PendingRead>();

  constructor(private readonly store: EventStore) {}

  /** A read with `maxCount` is not merged (its callers want a prefix); every other read joins this turn's batch. */
  readStream(stream: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    if (options.maxCount !== undefined) return this.store.readStream(stream, options);
    const fromRevision = options.fromRevision ?? 0;
    return new Promise((resolve, reject) => {
      let pending = this.pending.get(stream);
      if (!pending) {
        if (this.pending.size === 0) setImmediate(() => void this.readPending());
        pending = { fromRevision, waiters: [] };
        this.pending.set(stream, pending);
      }
      pending.fromRevision = Math.min(pending.fromRevision, fromRevision);
      pending.waiters.push({ fromRevision, resolve, reject });
    });
  }

  private async readPending(): Promise<void> {
    const batch = this.pending;
    this.pending = new Map();
    // Callers from the same revision share one array: the read side of the port does not mutate what it reads.
    const settle = (pending: PendingRead, events: RecordedEvent[]) => {
      for (const waiter of pending.waiters)
        waiter.resolve(
          waiter.fromRevision === pending.fromRevision
            ? events
            : events.filter((e) => e.revision >= waiter.fromRevision),
        );
    };
    const fail = (pending: PendingRead, err: unknown) => {
      for (const waiter of pending.waiters) waiter.reject(err);
    };
    const readStreams = this.store.readStreams?.bind(this.store);
    if (!readStreams) {
      // One read per stream; a failed read fails only its own callers.
      await Promise.all(
        [...batch].map(([stream, pending]) =>
          this.store.readStream(stream, { fromRevision: pending.fromRevision }).then(
            (events) => settle(pending, events),
            (err: unknown) => fail(pending, err),
          ),
        ),
      );
      return;
    }
    try {
      const read = await readStreams([...batch].map(([stream, { fromRevision }]) => ({ stream, fromRevision })));
      for (const [stream, pending] of batch) settle(pending, read.get(stream) ?? []);
    } catch (err) {
      for (const pending of batch.values()) fail(pending, err);
    }
  }

  appendToStream(stream: string, events: readonly NewEvent[], expected?: ExpectedRevision): Promise<AppendResult> {
    return this.store.appendToStream(stream, events, expected);
  }
  readAll(options?: ReadAllOptions): Promise<RecordedEvent[]> {
    return this.store.readAll(options);
  }
  headPosition(): Promise<number> {
    return this.store.headPosition();
  }
  subscribeToAll(options?: SubscribeOptions): Subscription {
    return this.store.subscribeToAll(options);
  }
  close(): Promise<void> {
    return this.store.close();
  }
}
