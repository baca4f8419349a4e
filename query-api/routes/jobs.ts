/** GET /jobs/{job_id}: the job of this partner and environment only (404 otherwise). */
import { callerOf } from '../../shared-schema/http/context.js';
import { notFound } from '../../shared-schema/problems.js';
import type { JobView } from '../../shared-schema/job-view.js';
import { NO_QUERY, type ReadRoute } from '../app.js';

// Read-model document shape owned by projections/projectors/jobs.ts (this door only reads it).
type JobDoc = JobView & { _id: string; partner_id: string; env: string; position: number };

export const jobsReadRoutes: Record<string, ReadRoute> = {
  'GET /jobs/:job_id': {
    query: NO_QUERY,
    handle: async (ctx, _q, deps) => {
      const c = callerOf(ctx);
      const doc = await deps.reads.get<JobDoc>('jobs', `${c.env}:${c.partnerId}:${ctx.state.params.job_id!}`);
      if (!doc) throw notFound('No such job for this partner.');
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
