/**
 * Batch writes: storing a batch as a job (the POST), and applying one item with the same code path as a single
 * PUT or DELETE. Each item's product event carries `job_id` and `job_item` in its metadata, so that after a crash
 * the runner finds what an interrupted pass already applied instead of applying it again.
 */
import { streams, CATEGORIES, type Tenant } from '../../shared-schema/domain/streams.js';
import type { EventMetadata, RecordedEvent } from '../../shared-schema/ports/event-store.js';
import { JOB_ID_META, JOB_ITEM_META, type BatchItem, type ItemOutcome } from '../../shared-schema/events/job.js';
import type { RejectionReason } from '../../shared-schema/events/product.js';
import { ProblemError } from '../../shared-schema/contract/problems.js';
import type { ProductStatusView } from '../../shared-schema/domain/product-status.js';
import { newJobId } from '../../shared-schema/domain/ids.js';
import { queuedJobView, type JobView } from '../../shared-schema/contract/job-view.js';
import { planSubmission } from '../deciders/job.js';
import { event, foldRecorded } from '../deciders/decider.js';
import { productDecider } from '../deciders/product.js';
import { storeDecider } from '../deciders/store.js';
import { removeProduct, statusOf, upsertProduct } from './products.js';
import type { CommandDeps } from './context.js';

/** Stores the batch (parts, then `BatchQueued`) and answers once all of it is durable. */
export async function submitBatch(
  deps: CommandDeps,
  tenant: Tenant,
  items: readonly BatchItem[],
  meta: EventMetadata,
): Promise<{ view: JobView; position: number }> {
  const now = deps.clock.now();
  const jobId = newJobId(now.getTime());
  const stream = streams.job(tenant, jobId);
  let revision = -1;
  let position = 0;
  for (const events of planSubmission({ jobId, tenant, items, now: now.toISOString() })) {
    const r = await deps.events.appendToStream(
      stream,
      events.map((e) => event(e, meta)),
      revision < 0 ? 'no_stream' : revision,
    );
    revision = r.nextRevision;
    position = r.position;
  }
  return { view: queuedJobView(jobId, items.length, now.toISOString()), position };
}

/** Metadata of an item's product event: the job's actor and request, the processing time, and the item's tag. */
export function itemMetadata(queued: EventMetadata | null, now: Date, jobId: string, index: number): EventMetadata {
  const meta: EventMetadata = {
    recorded_at: now.toISOString(),
    actor: queued?.actor ?? 'system',
    [JOB_ID_META]: jobId,
    [JOB_ITEM_META]: index,
  };
  if (queued?.request_id) meta.request_id = queued.request_id;
  return meta;
}

const toReason = (e: { field: string; code: string; message: string }): RejectionReason =>
  e.field ? { code: e.code, field: e.field, message: e.message } : { code: e.code, message: e.message };

/** The bucket of a written (or ignored-as-stale) upsert: the product's state right after the write. */
export function outcomeOfView(index: number, sku: string, view: ProductStatusView): ItemOutcome {
  switch (view.state) {
    case 'accepted':
    case 'stale':
      return { index, sku, bucket: 'accepted' };
    case 'pending':
      return { index, sku, bucket: 'pending' };
    case 'rejected':
      return { index, sku, bucket: 'rejected', reasons: view.reasons };
    case 'removed':
      return { index, sku, bucket: 'removed' };
  }
}

/** Applies one item as a single write would; a refusal (a problem of the item) is an outcome, anything else throws. */
export async function applyBatchItem(
  deps: CommandDeps,
  tenant: Tenant,
  index: number,
  item: BatchItem,
  meta: EventMetadata,
): Promise<ItemOutcome> {
  try {
    if (item.op === 'delete') {
      await removeProduct(deps, tenant, item.sku, meta);
      return { index, sku: item.sku, bucket: 'removed' };
    }
    const written = await upsertProduct(deps, tenant, item.sku, item.product, meta);
    return outcomeOfView(index, item.sku, written.view);
  } catch (err) {
    // A refusal of the item (4xx) is its outcome; a 5xx (every attempt lost its race) fails the pass, which is retried.
    if (err instanceof ProblemError && err.status < 500)
      return { index, sku: item.sku, bucket: 'rejected', reasons: err.errors.map(toReason) };
    throw err;
  }
}

/** Product events written for `jobId` after `afterPosition`, by item index (what an interrupted pass applied). */
export async function appliedItems(
  deps: CommandDeps,
  jobId: string,
  afterPosition: number,
): Promise<Map<number, RecordedEvent>> {
  const found = new Map<number, RecordedEvent>();
  let after = afterPosition;
  for (;;) {
    const page = await deps.events.readAll({ afterPosition: after, categories: [CATEGORIES.product], maxCount: 1000 });
    for (const e of page) {
      const index = e.metadata[JOB_ITEM_META];
      if (e.metadata[JOB_ID_META] === jobId && typeof index === 'number') found.set(index, e);
    }
    if (page.length < 1000) return found;
    after = page[page.length - 1].position;
  }
}

/** The outcome of an item found already applied: from the product as it stood right after that event. */
export async function recoveredOutcome(
  deps: CommandDeps,
  tenant: Tenant,
  index: number,
  item: BatchItem,
  applied: RecordedEvent,
): Promise<ItemOutcome> {
  if (item.op === 'delete') return { index, sku: item.sku, bucket: 'removed' };
  const events = await deps.events.readStream(applied.stream, { maxCount: applied.revision + 1 });
  const product = foldRecorded(productDecider, events);
  const store = await deps.repo.load(streams.store(tenant, product.storeId), storeDecider);
  return outcomeOfView(index, item.sku, await statusOf(deps, tenant, product, store.state));
}
