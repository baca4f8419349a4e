/**
 * The command door: the routes that turn each write into a command, behind the front both doors share
 * (infra/http/front-door.ts: request id → 401 → 429 → route (404/405) → 403). Then, here: 413 (body) → 422 (path,
 * query) → idempotency → 422 (body validation) → business rules.
 */
import { callerOf, tenantKey, type DoorContext, type DoorRoutes } from '../shared-schema/http/context.js';
import { pathParamErrors, writeQueryErrors } from '../shared-schema/http/parameters.js';
import { Idempotency, type StoredResponse } from './idempotency.js';
import { invalid, notFound } from '../shared-schema/problems.js';
import { BODY_LIMITS, BodyReader, type BodyRules } from './json-body.js';
import { metadata, type CommandDeps } from './services/context.js';
import { registerStore } from './services/stores.js';
import { patchProduct, removeProduct, upsertProduct } from './services/products.js';
import { validateProductInput, validateProductPatch, validateStoreInput } from './validate.js';

export interface WriteAnswer extends StoredResponse {
  /** Log position reached by the write, shared with the query door for read-your-writes. */
  position?: number;
}

export type WriteHandler = (ctx: DoorContext, body: unknown, deps: CommandDeps) => Promise<WriteAnswer>;

const ok = (body: unknown, position?: number): WriteAnswer => {
  const a: WriteAnswer = { status: 200, body, headers: {} };
  if (position !== undefined) a.position = position;
  return a;
};

const meta = (ctx: DoorContext, deps: CommandDeps) => metadata(deps.clock, ctx.state.requestId, callerOf(ctx).keyId);

/** Write routes of the contract served by this door, keyed `METHOD path` as in shared-schema/routes.ts. */
export const coreWriteRoutes: Record<string, WriteHandler> = {
  'PUT /stores/:store_id': async (ctx, body, deps) => {
    const caller = callerOf(ctx);
    const input = validateStoreInput(body);
    const r = await registerStore(deps, caller, caller.partnerType, ctx.state.params.store_id, input, meta(ctx, deps));
    return ok(r.view, r.position);
  },
  'PUT /products/:sku': async (ctx, body, deps) => {
    const input = validateProductInput(body, deps.clock.now());
    const r = await upsertProduct(deps, callerOf(ctx), ctx.state.params.sku, input, meta(ctx, deps));
    return ok(r.view, r.position);
  },
  'PATCH /products/:sku': async (ctx, body, deps) => {
    const patch = validateProductPatch(body, deps.clock.now());
    const r = await patchProduct(deps, callerOf(ctx), ctx.state.params.sku, patch, meta(ctx, deps));
    return ok(r.view, r.position);
  },
  'DELETE /products/:sku': async (ctx, _body, deps) => {
    const r = await removeProduct(deps, callerOf(ctx), ctx.state.params.sku, meta(ctx, deps));
    const a: WriteAnswer = { status: 204, body: null, headers: {} };
    if (r.position !== undefined) a.position = r.position;
    return a;
  },
};

export interface CommandDoorOptions {
  deps: CommandDeps;
  routes: Record<string, WriteHandler>;
  /** Default: BODY_RULES. */
  bodies?: BodyRules;
}

export function commandDoor(options: CommandDoorOptions): DoorRoutes {
  const { deps } = options;
  const idempotency = new Idempotency(deps.reads, deps.clock);
  const bodies = new BodyReader(options.bodies);
  return {
    routes: async (ctx: DoorContext) => {
      const route = ctx.state.route;
      const handler = route ? options.routes[`${route.method} ${route.path}`] : undefined;
      if (!route || !handler) throw notFound('No such resource.');
      // A batch may be five times larger than any other body, and takes twice as long to arrive.
      const batch = route.path === '/products/batch';
      const limit = batch ? BODY_LIMITS.batch : BODY_LIMITS.default;
      const body = route.method === 'DELETE' ? undefined : await bodies.read(ctx, limit, batch ? 2 : 1);
      const requestErrors = [...pathParamErrors(ctx.state.params), ...writeQueryErrors(ctx.query)];
      if (requestErrors.length > 0) throw invalid(requestErrors);
      let position: number | undefined;
      const answer = await idempotency.run(ctx, body, async () => {
        const a = await handler(ctx, body, deps);
        position = a.position;
        return { status: a.status, body: a.body, headers: a.headers };
      });
      if (position !== undefined) {
        ctx.state.position = position;
        await deps.messaging.raiseTo(`ryw:${tenantKey(callerOf(ctx))}`, position);
      }
      ctx.status = answer.status;
      for (const [k, v] of Object.entries(answer.headers)) ctx.set(k, v);
      if (answer.status !== 204) ctx.body = answer.body;
    },
  };
}
