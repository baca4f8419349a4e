/**
 * Reads of `$all` filtered ON THE SERVER, for client v6 (whose `readAll` sends no filter: driver 6.2
 * streams/readAll.js always sets `noFilter`).
 *
 * A filtered catch-up subscription (`subscribeToAll` with a stream-name-prefix filter) is the only filtered read the
 * driver offers: the server scans the log and sends only matching events, plus checkpoints (positions it has
 * scanned up to). We consume it up to the head of the log read just before (the position of the newest record of
 * `$all`, one backwards read of one record), then close it. The read ends at the first of:
 *
 * - an event at or past the head (an event past it was written after the read began: not returned);
 * - a checkpoint at or past the head (the server scanned that far and found nothing more of ours);
 * - the server's "caught up" message (sent before it goes live, after every catch-up event and after a final
 *   checkpoint: KurrentDB Enumerator.AllSubscriptionFiltered `CatchUp` → `SendCheckpointToSubscription`, then
 *   `GoLive` → `NotifyCaughtUp`; servers since 24.2, compose runs 25.0);
 * - `maxCount` events.
 *
 * Ordering: the driver's Subscription is a Transform that, for each server message, emits 'caughtUp' and awaits the
 * `checkpointReached` callback synchronously inside `_transform`, before any later message's event is pushed. So a
 * marker pushed from there lands in the readable buffer exactly after every event sent before that message, and
 * the `for await` sees everything before it.
 *
 * Servers older than 24.2 send no "caught up": there a read whose last scanned record is not ours ends at the
 * first checkpoint at or past the head (issued every `maxSearchWindow` records considered, and on the way live).
 */
import { BACKWARDS, END, FORWARDS, START, streamNameFilter } from '@eventstore/db-client';
import type {
  AllStreamResolvedEvent,
  AllStreamSubscription,
  EventStoreDBClient,
  Position,
} from '@eventstore/db-client';
import type { RecordedEvent } from '../../../shared-schema/ports/event-store.js';
import { numberToPosition, positionToNumber, serverPrefixes, toRecorded } from './mapping.js';
import type { EventScope } from './mapping.js';

/** The parts of the driver's client these reads use (a stand-in implements them in the unit tests). */
export type FilteredReadClient = Pick<EventStoreDBClient, 'subscribeToAll' | 'readAll'>;

export interface FilteredReadParams {
  client: FilteredReadClient;
  scope: EventScope;
  /** Where to start: 0 is the start of the log; `inclusive` asks for the event AT `position` too. */
  start: { position: number; inclusive: boolean };
  /** Position of the newest record of `$all` when the read began (any record, ours or not); 0: the log is empty. */
  head: number;
  /** At most this many events (ignored with `keep: 'last'`). */
  maxCount?: number;
  /** 'last': keep only the newest matching event (what `headPosition` needs), not the whole list. */
  keep?: 'all' | 'last';
  /** Records scanned by the server between checkpoints (the filter's `maxSearchWindow`). Default: the server's. */
  maxSearchWindow?: number;
}

const HEAD_REACHED = Symbol('head reached');
type Item = AllStreamResolvedEvent | typeof HEAD_REACHED;

export async function readFiltered(params: FilteredReadParams): Promise<RecordedEvent[]> {
  const { client, scope, head } = params;
  const max = params.keep === 'last' ? Number.POSITIVE_INFINITY : (params.maxCount ?? Number.POSITIVE_INFINITY);
  const out: RecordedEvent[] = [];
  const add = (e: RecordedEvent): void => {
    if (params.keep === 'last') out[0] = e;
    else out.push(e);
  };
  if (head <= 0 || max <= 0) return out;
  let last = params.start.position;
  if (params.start.inclusive && last > 0) {
    const first = await readAt(client, scope, last);
    if (first) add(first);
  }
  if (out.length >= max || last >= head) return out;

  const filter = streamNameFilter({
    prefixes: serverPrefixes(scope),
    checkpointInterval: 1,
    ...(params.maxSearchWindow !== undefined ? { maxSearchWindow: params.maxSearchWindow } : {}),
    checkpointReached: (sub: AllStreamSubscription, position: Position) => {
      if (positionToNumber(position) >= head) mark(sub);
    },
  });
  const sub = client.subscribeToAll({ fromPosition: last > 0 ? numberToPosition(last) : START, filter });
  const onCaughtUp = (): void => mark(sub);
  sub.on('caughtUp', onCaughtUp);
  try {
    for await (const item of sub as AsyncIterable<Item>) {
      if (item === HEAD_REACHED) break;
      const at = item.event?.position;
      if (at === undefined) continue; // a link without its event: not ours
      const position = positionToNumber(at);
      if (position > head) break; // written after the read began
      const event = toRecorded(item, scope); // drops what the prefix over-matched
      if (event && event.position > last) {
        last = event.position;
        add(event);
        if (out.length >= max) break;
      }
      if (position >= head) break;
    }
  } finally {
    sub.off('caughtUp', onCaughtUp);
    await stopSubscription(sub);
  }
  return out;
}

/** Puts the end marker into the subscription's readable side, behind every event already pushed. */
function mark(sub: AllStreamSubscription): void {
  if (!sub.destroyed && !sub.readableEnded) sub.push(HEAD_REACHED);
}

/** Position of the newest record of `$all` (system records included), 0 when the log is empty: one record read. */
export async function logHead(client: FilteredReadClient): Promise<number> {
  for await (const resolved of client.readAll({ fromPosition: END, maxCount: 1, direction: BACKWARDS })) {
    const at =
      resolved.event?.position ??
      (resolved.commitPosition !== undefined ? { commit: resolved.commitPosition } : undefined);
    if (at) return positionToNumber(at.commit);
  }
  return 0;
}

/** The event of ours at exactly `position`, if the record there is one (reads of `$all` start AT the position). */
export async function readAt(
  client: FilteredReadClient,
  scope: EventScope,
  position: number,
): Promise<RecordedEvent | undefined> {
  const read = client.readAll({ fromPosition: numberToPosition(position), maxCount: 1, direction: FORWARDS });
  for await (const resolved of read) {
    const event = toRecorded(resolved, scope);
    return event && event.position === position ? event : undefined;
  }
  return undefined;
}

/**
 * Cancels the gRPC call and ends the stream, so that a `for await` waiting on it returns (cancelling alone does
 * not promise that the readable ends).
 */
export async function stopSubscription(sub: AllStreamSubscription): Promise<void> {
  try {
    await sub.unsubscribe();
  } catch {
    // already gone
  }
  if (!sub.destroyed) sub.destroy();
}
