/**
 * Events of a batch job stream (`job-{env}:{partner}:{job_id}`). The batch is written as several `BatchPartStored`
 * events (each well under EventStoreDB's 1 MiB append limit), then `BatchQueued`, which alone makes the job exist:
 * parts without it (a crash mid-write) are never processed nor shown.
 */
import type { ProductInput, RejectionReason } from './product.js';
import type { Environment } from '../domain/streams.js';

export type BatchItem = { op: 'upsert'; sku: string; product: ProductInput } | { op: 'delete'; sku: string };

/** The bucket of `totals` an item lands in (DECISIONS.md "Batches and jobs"). */
export type ItemBucket = 'accepted' | 'rejected' | 'pending' | 'removed';

export interface ItemOutcome {
  index: number;
  sku: string;
  bucket: ItemBucket;
  /** Present when `bucket` is `rejected`: why (refused, or written with its cover rejected). */
  reasons?: RejectionReason[];
}

export interface JobTotals {
  received: number;
  accepted: number;
  rejected: number;
  pending: number;
  removed: number;
}

export type JobStateName = 'queued' | 'running' | 'done' | 'failed';

export type JobEvent =
  /** A contiguous slice of the batch's items, starting at array index `from`. */
  | { type: 'BatchPartStored'; data: { job_id: string; part: number; from: number; items: BatchItem[] } }
  | {
      type: 'BatchQueued';
      data: {
        job_id: string;
        partner_id: string;
        env: Environment;
        received: number;
        parts: number;
        created_at: string;
      };
    }
  | { type: 'BatchStarted'; data: { job_id: string; started_at: string } }
  /** Outcomes of items of processing chunk `chunk` (all of them, or one pass when a SKU repeats inside it). */
  | { type: 'BatchChunkProcessed'; data: { job_id: string; chunk: number; outcomes: ItemOutcome[] } }
  | { type: 'BatchDone'; data: { job_id: string; totals: JobTotals; finished_at: string } }
  | { type: 'BatchFailed'; data: { job_id: string; reason: string; finished_at: string } };

/** Metadata keys a batch item's product event carries, so that a resumed job never applies an item twice. */
export const JOB_ID_META = 'job_id';
export const JOB_ITEM_META = 'job_item';
