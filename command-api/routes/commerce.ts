/**
 * Write routes of the commercial cycle: `POST /sandbox/clicks` (its declaration marks it test-only: the front door refuses live keys with 403
 * `test_key_required`) and `POST /conversions`. Answers holding BigCents figures are sent as JSON text written by
 * stringifyBigCents, so that a figure beyond 2^53 reaches the wire as a bare integer (and is replayed as such by
 * Idempotency-Key).
 */
import { callerOf, type DoorContext } from '../../shared-schema/http/context.js';
import { stringifyBigCents, JSON_TYPE } from '../../shared-schema/http/big-json.js';
import { bodyValidator } from '../../shared-schema/contract/validation.js';
import { ConversionEventSchema, SandboxClickInput } from '../../shared-schema/contract/schemas/commerce.js';
import type { ConversionInput } from '../../shared-schema/events/order.js';
import { invalid, type FieldError } from '../../shared-schema/contract/problems.js';
import { validateConversion } from '../deciders/order.js';
import { metadata, type CommandDeps } from '../services/context.js';
import { sandboxClick } from '../services/clicks.js';
import { recordConversion } from '../services/conversions.js';
import { writeAnswer, type WriteAnswer, type WriteRoute } from '../app.js';

const sandboxInput = bodyValidator<{ store_id: string; sku: string }>(SandboxClickInput);
const conversionInput = bodyValidator<ConversionInput>(ConversionEventSchema);

const answer = (body: unknown, position?: number): WriteAnswer =>
  writeAnswer(200, stringifyBigCents(body), position, { 'Content-Type': JSON_TYPE });

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Every invalid field of a conversion at once: the JSON Schema, plus the rules it cannot express (the decider's
 * validateConversion). Those rules need well-typed dates and items; when the schema already refused one of them,
 * the rules run only if the shapes they read are sound, and a field the schema reported is not reported twice.
 */
export function validateConversionBody(body: unknown, now: Date): ConversionInput {
  const errors = conversionInput(body);
  if (isObject(body) && shapesSound(body)) {
    const reported = new Set(errors.map((e) => e.field));
    const more = validateConversion(body as unknown as ConversionInput, now.toISOString()).filter(
      (e: FieldError) =>
        !reported.has(e.field) && !(e.field === 'items' && [...reported].some((f) => f.startsWith('items'))),
    );
    errors.push(...more);
  }
  if (errors.length > 0) throw invalid(errors);
  return body as ConversionInput;
}

function shapesSound(body: Record<string, unknown>): boolean {
  const isInt = (v: unknown) => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
  return (
    typeof body.paid_at === 'string' &&
    typeof body.occurred_at === 'string' &&
    typeof body.status === 'string' &&
    Array.isArray(body.items) &&
    body.items.every(
      (i) =>
        isObject(i) &&
        typeof i.sku === 'string' &&
        isInt(i.quantity) &&
        isInt(i.unit_price_cents) &&
        isInt(i.refunded_cents),
    )
  );
}

export const commerceWriteRoutes: readonly WriteRoute[] = [
  {
    method: 'POST',
    path: '/sandbox/clicks',
    scope: 'clicks',
    testOnly: true,
    handler: async (ctx: DoorContext, body: unknown, deps: CommandDeps) => {
      const errors = sandboxInput(body);
      if (errors.length > 0) throw invalid(errors);
      const caller = callerOf(ctx);
      const r = await sandboxClick(
        deps,
        caller,
        body as { store_id: string; sku: string },
        metadata(deps.clock, ctx.state.requestId, caller.keyId),
      );
      return answer(r.click, r.position);
    },
  },
  {
    method: 'POST',
    path: '/conversions',
    scope: 'conversions',
    handler: async (ctx: DoorContext, body: unknown, deps: CommandDeps) => {
      const input = validateConversionBody(body, deps.clock.now());
      const caller = callerOf(ctx);
      const r = await recordConversion(deps, caller, input, { requestId: ctx.state.requestId, actor: caller.keyId });
      return answer(r.receipt, r.position);
    },
  },
];
