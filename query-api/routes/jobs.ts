/** GET /jobs/{job_id}: the job of this partner and environment only (404 otherwise). */
import { callerOf } from '../../shared-schema/http/context.js';
import type { Tenant } from '../../shared-schema/streams.js';
import type { JobView } from '../../shared-schema/job-view.js';
import { NO_QUERY, type ReadRoute } from '../app.js';
import { notFoundHere } from '../not-found.js';

// Read-model document shape owned by projections/projectors/jobs.ts (this door only reads it).
type JobDoc = JobView & { _id: string; partner_id: string; env: string; position: number };

export const jobsReadRoutes: Record<string, ReadRoute> = {
  'GET /jobs/:job_id': {
    query: NO_QUERY,
    handle: async (ctx, _q, deps) => {
      const c = callerOf(ctx);
      const jobId = ctx.state.params.job_id!;
      const jobDocId = (t: Tenant) => `${t.env}:${t.partnerId}:${jobId}`;
      const doc = await deps.reads.get<JobDoc>('jobs', jobDocId(c));
      if (!doc) throw await notFoundHere(deps, c, 'jobs', jobDocId, 'job');
      const view: JobView = {
        job_id: doc.job_id,
        state: doc.state,
        totals: doc.totals,
        errors: doc.errors,
        created_at: doc.created_at,
        finished_at: doc.finished_at,
      };
      return view;
    },
  },
};
