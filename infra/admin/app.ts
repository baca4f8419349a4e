/**
 * The operator's admin API (not part of the partner contract): its own port, bound to loopback unless configured,
 * guarded by `Authorization: Bearer <token>`: the single ADMIN_TOKEN (actor `admin`) or one operator's token of
 * ADMIN_TOKENS (actor `admin:<name>`). The actor is the token's, never a name the caller states, and is recorded in
 * the metadata of every event a route appends and in the request's log line. Each write waits until the projections have applied it, so a
 * key issued here works on the very next call.
 */
import { logAppErrors } from '../http/client-abort.js';
import { answerProblem, statusProblem } from '../http/problem-answer.js';
import { MAX_JSON_DEPTH, jsonDeeperThan } from '../../shared-schema/json.js';
import Koa from 'koa';
import Router, { type RouterContext } from '@koa/router';
import { timingSafeEqual, createHash } from 'node:crypto';
import type { Logger } from 'pino';
import { BEARER_CHALLENGE, ProblemError, fieldError, invalid, notFound } from '../../shared-schema/problems.js';
import { newRequestId } from '../../shared-schema/ids.js';
import { ALL_SCOPES, type PartnerType, type Scope } from '../../shared-schema/events/partner.js';
import { ENVIRONMENTS, type Environment, type Tenant } from '../../shared-schema/streams.js';
import { ManualClock, type Clock } from '../../shared-schema/ports/clock.js';
import { metadata, type CommandDeps } from '../../command-api/services/context.js';
import { createPartner, issueKey, revokeKey } from '../../command-api/services/partners.js';
import { operateStore } from '../../command-api/services/stores.js';
import type { StoreCommand } from '../../command-api/deciders/store.js';
import { EXTERNAL_ID_PATTERN } from '../../shared-schema/schemas/common.js';
import { unicodeErrors } from '../../shared-schema/validation.js';
import { adminListRoutes } from './lists.js';
import { channelRoutes } from './channels.js';
import { KEYS, type KeyDoc } from '../../shared-schema/read-models/partners.js';
import type { NamedAdminToken } from '../config.js';

export interface AdminOptions {
  deps: CommandDeps;
  token: string;
  /** ADMIN_TOKENS: one token per operator, recorded as actor `admin:<name>`. */
  namedTokens?: readonly NamedAdminToken[];
  /** The partner API's `{base_url}`: problem types point at its public pages (`{base_url}/problemas/<status>`). */
  problemBaseUrl: string;
  log: Logger;
  clock: Clock;
  waitForPosition: (position: number, timeoutMs: number) => Promise<boolean>;
  /** Called after the manual clock moved (the cover re-check scan); the answer waits for it. */
  onClockMoved?: () => Promise<void> | undefined;
  /** Extra routes (projections, streams, metrics) registered by their own modules. */
  extend?: (router: Router) => void;
}

const digest = (s: string) => createHash('sha256').update(s).digest();

const ADMIN_BODY_LIMIT = 64 * 1024;

/** The request body as a JSON object (at most 64 KiB); an empty body is `{}`; lone surrogates are 422 `unicode`. */
export async function readJson(ctx: Koa.Context): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of ctx.req) {
    size += (c as Buffer).length;
    // Past the limit the rest is read and dropped (up to a bound), so a client still sending reads the 413: leaving
    // the loop here would destroy the request and reset the connection under it.
    if (size > ADMIN_BODY_LIMIT * 16) break;
    if (size <= ADMIN_BODY_LIMIT) chunks.push(c as Buffer);
  }
  if (size > ADMIN_BODY_LIMIT)
    throw new ProblemError(413, [], `The body is larger than ${ADMIN_BODY_LIMIT / 1024} KiB.`);
  if (size === 0) return {};
  const raw = Buffer.concat(chunks);
  if (jsonDeeperThan(raw, MAX_JSON_DEPTH))
    throw invalid([fieldError('', 'json', `The body nests more than ${MAX_JSON_DEPTH} levels deep.`)]);
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw.toString('utf8')) as unknown;
  } catch {
    /* fall through */
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
    throw invalid([fieldError('', 'json', 'Send a JSON object.')]);
  const unicode = unicodeErrors(parsed);
  if (unicode.length > 0) throw invalid(unicode);
  return parsed as Record<string, unknown>;
}

function environmentParam(raw: string | undefined): Environment {
  if (!ENVIRONMENTS.includes(raw as Environment)) throw notFound('Environment must be live or test.');
  return raw as Environment;
}

export function createAdminApi(options: AdminOptions): Koa {
  const { deps } = options;
  const app = new Koa();
  logAppErrors(app, options.log);
  const router = new Router({ prefix: '/admin/v1' });
  const tokens = [
    { actor: 'admin', digest: digest(options.token) },
    ...(options.namedTokens ?? []).map((t) => ({ actor: `admin:${t.name}`, digest: digest(t.token) })),
  ];
  /** The actor of the token sent, or undefined; every token is compared, so the time does not tell which matched. */
  const actorOf = (sent: string): string | undefined => {
    const got = digest(sent);
    let actor: string | undefined;
    for (const t of tokens) if (timingSafeEqual(got, t.digest) && actor === undefined) actor = t.actor;
    return actor;
  };

  app.use(async (ctx, next) => {
    const requestId = newRequestId();
    ctx.set('X-Request-Id', requestId);
    let actor: string | undefined;
    try {
      actor = actorOf(/^Bearer (.+)$/.exec(ctx.get('Authorization'))?.[1] ?? '');
      if (actor === undefined)
        throw new ProblemError(401, [], 'Send `Authorization: Bearer <ADMIN_TOKEN>`.', { ...BEARER_CHALLENGE });
      ctx.state.actor = actor;
      await next();
      // What the router answered without a body (404 no route, 405 wrong method, 501 unknown method) is a problem too.
      const unanswered = statusProblem(ctx, 'No such admin resource.');
      if (unanswered) throw unanswered;
    } catch (err) {
      const log = options.log.child({ request_id: requestId });
      answerProblem(ctx, err, { baseUrl: options.problemBaseUrl, requestId, log });
    } finally {
      options.log.info(
        { request_id: requestId, actor, method: ctx.method, path: ctx.path, status: ctx.status },
        'admin request',
      );
    }
  });

  const settle = async (position: number | undefined) => {
    if (position !== undefined) await options.waitForPosition(position, 10_000);
  };
  const meta = (ctx: Koa.Context) => metadata(options.clock, undefined, ctx.state.actor as string);

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
    await settle(r.position);
    ctx.status = 204;
  });

  const storeAction = (path: string, command: (ctx: RouterContext) => StoreCommand) =>
    router.post(`/partners/:partner_id/:environment/stores/:store_id${path}`, async (ctx) => {
      const tenant: Tenant = { partnerId: ctx.params.partner_id, env: environmentParam(ctx.params.environment) };
      if (!new RegExp(EXTERNAL_ID_PATTERN).test(ctx.params.store_id)) throw notFound('No such store.');
      const r = await operateStore(deps, tenant, ctx.params.store_id, command(ctx), meta(ctx));
      await settle(r.position);
      ctx.body = r.view;
    });
  storeAction('/approve', () => ({ type: 'ApproveStore' }));
  storeAction('/domains/:domain/approve', (ctx) => ({ type: 'ApproveDomain', domain: ctx.params.domain }));
  storeAction('/suspend', () => ({ type: 'SuspendStore' }));
  storeAction('/reinstate', () => ({ type: 'ReinstateStore' }));

  router.get('/streams/:stream', async (ctx) => {
    const events = await deps.events.readStream(ctx.params.stream);
    if (events.length === 0) throw notFound('No such stream.');
    ctx.body = { stream: ctx.params.stream, events };
  });

  router.get('/clock', (ctx) => {
    ctx.body = { now: options.clock.now().toISOString(), manual: options.clock instanceof ManualClock };
  });
  router.post('/clock', async (ctx) => {
    const body = await readJson(ctx);
    if (!(options.clock instanceof ManualClock))
      throw new ProblemError(409, [
        fieldError('', 'clock_not_manual', 'Start the service with CLOCK=manual to move the clock.'),
      ]);
    const ms = body.advance_ms;
    if (typeof ms !== 'number' || !Number.isInteger(ms) || ms < 0)
      throw invalid([fieldError('advance_ms', 'integer', 'advance_ms: a non-negative integer.')]);
    const now = options.clock.advance(ms);
    await options.onClockMoved?.();
    ctx.body = { now: now.toISOString(), manual: true };
  });

  adminListRoutes(router, deps.reads);
  channelRoutes(router, deps, settle, meta);
  options.extend?.(router);
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}
