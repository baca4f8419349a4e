/**
 * The batch job aggregate. Pure: the stream's events folded into a state, the submission planned as appends,
 * the next pass of work computed from the state, and the job's own commands decided.
 *
 * Processing goes chunk by chunk (50 items, array order). Inside a chunk, one pass takes the first unprocessed
 * occurrence of each SKU, so a pass never holds the same SKU twice: its items can be written together, and after a
 * crash an item of the interrupted pass is either in its product stream (tagged with job and index) or not applied
 * at all — no later item of the same SKU ran before it. A SKU repeated inside a chunk costs one more pass.
 */
import type { EventMetadata } from '../../shared-schema/ports/event-store.js';
import type { BatchItem, ItemOutcome, JobEvent, JobStateName, JobTotals } from '../../shared-schema/events/job.js';
import { BATCH_CHUNK_ITEMS } from '../../shared-schema/contract/schemas/batch.js';
import type { Tenant } from '../../shared-schema/domain/streams.js';
import { unreachable, type Decider, type Decision, type Stored } from './decider.js';

export interface JobState {
  /** `BatchQueued` was recorded: the job exists. */
  exists: boolean;
  jobId: string;
  tenant: Tenant | null;
  state: JobStateName | 'none';
  received: number;
  parts: number;
  partsStored: number;
  items: (BatchItem | undefined)[];
  outcomes: (ItemOutcome | undefined)[];
  processed: number;
  createdAt: string;
  /** Metadata of `BatchQueued` (actor and request id of the POST), carried by the items' product events. */
  queuedMeta: EventMetadata | null;
}

const initialState = (): JobState => ({
  exists: false,
  jobId: '',
  tenant: null,
  state: 'none',
  received: 0,
  parts: 0,
  partsStored: 0,
  items: [],
  outcomes: [],
  processed: 0,
  createdAt: '',
  queuedMeta: null,
});

function evolve(s: JobState, e: Stored<JobEvent>): JobState {
  switch (e.type) {
    case 'BatchPartStored': {
      const items = s.items.slice();
      e.data.items.forEach((item, i) => (items[e.data.from + i] = item));
      return { ...s, jobId: e.data.job_id, items, partsStored: s.partsStored + 1 };
    }
    case 'BatchQueued':
      return {
        ...s,
        exists: true,
        jobId: e.data.job_id,
        tenant: { partnerId: e.data.partner_id, env: e.data.env },
        state: 'queued',
        received: e.data.received,
        parts: e.data.parts,
        createdAt: e.data.created_at,
        queuedMeta: e.metadata,
      };
    case 'BatchStarted':
      return { ...s, state: 'running' };
    case 'BatchChunkProcessed':
      return withOutcomes(s, e.data.outcomes);
    case 'BatchDone':
      return { ...s, state: 'done' };
    case 'BatchFailed':
      return { ...s, state: 'failed' };
    default:
      return unreachable(e);
  }
}

function withOutcomes(s: JobState, recorded: readonly ItemOutcome[]): JobState {
  const outcomes = s.outcomes.slice();
  let processed = s.processed;
  for (const o of recorded) {
    if (outcomes[o.index] === undefined) processed += 1;
    outcomes[o.index] = o;
  }
  return { ...s, outcomes, processed };
}

/** Thrown when a job's own record contradicts itself: the job cannot continue (it is marked `failed`). */
export class JobInvariantError extends Error {
  override name = 'JobInvariantError';
}

export const chunkOf = (index: number): number => Math.floor(index / BATCH_CHUNK_ITEMS);

export const isFinished = (s: JobState): boolean => s.state === 'done' || s.state === 'failed';

/** Why the stored batch cannot be processed, or null when it is whole. */
export function brokenBecause(s: JobState): string | null {
  if (!s.exists) return 'the job was never queued';
  if (s.partsStored !== s.parts) return `stored ${s.partsStored} parts of ${s.parts}`;
  if (s.items.length !== s.received) return `stored ${s.items.length} items of ${s.received}`;
  for (let i = 0; i < s.received; i++) if (s.items[i] === undefined) return `item ${i} is missing`;
  return null;
}

export interface WaveItem {
  index: number;
  item: BatchItem;
}

export interface Wave {
  chunk: number;
  items: WaveItem[];
}

/** The next pass of work: the first unfinished chunk's unprocessed items, first occurrence of each SKU. */
export function nextWave(s: JobState): Wave | null {
  let first = -1;
  for (let i = 0; i < s.received; i++) {
    if (s.outcomes[i] === undefined) {
      first = i;
      break;
    }
  }
  if (first < 0) return null;
  const chunk = chunkOf(first);
  const end = Math.min(s.received, (chunk + 1) * BATCH_CHUNK_ITEMS);
  const seen = new Set<string>();
  const items: WaveItem[] = [];
  for (let i = first; i < end; i++) {
    if (s.outcomes[i] !== undefined) continue;
    const item = s.items[i]!;
    if (seen.has(item.sku)) continue;
    seen.add(item.sku);
    items.push({ index: i, item });
  }
  return { chunk, items };
}

export function totalsOf(s: JobState): JobTotals {
  const totals: JobTotals = { received: s.received, accepted: 0, rejected: 0, pending: 0, removed: 0 };
  for (const o of s.outcomes) if (o) totals[o.bucket] += 1;
  return totals;
}

export interface SubmissionBudget {
  /** Serialized items per `BatchPartStored` (an item larger than this gets a part of its own). */
  partBytes: number;
  /** Serialized parts per append (EventStoreDB refuses one append above 1 MiB). */
  appendBytes: number;
}

export const SUBMISSION_BUDGET: SubmissionBudget = { partBytes: 256 * 1024, appendBytes: 512 * 1024 };

/**
 * The appends that store a batch, in order: parts packed by size, and `BatchQueued` in the last append, so the job
 * exists only once every part is stored. A small batch is one append (atomic); a large one several.
 */
export function planSubmission(
  c: { jobId: string; tenant: Tenant; items: readonly BatchItem[]; now: string },
  budget: SubmissionBudget = SUBMISSION_BUDGET,
): JobEvent[][] {
  const parts: { from: number; items: BatchItem[]; bytes: number }[] = [];
  let current: { from: number; items: BatchItem[]; bytes: number } | null = null;
  c.items.forEach((item, index) => {
    const bytes = Buffer.byteLength(JSON.stringify(item));
    if (!current || (current.items.length > 0 && current.bytes + bytes > budget.partBytes)) {
      current = { from: index, items: [], bytes: 0 };
      parts.push(current);
    }
    current.items.push(item);
    current.bytes += bytes;
  });
  const appends: JobEvent[][] = [];
  let batch: JobEvent[] = [];
  let batchBytes = 0;
  parts.forEach((p, part) => {
    if (batch.length > 0 && batchBytes + p.bytes > budget.appendBytes) {
      appends.push(batch);
      batch = [];
      batchBytes = 0;
    }
    batch.push({ type: 'BatchPartStored', data: { job_id: c.jobId, part, from: p.from, items: p.items } });
    batchBytes += p.bytes;
  });
  batch.push({
    type: 'BatchQueued',
    data: {
      job_id: c.jobId,
      partner_id: c.tenant.partnerId,
      env: c.tenant.env,
      received: c.items.length,
      parts: parts.length,
      created_at: c.now,
    },
  });
  appends.push(batch);
  return appends;
}

export type JobCommand =
  | { type: 'StartJob'; now: string }
  | { type: 'RecordWave'; chunk: number; outcomes: ItemOutcome[]; now: string }
  | { type: 'FinishJob'; now: string }
  | { type: 'FailJob'; reason: string; now: string };

/** The answer of a job command is the job's state after its events. */
function decide(c: JobCommand, s: JobState): Decision<JobEvent, JobState> {
  const none = { events: [], result: s };
  switch (c.type) {
    case 'StartJob':
      if (s.state !== 'queued') return none;
      return {
        events: [{ type: 'BatchStarted', data: { job_id: s.jobId, started_at: c.now } }],
        result: { ...s, state: 'running' },
      };
    case 'RecordWave': {
      if (s.state !== 'running') throw new JobInvariantError(`outcomes recorded for a job in state ${s.state}`);
      const seen = new Set<number>();
      for (const o of c.outcomes) {
        const inRange = Number.isInteger(o.index) && o.index >= 0 && o.index < s.received;
        if (!inRange || chunkOf(o.index) !== c.chunk || s.outcomes[o.index] !== undefined || seen.has(o.index)) {
          throw new JobInvariantError(`item ${o.index} cannot be recorded in chunk ${c.chunk}`);
        }
        seen.add(o.index);
      }
      const recorded: JobEvent = {
        type: 'BatchChunkProcessed',
        data: { job_id: s.jobId, chunk: c.chunk, outcomes: c.outcomes },
      };
      const after = withOutcomes(s, c.outcomes);
      if (after.processed < s.received) return { events: [recorded], result: after };
      return { events: [recorded, doneEvent(after, c.now)], result: { ...after, state: 'done' } };
    }
    case 'FinishJob':
      if (s.state !== 'running' || s.processed < s.received) return none;
      return { events: [doneEvent(s, c.now)], result: { ...s, state: 'done' } };
    case 'FailJob':
      if (isFinished(s) || !s.exists) return none;
      return {
        events: [{ type: 'BatchFailed', data: { job_id: s.jobId, reason: c.reason, finished_at: c.now } }],
        result: { ...s, state: 'failed' },
      };
    default:
      return unreachable(c);
  }
}

function doneEvent(s: JobState, now: string): JobEvent {
  return { type: 'BatchDone', data: { job_id: s.jobId, totals: totalsOf(s), finished_at: now } };
}

export const jobDecider: Decider<JobState, JobCommand, JobEvent, JobState> = {
  name: 'job',
  initialState,
  evolve,
  decide,
};
