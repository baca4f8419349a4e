import type { EventMetadata, NewEvent } from '../../shared-schema/ports/event-store.js';

export { asUnion } from '../../shared-schema/ports/event-store.js';

/** Builds a new event of a typed union. */
export function event<E extends { type: string; data: unknown }>(e: E, metadata: EventMetadata): NewEvent {
  return { type: e.type, data: e.data, metadata };
}

/** Exhaustiveness check for `switch` over a union. */
export function unreachable(x: never): never {
  throw new Error(`unhandled case: ${JSON.stringify(x)}`);
}
