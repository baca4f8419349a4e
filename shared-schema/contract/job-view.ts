/** The Job of the contract, as the 202 of `POST /products/batch` and `GET /jobs/{job_id}` both show it. */
import type { JobStateName, JobTotals } from '../events/job.js';
import type { RejectionReason } from '../events/product.js';

export type JobErrorView = { index: number; sku: string; reasons: RejectionReason[] };

export type JobView = {
  job_id: string;
  state: JobStateName;
  /** `removed` is always present (DECISIONS.md). */
  totals: JobTotals;
  errors: JobErrorView[];
  created_at: string;
  finished_at: string | null;
};

export function queuedJobView(jobId: string, received: number, createdAt: string): JobView {
  return {
    job_id: jobId,
    state: 'queued',
    totals: { received, accepted: 0, rejected: 0, pending: 0, removed: 0 },
    errors: [],
    created_at: createdAt,
    finished_at: null,
  };
}
