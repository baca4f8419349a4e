/** The jobs read model, written by projections/projectors/jobs.ts, served by `GET /jobs/{job_id}`: one document per job. */
import type { CollectionSpec } from '../ports/read-store.js';
import type { JobView } from '../contract/job-view.js';
import type { Tenant } from '../domain/streams.js';
import { scopedId, type ScopedDoc } from './scoped-id.js';

export const JOBS = 'jobs';

export type JobDoc = JobView & ScopedDoc;

export const jobDocId = (t: Tenant, jobId: string): string => scopedId(t, jobId);

export const JOB_COLLECTIONS: readonly CollectionSpec[] = [{ name: JOBS, indexes: [] }];
