import type { RecordedEvent } from '../shared-schema/ports/event-store.js';
import type { CollectionSpec, ReadTx } from '../shared-schema/ports/read-store.js';

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
}

/** Document ids scoped to environment and partner. */
export const scopedId = (env: string, partnerId: string, id: string): string => `${env}:${partnerId}:${id}`;

/** Splits `product-test:pt_X:sku` into its parts (partner ids and envs contain no `:`). */
export function streamScope(stream: string): { env: 'live' | 'test'; partnerId: string; rest: string } {
  const body = stream.slice(stream.indexOf('-') + 1);
  const [env, partnerId, ...rest] = body.split(':');
  return { env: env as 'live' | 'test', partnerId: partnerId!, rest: rest.join(':') };
}
