/** GET /jobs/{job_id}: the job of this partner and environment only (404 otherwise). */
import { callerOf } from '../../shared-schema/http/context.js';
import type { JobView } from '../../shared-schema/contract/job-view.js';
import { JOBS, jobDocId, type JobDoc } from '../../shared-schema/read-models/jobs.js';
import type { ReadRoute } from '../app.js';
import { NO_QUERY } from '../no-query.js';
import { notFoundHere } from '../not-found.js';

export const jobsReadRoutes: readonly ReadRoute[] = [
  {
    method: 'GET',
    path: '/jobs/:job_id',
    scope: 'catalog',
    query: NO_QUERY,
    handle: async (ctx, _q, deps) => {
      const c = callerOf(ctx);
      const jobId = ctx.state.params.job_id;
      const doc = await deps.reads.get<JobDoc>(JOBS, jobDocId(c, jobId));
      if (!doc) throw await notFoundHere(deps, c, JOBS, (t) => jobDocId(t, jobId), 'job');
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
];
