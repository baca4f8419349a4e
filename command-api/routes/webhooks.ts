/** `PUT /webhook` (the secret shown once, when it creates the endpoint) and `DELETE /webhook` (204, also when none). */
import { callerOf } from '../../shared-schema/http/context.js';
import { invalid } from '../../shared-schema/contract/problems.js';
import { WebhookInput } from '../../shared-schema/contract/schemas/webhooks.js';
import { bodyValidator } from '../../shared-schema/contract/validation.js';
import { metadata } from '../services/context.js';
import { removeWebhook, setWebhook } from '../services/webhooks.js';
import { writeAnswer, type WriteRoute } from '../app.js';

const webhookInput = bodyValidator<{ url: string }>(WebhookInput);

export const webhookWriteRoutes: readonly WriteRoute[] = [
  {
    method: 'PUT',
    path: '/webhook',
    scope: 'catalog',
    handler: async (ctx, body, deps) => {
      const errors = webhookInput(body);
      if (errors.length > 0) throw invalid(errors);
      const caller = callerOf(ctx);
      const meta = metadata(deps.clock, ctx.state.requestId, caller.keyId);
      const r = await setWebhook(deps, caller, (body as { url: string }).url, meta);
      return writeAnswer(200, r.view, r.position);
    },
  },
  {
    method: 'DELETE',
    path: '/webhook',
    scope: 'catalog',
    handler: async (ctx, _body, deps) => {
      const caller = callerOf(ctx);
      const r = await removeWebhook(deps, caller, metadata(deps.clock, ctx.state.requestId, caller.keyId));
      return writeAnswer(204, null, r.position);
    },
  },
];
