/** Reads shared by the query door's routes. */
import type { Doc, ReadView } from '../shared-schema/ports/read-store.js';

/** The documents of `collection` whose `_id` is in `ids`, in one read, by `_id` (an id with none is absent). */
export async function documentsById<T extends object>(
  reads: Pick<ReadView, 'find'>,
  collection: string,
  ids: readonly string[],
): Promise<Map<string, T & Doc>> {
  const found = new Map<string, T & Doc>();
  if (ids.length === 0) return found;
  for (const d of await reads.find<T & Doc>(collection, { where: { _id: { in: ids } }, limit: ids.length })) {
    found.set(d._id, d);
  }
  return found;
}
