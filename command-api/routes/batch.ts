/** `POST /products/batch`: 202 with the Job `queued`, answered only once the whole batch is durably stored. */
import { callerOf } from '../../shared-schema/http/context.js';
import { metadata } from '../services/context.js';
import { submitBatch } from '../services/batch.js';
import { validateBatchInput } from '../validate-batch.js';
import { writeAnswer, type WriteRoute } from '../app.js';

export const batchWriteRoutes: readonly WriteRoute[] = [
  {
    method: 'POST',
    path: '/products/batch',
    scope: 'catalog',
    batch: true,
    handler: async (ctx, body, deps) => {
      const items = validateBatchInput(body, deps.clock.now());
      const caller = callerOf(ctx);
      const r = await submitBatch(deps, caller, items, metadata(deps.clock, ctx.state.requestId, caller.keyId));
      return writeAnswer(202, r.view, r.position, { Location: `/v1/jobs/${r.view.job_id}` });
    },
  },
];
