/**
 * Work queues on JetStream.
 *
 * - One stream per queue with WorkQueue retention (an acked message is removed). Each item is published on its
 *   own subject `pcq.<prefix>.<queue>.<id>` and the stream keeps at most one message per subject with
 *   `discard_new_per_subject`: the server itself refuses a second message for an id while the first is
 *   pending (delivered or not), and accepts it again once acked. A `msgID` dedup window would also drop a
 *   re-enqueue made just after the ack, which the port does not allow.
 * - One durable pull consumer (`workers`) per queue, explicit ack, `ack_wait` from the options; every replica
 *   pulls from it, so they compete for items.
 * - Deliveries are counted by the server (`info.deliveryCount`); we dead-letter ourselves: on a `retry` at the
 *   last allowed delivery, or when a delivery arrives beyond the limit (the last try ran out of ack wait).
 *   The consumer's own `max_deliver` is left unlimited on purpose: with a server-side limit, an item whose
 *   dead-lettering failed on its final delivery would stay in the stream, never delivered and blocking its id.
 * - Dead letters are copied to a limits stream per queue (deduplicated by the item's stream sequence), then
 *   the item is acked. They are read back (listing, requeue) through an ordered consumer, which skips the
 *   gaps that requeued (deleted) messages leave. A requeue publishes the item to the queue again, then deletes
 *   the dead letter: a crash in between leaves both, and the next requeue finds the id already pending.
 */
import {
  AckPolicy,
  DeliverPolicy,
  DiscardPolicy,
  RetentionPolicy,
  StorageType,
  StringCodec,
  nanos,
  type ConsumerMessages,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
} from 'nats';
import type { QueueStats, WorkHandler, WorkItem } from '../../../shared-schema/ports/messaging.js';
import type { NatsNames } from './nats-names.js';
import { untoken } from './nats-names.js';
import { ACK_WAIT_RAN_OUT, errorMessage, type ConsumerSettings } from './options.js';

const DURABLE = 'workers';
/** How long one pull waits for items (the client's minimum is 1 s); bounds how long `stop` waits for it. */
const FETCH_EXPIRES_MS = 1_000;
const FETCH_ERROR_BACKOFF_MS = 500;
const ERR_MAX_MSGS_PER_SUBJECT = 10077;
const ERR_STREAM_NOT_FOUND = 10059;
const ERR_NO_MESSAGE = 10037;
const DEAD_LETTER_MAX_MSGS = 100_000;
/** Dead letters read per pull when listing or requeueing. */
const DEAD_LETTER_PAGE = 256;

const sc = StringCodec();

export class NatsWorkQueues {
  private readonly ready = new Map<string, Promise<void>>();

  constructor(
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    private readonly names: NatsNames,
  ) {}

  async enqueue(queue: string, id: string, payload: string): Promise<void> {
    await this.ensureStreams(queue);
    try {
      await this.js.publish(this.names.queueSubject(queue, id), sc.encode(payload));
    } catch (err) {
      if (apiErrorCode(err) === ERR_MAX_MSGS_PER_SUBJECT) return; // that id is already pending
      throw err;
    }
  }

  /** Starts pulling; the returned function stops pulling and waits for the deliveries in flight. */
  async consume(queue: string, handler: WorkHandler, settings: ConsumerSettings): Promise<() => Promise<void>> {
    await this.ensureStreams(queue);
    const stream = this.names.queueStream(queue);
    await this.ensureConsumer(stream, settings.ackWaitMs);
    const consumer = await this.js.consumers.get(stream, DURABLE);
    const slots = new Set<Promise<void>>();
    let running = true;
    let batch: ConsumerMessages | undefined;

    const loop = (async () => {
      while (running) {
        const free = settings.concurrency - slots.size;
        if (free <= 0) {
          await Promise.race(slots);
          continue;
        }
        try {
          batch = await consumer.fetch({ max_messages: free, expires: FETCH_EXPIRES_MS });
          for await (const msg of batch) {
            if (!running) {
              msg.nak(); // handed back at once rather than after the ack wait
              continue;
            }
            const slot = this.holdSlot(queue, msg, handler, settings);
            slots.add(slot);
            // A failed slot stays in the set, for the race or the final `all` to throw; the fork must not reject unobserved.
            void slot.then(
              () => slots.delete(slot),
              () => undefined,
            );
          }
        } catch {
          if (running) await delay(FETCH_ERROR_BACKOFF_MS);
        } finally {
          batch = undefined;
        }
      }
    })();

    return async () => {
      running = false;
      batch?.stop();
      await loop;
      await Promise.all(slots);
    };
  }

  async deadLetters(queue: string, limit: number): Promise<WorkItem[]> {
    const items: WorkItem[] = [];
    if (limit <= 0) return items;
    await this.eachDeadLetter(queue, async (item) => {
      items.push(item);
      return items.length < limit;
    });
    return items;
  }

  async requeueDeadLetters(queue: string, ids?: readonly string[]): Promise<WorkItem[]> {
    const chosen = ids === undefined ? undefined : new Set(ids);
    if (chosen?.size === 0) return [];
    const stream = this.names.deadLetterStream(queue);
    const moved: WorkItem[] = [];
    await this.eachDeadLetter(queue, async (item, seq) => {
      if (chosen && !chosen.has(item.id)) return true;
      await this.enqueue(queue, item.id, item.payload);
      await this.jsm.streams.deleteMessage(stream, seq).catch((err: unknown) => {
        if (apiErrorCode(err) !== ERR_NO_MESSAGE) throw err; // another requeue took it meanwhile
      });
      moved.push(item);
      return true;
    });
    return moved;
  }

  async stats(queue: string): Promise<QueueStats> {
    const [pending, deadLetters] = await Promise.all([
      this.messagesIn(this.names.queueStream(queue)),
      this.messagesIn(this.names.deadLetterStream(queue)),
    ]);
    return { pending, deadLetters };
  }

  private async messagesIn(stream: string): Promise<number> {
    try {
      return (await this.jsm.streams.info(stream)).state.messages;
    } catch (err) {
      if (apiErrorCode(err) === ERR_STREAM_NOT_FOUND) return 0;
      throw err;
    }
  }

  /** Visits the dead letters oldest first, with their stream sequence, until `visit` answers false. */
  private async eachDeadLetter(queue: string, visit: (item: WorkItem, seq: number) => Promise<boolean>): Promise<void> {
    const stream = this.names.deadLetterStream(queue);
    let last: number;
    try {
      const info = await this.jsm.streams.info(stream);
      if (info.state.messages === 0) return;
      last = info.state.last_seq;
    } catch (err) {
      if (apiErrorCode(err) === ERR_STREAM_NOT_FOUND) return;
      throw err;
    }
    const reader = await this.js.consumers.get(stream); // an ordered consumer: the stream once, in order
    try {
      for (;;) {
        const batch = await reader.fetch({ max_messages: DEAD_LETTER_PAGE, expires: FETCH_EXPIRES_MS });
        let received = 0;
        let more = true;
        for await (const msg of batch) {
          received += 1;
          if (!(await visit(msg.json<WorkItem>(), msg.seq)) || msg.seq >= last || msg.info.pending === 0) {
            more = false;
            batch.stop();
            break;
          }
        }
        if (!more || received === 0) return;
      }
    } finally {
      await reader.delete().catch(() => undefined);
    }
  }

  /**
   * A slot of the concurrency limit is held until the handler settles or the ack wait runs out, whichever
   * comes first: after the ack wait the server hands the item out again, so the delivery counts as abandoned.
   */
  private async holdSlot(queue: string, msg: JsMsg, handler: WorkHandler, settings: ConsumerSettings): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const abandoned = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, settings.ackWaitMs);
    });
    const work = this.process(queue, msg, handler, settings.maxDeliveries).catch(() => undefined);
    await Promise.race([work, abandoned]);
    clearTimeout(timer);
  }

  private async process(queue: string, msg: JsMsg, handler: WorkHandler, maxDeliveries: number): Promise<void> {
    const item: WorkItem = {
      id: untoken(msg.subject.slice(msg.subject.lastIndexOf('.') + 1)),
      payload: sc.decode(msg.data),
      deliveries: msg.info.deliveryCount,
    };
    if (item.deliveries > maxDeliveries) {
      await this.deadLetter(queue, msg, { ...item, deliveries: maxDeliveries, lastError: ACK_WAIT_RAN_OUT });
      return;
    }
    let outcome: 'ack' | 'retry';
    let lastError: string | undefined;
    try {
      outcome = (await handler({ ...item })) === 'ack' ? 'ack' : 'retry';
    } catch (err) {
      outcome = 'retry';
      lastError = errorMessage(err);
    }
    if (outcome === 'ack') await msg.ackAck();
    else if (item.deliveries >= maxDeliveries)
      await this.deadLetter(queue, msg, lastError === undefined ? item : { ...item, lastError });
    else msg.nak();
  }

  private async deadLetter(queue: string, msg: JsMsg, item: WorkItem): Promise<void> {
    await this.js.publish(this.names.deadLetterSubject(queue), sc.encode(JSON.stringify(item)), {
      msgID: `${this.names.queueStream(queue)}:${msg.seq}`,
    });
    await msg.ackAck();
  }

  private ensureStreams(queue: string): Promise<void> {
    let ready = this.ready.get(queue);
    if (!ready) {
      ready = this.createStreams(queue);
      this.ready.set(queue, ready);
      ready.catch(() => this.ready.delete(queue)); // try again on the next call
    }
    return ready;
  }

  private async createStreams(queue: string): Promise<void> {
    await this.ensureStream(this.names.queueStream(queue), {
      subjects: [this.names.queueSubjects(queue)],
      retention: RetentionPolicy.Workqueue,
      storage: StorageType.File,
      discard: DiscardPolicy.New,
      max_msgs_per_subject: 1,
      discard_new_per_subject: true,
    });
    await this.ensureStream(this.names.deadLetterStream(queue), {
      subjects: [this.names.deadLetterSubject(queue)],
      retention: RetentionPolicy.Limits,
      storage: StorageType.File,
      discard: DiscardPolicy.Old,
      max_msgs: DEAD_LETTER_MAX_MSGS,
    });
  }

  private async ensureStream(name: string, config: Parameters<JetStreamManager['streams']['add']>[0]): Promise<void> {
    try {
      await this.jsm.streams.info(name);
    } catch (err) {
      if (apiErrorCode(err) !== ERR_STREAM_NOT_FOUND) throw err;
      await this.jsm.streams.add({ ...config, name }); // a concurrent add with the same config also succeeds
    }
  }

  /** Creates the durable consumer, or brings its ack wait in line with this caller's options. */
  private async ensureConsumer(stream: string, ackWaitMs: number): Promise<void> {
    const info = await this.jsm.consumers.add(stream, {
      durable_name: DURABLE,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      ack_wait: nanos(ackWaitMs),
      max_deliver: -1,
    });
    if (info.config.ack_wait !== nanos(ackWaitMs)) {
      await this.jsm.consumers.update(stream, DURABLE, { ack_wait: nanos(ackWaitMs) });
    }
  }
}

export function apiErrorCode(err: unknown): number | undefined {
  return (err as { api_error?: { err_code?: number } } | null)?.api_error?.err_code;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
