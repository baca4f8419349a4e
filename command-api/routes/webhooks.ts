/** `PUT /webhook` (the secret shown once, when it creates the endpoint) and `DELETE /webhook` (204, also when none). */
import { callerOf } from '../../shared-schema/http/context.js';
import { invalid } from '../../shared-schema/problems.js';
import { WebhookInput } from '../../shared-schema/schemas/webhooks.js';
import { bodyValidator } from '../../shared-schema/validation.js';
import { metadata } from '../services/context.js';
import { removeWebhook, setWebhook } from '../services/webhooks.js';
import type { WriteAnswer, WriteHandler } from '../app.js';

const webhookInput = bodyValidator<{ url: string }>(WebhookInput);

export const webhookWriteRoutes: Record<string, WriteHandler> = {
  'PUT /webhook': async (ctx, body, deps) => {
    const errors = webhookInput(body);
    if (errors.length > 0) throw invalid(errors);
    const caller = callerOf(ctx);
    const meta = metadata(deps.clock, ctx.state.requestId, caller.keyId);
    const r = await setWebhook(deps, caller, (body as { url: string }).url, meta);
    const answer: WriteAnswer = { status: 200, body: r.view, headers: {} };
    if (r.position !== undefined) answer.position = r.position;
    return answer;
  },
  'DELETE /webhook': async (ctx, _body, deps) => {
    const caller = callerOf(ctx);
    const r = await removeWebhook(deps, caller, metadata(deps.clock, ctx.state.requestId, caller.keyId));
    const answer: WriteAnswer = { status: 204, body: null, headers: {} };
    if (r.position !== undefined) answer.position = r.position;
    return answer;
  },
};
