/**
 * The operator's view of the cover-check dead letters (items whose every delivery failed: the checker threw, the
 * event store refused the append…) and their requeue once the cause is fixed. The admin API and the `ops` command
 * (`ops cover dead-letters`, `ops cover requeue ID`, `ops cover requeue-all`) use these functions.
 *
 * A view names the product (partner, environment, SKU) and the send (revision), never a key or a secret; the last
 * error is the one line the consumer kept, URL credentials masked.
 */
import type { Messaging, WorkItem } from '../../shared-schema/ports/messaging.js';
import { COVER_QUEUE, parseCoverItem } from '../../command-api/reactors/cover-queue.js';
import { productStreamParts } from '../../command-api/reactors/cover-work.js';

export interface CoverDeadLetterView {
  id: string;
  partner_id: string | null;
  environment: string | null;
  sku: string | null;
  /** Revision of the send in the product stream. */
  revision: number | null;
  deliveries: number;
  last_error: string | null;
}

export function coverDeadLetterView(item: WorkItem): CoverDeadLetterView {
  const subject = parseCoverItem(item.payload);
  const product = subject ? productStreamParts(subject.stream) : null;
  return {
    id: item.id,
    partner_id: product?.tenant.partnerId ?? null,
    environment: product?.tenant.env ?? null,
    sku: product?.sku ?? null,
    revision: subject?.revision ?? null,
    deliveries: item.deliveries,
    last_error: item.lastError ?? null,
  };
}

export async function listCoverDeadLetters(
  messaging: Messaging,
  limit: number,
): Promise<{ queue: string; total: number; dead_letters: CoverDeadLetterView[] }> {
  const [stats, items] = await Promise.all([
    messaging.queueStats(COVER_QUEUE),
    messaging.deadLetters(COVER_QUEUE, { limit }),
  ]);
  return {
    queue: COVER_QUEUE,
    total: Math.max(stats.deadLetters, items.length),
    dead_letters: items.map(coverDeadLetterView),
  };
}

/** Requeues the dead letters with these ids, or all of them (`ids` omitted); says which ids were not found. */
export async function requeueCoverDeadLetters(
  messaging: Messaging,
  ids?: readonly string[],
): Promise<{ queue: string; requeued: CoverDeadLetterView[]; not_found: string[] }> {
  const moved = await messaging.requeueDeadLetters(COVER_QUEUE, ids);
  const found = new Set(moved.map((item) => item.id));
  return {
    queue: COVER_QUEUE,
    requeued: moved.map(coverDeadLetterView),
    not_found: (ids ?? []).filter((id) => !found.has(id)),
  };
}
