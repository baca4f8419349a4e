import type { RecordedEvent } from '../shared-schema/ports/event-store.js';
import type { CollectionSpec, ReadTx } from '../shared-schema/ports/read-store.js';
import type { Environment } from '../shared-schema/domain/streams.js';

/**
 * A projector keeps one read model: it applies events in log order inside the runner's unit of work, and owns the
 * collections it declares (it reads no other projector's collections, so each can be rebuilt on its own).
 */
export interface Projector {
  name: string;
  collections: readonly CollectionSpec[];
  /** Stream categories it follows. */
  categories: readonly string[];
  apply(event: RecordedEvent, tx: ReadTx): Promise<void>;
  /**
   * Work an applied event left for later units. An event that changes more documents than one unit should write
   * (a store's status reaches every product of the store) is applied in pages: its unit writes the first page and,
   * when more remain, a cursor in a collection of the projector's own, committed with the checkpoint that passes the
   * event. `continueWork` writes the next page in `tx` (moving or deleting the cursor in it) and answers true while
   * it did something. The runner calls it after each unit holding an event for which `leavesWork` is true, before
   * telling anyone the unit's position is committed, and at start (a crash left a cursor). Pages are idempotent: a
   * page applied again writes the same documents (they take the event's position only when it is higher).
   */
  continueWork?(tx: ReadTx): Promise<boolean>;
  /** Whether applying this event may leave work for `continueWork` (other units need not look). */
  leavesWork?(event: RecordedEvent): boolean;
}

/**
 * Projectors are idempotent by position: a document that holds this event's position, or a later one, already has
 * the event applied (a replay or a redelivery changes nothing).
 */
export const alreadyApplied = (doc: { position: number } | null, recorded: RecordedEvent): boolean =>
  doc !== null && doc.position >= recorded.position;

/** Splits `product-test:pt_X:sku` into its parts (partner ids and envs contain no `:`). */
export function streamScope(stream: string): { env: Environment; partnerId: string; rest: string } {
  const body = stream.slice(stream.indexOf('-') + 1);
  const [env, partnerId, ...rest] = body.split(':');
  return { env: env as Environment, partnerId: partnerId, rest: rest.join(':') };
}
