/** `PUT /stores/{store_id}` and `PUT`, `PATCH`, `DELETE /products/{sku}`. */
import { callerOf, type DoorContext } from '../../shared-schema/http/context.js';
import { metadata, type CommandDeps } from '../services/context.js';
import { registerStore } from '../services/stores.js';
import { patchProduct, removeProduct, upsertProduct } from '../services/products.js';
import { validateProductInput, validateProductPatch, validateStoreInput } from '../validate.js';
import { writeAnswer, type WriteRoute } from '../app.js';

const meta = (ctx: DoorContext, deps: CommandDeps) => metadata(deps.clock, ctx.state.requestId, callerOf(ctx).keyId);

export const catalogWriteRoutes: readonly WriteRoute[] = [
  {
    method: 'PUT',
    path: '/stores/:store_id',
    scope: 'catalog',
    handler: async (ctx, body, deps) => {
      const caller = callerOf(ctx);
      const input = validateStoreInput(body);
      const store = ctx.state.params.store_id;
      const r = await registerStore(deps, caller, caller.partnerType, store, input, meta(ctx, deps));
      return writeAnswer(200, r.view, r.position);
    },
  },
  {
    method: 'PUT',
    path: '/products/:sku',
    scope: 'catalog',
    handler: async (ctx, body, deps) => {
      const input = validateProductInput(body, deps.clock.now());
      const r = await upsertProduct(deps, callerOf(ctx), ctx.state.params.sku, input, meta(ctx, deps));
      return writeAnswer(200, r.view, r.position);
    },
  },
  {
    method: 'PATCH',
    path: '/products/:sku',
    scope: 'catalog',
    handler: async (ctx, body, deps) => {
      const patch = validateProductPatch(body, deps.clock.now());
      const r = await patchProduct(deps, callerOf(ctx), ctx.state.params.sku, patch, meta(ctx, deps));
      return writeAnswer(200, r.view, r.position);
    },
  },
  {
    method: 'DELETE',
    path: '/products/:sku',
    scope: 'catalog',
    handler: async (ctx, _body, deps) => {
      const r = await removeProduct(deps, callerOf(ctx), ctx.state.params.sku, meta(ctx, deps));
      return writeAnswer(204, null, r.position);
    },
  },
];
