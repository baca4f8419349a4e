/**
 * Admin routes of the operator surface (registered through the admin app's `extend`, behind the admin token):
 *
 * - GET  /admin/v1/partners/{partner_id}/history?env=&limit=&cursor=  operation history, newest first
 * - GET  /admin/v1/partners/{partner_id}/export?env=                  the partner's events, NDJSON in log order
 * - GET  /admin/v1/projections                                        checkpoint, lag, state, rebuild progress
 * - POST /admin/v1/projections/{name}/rebuild                         202: a new generation is being built
 * - GET  /admin/v1/projections/parked?projection=&limit=               events a projection could not apply (parked)
 * - POST /admin/v1/projections/parked/retry                            `{ids: [...]}` or `{all: true}`: apply them again
 * - POST /admin/v1/audit/verify                                       every read-model difference with its stream
 * - GET  /admin/v1/cover-checks/dead-letters?limit=                   cover checks that failed every delivery
 * - POST /admin/v1/cover-checks/dead-letters/requeue                  `{ids: [...]}` or `{all: true}`: run them again
 */
import { Readable } from 'node:stream';
import type Router from '@koa/router';
import { ProblemError, fieldError, invalid, notFound } from '../../shared-schema/contract/problems.js';
import { ENVIRONMENTS, type Environment } from '../../shared-schema/domain/streams.js';
import type { EventStore } from '../../shared-schema/ports/event-store.js';
import type { Messaging } from '../../shared-schema/ports/messaging.js';
import { readJson } from '../http/admin/app.js';
import { listCoverDeadLetters, requeueCoverDeadLetters } from './cover-dead-letters.js';
import { RebuildRunningError, UnknownProjectionError } from '../../projections/rebuild.js';
import { decodeHistoryCursor, readHistory } from './history.js';
import { exportPartner } from './audit.js';
import type { Operations } from './operations.js';
import { PARTNERS, type PartnerDoc } from '../../shared-schema/read-models/partners.js';

function envQuery(raw: unknown): Environment | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (!ENVIRONMENTS.includes(raw as Environment)) throw invalid([fieldError('env', 'enum', 'env: live or test.')]);
  return raw as Environment;
}

function limitQuery(raw: unknown, fallback = 50, max = 500): number {
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > max)
    throw invalid([fieldError('limit', 'range', `limit: an integer from 1 to ${max}.`)]);
  return n;
}

/** `{ids: [...]}` (1 to 1000 ids) or `{all: true}`, exactly one: a requeue (retry) of everything is never implied. */
function idsOrAll(body: Record<string, unknown>, what: 'requeue' | 'retry', item: string): string[] | undefined {
  const unknown = Object.keys(body).filter((k) => k !== 'ids' && k !== 'all');
  if (unknown.length > 0)
    throw invalid(unknown.map((k) => fieldError(k, 'unknown_field', `${k}: not a field of a ${what}.`)));
  if (body.all === true && body.ids === undefined) return undefined;
  const ids = body.ids;
  if (
    body.all === undefined &&
    Array.isArray(ids) &&
    ids.length >= 1 &&
    ids.length <= 1000 &&
    ids.every((id) => typeof id === 'string' && id !== '')
  ) {
    return ids as string[];
  }
  throw invalid([fieldError('', what, `Send {"ids": ["<${item} id>", ...]} (1 to 1000 ids) or {"all": true}.`)]);
}

export function operationsAdminRoutes(router: Router, ops: Operations, events: EventStore, messaging: Messaging): void {
  router.get('/partners/:partner_id/history', async (ctx) => {
    const env = envQuery(ctx.query.env);
    const limit = limitQuery(ctx.query.limit);
    let after: string | undefined;
    if (typeof ctx.query.cursor === 'string' && ctx.query.cursor !== '') {
      after = decodeHistoryCursor(ctx.query.cursor) ?? undefined;
      if (!after) throw invalid([fieldError('cursor', 'invalid', 'The cursor is not valid.')]);
    }
    const page = await readHistory(ops.historyReads, ctx.params.partner_id, {
      limit,
      ...(env ? { env } : {}),
      ...(after ? { after } : {}),
    });
    ctx.body = { partner_id: ctx.params.partner_id, ...page };
  });

  router.get('/partners/:partner_id/export', async (ctx) => {
    const env = envQuery(ctx.query.env);
    const partner = await ops.reads.get<PartnerDoc>(PARTNERS, ctx.params.partner_id);
    if (!partner) throw notFound('No such partner.');
    ctx.type = 'application/x-ndjson';
    ctx.set('Content-Disposition', `attachment; filename="${ctx.params.partner_id}${env ? `-${env}` : ''}.ndjson"`);
    ctx.body = Readable.from(exportPartner(events, ctx.params.partner_id, env));
  });

  router.get('/projections', async (ctx) => {
    ctx.body = { projections: await ops.projections() };
  });

  router.get('/projections/parked', async (ctx) => {
    const raw = ctx.query.projection;
    let projection: string | undefined;
    if (raw !== undefined && raw !== '') {
      if (typeof raw !== 'string' || !ops.rebuilder.projectors.some((p) => p.name === raw))
        throw notFound('No such projection.');
      projection = raw;
    }
    const limit = limitQuery(ctx.query.limit, 100, 1000);
    ctx.body = await ops.parked({ limit, ...(projection ? { projection } : {}) });
  });

  router.post('/projections/parked/retry', async (ctx) => {
    ctx.body = await ops.retryParked(idsOrAll(await readJson(ctx), 'retry', 'parked event'));
  });

  router.post('/projections/:name/rebuild', async (ctx) => {
    try {
      ctx.status = 202;
      ctx.body = ops.rebuilder.start(ctx.params.name);
    } catch (err) {
      if (err instanceof UnknownProjectionError)
        throw notFound(
          `No such projection; the projections: ${ops.rebuilder.projectors.map((p) => p.name).join(', ')}.`,
        );
      if (err instanceof RebuildRunningError)
        throw new ProblemError(409, [fieldError('name', 'rebuild_running', err.message)]);
      throw err;
    }
  });

  router.post('/audit/verify', async (ctx) => {
    const report = await ops.verify();
    ctx.body = { ok: report.differences.length === 0, ...report };
  });

  router.get('/cover-checks/dead-letters', async (ctx) => {
    ctx.body = await listCoverDeadLetters(messaging, limitQuery(ctx.query.limit, 100, 1000));
  });

  router.post('/cover-checks/dead-letters/requeue', async (ctx) => {
    ctx.body = await requeueCoverDeadLetters(messaging, idsOrAll(await readJson(ctx), 'requeue', 'dead letter'));
  });
}
