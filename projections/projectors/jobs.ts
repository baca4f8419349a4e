/** The Job read model (shared-schema/read-models/jobs.ts): one document per job, created by `BatchQueued` only. */
import { asUnion } from '../../shared-schema/ports/event-store.js';
import type { JobEvent } from '../../shared-schema/events/job.js';
import { queuedJobView } from '../../shared-schema/contract/job-view.js';
import { JOBS, JOB_COLLECTIONS, jobDocId, type JobDoc } from '../../shared-schema/read-models/jobs.js';
import { alreadyApplied, streamScope, type Projector } from '../projector.js';

export const jobsProjector: Projector = {
  name: 'jobs',
  collections: JOB_COLLECTIONS,
  categories: ['job'],
  async apply(recorded, tx) {
    if (recorded.type === 'BatchPartStored') return; // parts alone are no job (and their items are not read here)
    const e = asUnion<JobEvent>(recorded);
    const { env, partnerId } = streamScope(recorded.stream);
    const id = jobDocId({ env, partnerId }, e.data.job_id);
    const current = await tx.get<JobDoc>(JOBS, id);
    if (alreadyApplied(current, recorded)) return;
    let next: JobDoc | null = null;
    switch (e.type) {
      case 'BatchQueued':
        next = {
          _id: id,
          partner_id: partnerId,
          env,
          ...queuedJobView(e.data.job_id, e.data.received, e.data.created_at),
          position: 0,
        };
        break;
      case 'BatchStarted':
        if (current) next = { ...current, state: 'running' };
        break;
      case 'BatchChunkProcessed':
        if (current) {
          const totals = { ...current.totals };
          const errors = current.errors.slice();
          for (const o of e.data.outcomes) {
            totals[o.bucket] += 1;
            if (o.bucket === 'rejected') errors.push({ index: o.index, sku: o.sku, reasons: o.reasons ?? [] });
          }
          errors.sort((a, b) => a.index - b.index);
          next = { ...current, totals, errors };
        }
        break;
      case 'BatchDone':
        if (current) next = { ...current, state: 'done', totals: e.data.totals, finished_at: e.data.finished_at };
        break;
      case 'BatchFailed':
        if (current) next = { ...current, state: 'failed', finished_at: e.data.finished_at };
        break;
    }
    if (next) await tx.put(JOBS, { ...next, position: recorded.position });
  },
};
