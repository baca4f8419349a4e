/**
 * The operator's partners, keys and stores, behind the admin token:
 *
 * - POST /admin/v1/partners {name, partner_type}                       → 201 the partner
 * - POST /admin/v1/partners/{partner_id}/keys {environment, scopes?}   → 201 the key (its secret shown only here)
 * - DELETE /admin/v1/keys/{key_id}                                     → 204
 * - POST /admin/v1/partners/{partner_id}/{environment}/stores/{store_id}/approve, /suspend, /reinstate,
 *   /domains/{domain}/approve                                          → the store
 */
import type Koa from 'koa';
import type Router from '@koa/router';
import type { RouterContext } from '@koa/router';
import type { EventMetadata } from '../../../shared-schema/ports/event-store.js';
import { fieldError, invalid, notFound } from '../../../shared-schema/contract/problems.js';
import { ALL_SCOPES, type PartnerType, type Scope } from '../../../shared-schema/events/partner.js';
import { ENVIRONMENTS, streams, type Environment, type Tenant } from '../../../shared-schema/domain/streams.js';
import { EXTERNAL_ID_PATTERN } from '../../../shared-schema/contract/schemas/common.js';
import { KEYS, type KeyDoc } from '../../../shared-schema/read-models/partners.js';
import type { CommandDeps } from '../../../command-api/services/context.js';
import { createPartner, issueKey, revokeKey } from '../../../command-api/services/partners.js';
import { operateStore } from '../../../command-api/services/stores.js';
import type { StoreCommand } from '../../../command-api/deciders/store.js';
import { readJson } from './json-body.js';
import type { Settle } from './app.js';

function environmentParam(raw: string | undefined): Environment {
  if (!ENVIRONMENTS.includes(raw as Environment)) throw notFound('Environment must be live or test.');
  return raw as Environment;
}

export function partnerRoutes(
  router: Router,
  deps: CommandDeps,
  settle: Settle,
  meta: (ctx: Koa.Context) => EventMetadata,
): void {
  router.post('/partners', async (ctx) => {
    const body = await readJson(ctx);
    const errors = [];
    if (typeof body.name !== 'string' || body.name.length < 2 || body.name.length > 120)
      errors.push(fieldError('name', 'required', 'name: 2 to 120 characters.'));
    if (body.partner_type !== 'hub' && body.partner_type !== 'store')
      errors.push(fieldError('partner_type', 'enum', 'partner_type: hub or store.'));
    if (errors.length) throw invalid(errors);
    const r = await createPartner(deps, body.name as string, body.partner_type as PartnerType, meta(ctx));
    await settle(r.position);
    ctx.status = 201;
    ctx.body = r.partner;
  });

  router.post('/partners/:partner_id/keys', async (ctx) => {
    const body = await readJson(ctx);
    const errors = [];
    if (!ENVIRONMENTS.includes(body.environment as Environment))
      errors.push(fieldError('environment', 'enum', 'environment: live or test.'));
    const scopes = body.scopes;
    if (scopes !== undefined && (!Array.isArray(scopes) || scopes.some((s) => !ALL_SCOPES.includes(s as Scope)))) {
      errors.push(fieldError('scopes', 'enum', `scopes: any of ${ALL_SCOPES.join(', ')}.`));
    }
    if (errors.length) throw invalid(errors);
    const r = await issueKey(
      deps,
      ctx.params.partner_id,
      body.environment as Environment,
      scopes as Scope[] | undefined,
      meta(ctx),
    );
    await settle(r.position);
    ctx.status = 201;
    ctx.body = r.key;
  });

  router.delete('/keys/:key_id', async (ctx) => {
    const [key] = await deps.reads.find<KeyDoc>(KEYS, { where: { key_id: ctx.params.key_id }, limit: 1 });
    if (!key) throw notFound('No such key.');
    const r = await revokeKey(deps, key.partner_id, ctx.params.key_id, meta(ctx));
    await settle(r.position, streams.partner(key.partner_id));
    ctx.status = 204;
  });

  const storeAction = (path: string, command: (ctx: RouterContext) => StoreCommand) =>
    router.post(`/partners/:partner_id/:environment/stores/:store_id${path}`, async (ctx) => {
      const tenant: Tenant = { partnerId: ctx.params.partner_id, env: environmentParam(ctx.params.environment) };
      if (!new RegExp(EXTERNAL_ID_PATTERN).test(ctx.params.store_id)) throw notFound('No such store.');
      const r = await operateStore(deps, tenant, ctx.params.store_id, command(ctx), meta(ctx));
      await settle(r.position, streams.store(tenant, ctx.params.store_id));
      ctx.body = r.view;
    });
  storeAction('/approve', () => ({ type: 'ApproveStore' }));
  storeAction('/domains/:domain/approve', (ctx) => ({ type: 'ApproveDomain', domain: ctx.params.domain }));
  storeAction('/suspend', () => ({ type: 'SuspendStore' }));
  storeAction('/reinstate', () => ({ type: 'ReinstateStore' }));
}
