import type { EventMetadata, NewEvent, RecordedEvent } from '../../shared-schema/ports/event-store.js';

/** Builds a new event of a typed union. */
export function event<E extends { type: string; data: unknown }>(e: E, metadata: EventMetadata): NewEvent {
  return { type: e.type, data: e.data, metadata };
}

/** Views a recorded event as a member of a typed union (the stream's category guarantees the union). */
export function asUnion<E extends { type: string; data: unknown }>(e: RecordedEvent): E {
  return { type: e.type, data: e.data } as E;
}

/** Exhaustiveness check for `switch` over a union. */
export function unreachable(x: never): never {
  throw new Error(`unhandled case: ${JSON.stringify(x)}`);
}
