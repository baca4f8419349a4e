import type { RecordedEvent } from '../shared-schema/ports/event-store.js';
import type { CollectionSpec, Doc, ReadTx } from '../shared-schema/ports/read-store.js';
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
   * Writes what the projector held back over the events applied through `tx` (a count many of them move is written
   * once). Called after the last apply through `tx`, before the unit commits; a failure here is the store's.
   */
  endUnit?(tx: ReadTx): Promise<void>;
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

export type StreamScope = Readonly<{ env: Environment; partnerId: string; rest: string }>;

/** The last stream split: every projector of a unit splits the stream of the same event, one after the other. */
let lastScope: { stream: string; scope: StreamScope } | null = null;

/** Splits `product-test:pt_X:sku` into its parts (partner ids and envs contain no `:`). The answer is shared: read it only. */
export function streamScope(stream: string): StreamScope {
  if (lastScope !== null && lastScope.stream === stream) return lastScope.scope;
  const body = stream.slice(stream.indexOf('-') + 1);
  const [env, partnerId, ...rest] = body.split(':');
  const scope: StreamScope = Object.freeze({ env: env as Environment, partnerId: partnerId, rest: rest.join(':') });
  lastScope = { stream, scope };
  return scope;
}

/**
 * The documents of a collection as the unit of work `tx` holds them, read once per unit: a batch of writes to the
 * products of one store judges each against the same store document, and parses it once. Kept per unit (the `tx`
 * object: a unit that fails and is tried again gets a new one), so nothing outlives a rollback. A projector that
 * writes such a document in the unit writes it through `put` here, so later events of the unit see it. The documents
 * are shared between the events of the unit: read them only.
 */
export class UnitDocs<T extends Doc> {
  private readonly seen = new WeakMap<ReadTx, Map<string, T | null>>();

  constructor(private readonly collection: string) {}

  private held(tx: ReadTx): Map<string, T | null> {
    let docs = this.seen.get(tx);
    if (docs === undefined) this.seen.set(tx, (docs = new Map<string, T | null>()));
    return docs;
  }

  async get(tx: ReadTx, id: string): Promise<T | null> {
    const docs = this.held(tx);
    let doc = docs.get(id);
    if (doc === undefined) docs.set(id, (doc = await tx.get<T>(this.collection, id)));
    return doc;
  }

  async put(tx: ReadTx, doc: T): Promise<void> {
    await tx.put(this.collection, doc);
    this.held(tx).set(doc._id, doc);
  }
}
