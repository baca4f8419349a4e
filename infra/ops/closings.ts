/**
 * The operator's closings (spec LEDGER.md "For the operator and the auditor"):
 *
 * - GET  /admin/v1/partners/{partner_id}/closings/{period}/movements.csv?env=   the CSV the partner downloads
 * - POST /admin/v1/closings/verify  `{partner_id, env, period}`                  recompute from the log and compare
 *
 * Verification replays the partner's order events from the log alone into a scratch store, with the same projector,
 * and compares the closing and the CSV's bytes (line by line, streamed) with what the service serves now, and with
 * the served movements' lines written again from their fields.
 */
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import type Router from '@koa/router';
import { ProblemError, fieldError, invalid } from '../../shared-schema/contract/problems.js';
import { ENVIRONMENTS, type Environment, type Tenant } from '../../shared-schema/domain/streams.js';
import type { EventStore } from '../../shared-schema/ports/event-store.js';
import type { ReadStore, ReadView } from '../../shared-schema/ports/read-store.js';
import { PERIOD_PATTERN } from '../../shared-schema/http/parameters.js';
import { LEDGER, LEDGER_COLLECTIONS } from '../../shared-schema/read-models/ledger.js';
import { ledgerProjector } from '../../projections/projectors/ledger.js';
import type { Projector } from '../../projections/projector.js';
import { replay } from '../../projections/replay.js';
import { closingCsv, closingOf, isClosed } from '../../query-api/ledger.js';
import { readJson } from '../http/admin/app.js';
import { belongsTo, sqliteScratch, type ScratchStore } from './audit.js';

const PERIOD = new RegExp(PERIOD_PATTERN);
const CAUGHT_UP_MS = 30_000;

export interface ClosingVerifyDeps {
  events: EventStore;
  /** The live read models (logical names). */
  live: ReadStore;
  now: () => Date;
  scratch?: () => Promise<ScratchStore>;
}

export interface ClosingVerifyReport {
  ok: boolean;
  partner_id: string;
  env: Environment;
  period: string;
  served: { sha256: string; lines: number };
  recomputed: { sha256: string; lines: number };
  /** 1-based line of the CSV where the two first differ (null when identical). */
  first_difference_line: number | null;
  /** The closing's JSON fields that differ (sha256 included). */
  closing_differences: string[];
}

/** 422 on every bad field of a partner, environment and period. */
function closingTarget(raw: { partner_id?: unknown; env?: unknown; period?: unknown }): {
  tenant: Tenant;
  period: string;
} {
  const errors = [];
  if (typeof raw.partner_id !== 'string' || raw.partner_id === '')
    errors.push(fieldError('partner_id', 'required', 'partner_id: the partner.'));
  if (!ENVIRONMENTS.includes(raw.env as Environment)) errors.push(fieldError('env', 'enum', 'env: live or test.'));
  if (typeof raw.period !== 'string' || !PERIOD.test(raw.period))
    errors.push(fieldError('period', 'pattern', 'period: a month, YYYY-MM.'));
  if (errors.length > 0) throw invalid(errors);
  return { tenant: { partnerId: raw.partner_id as string, env: raw.env as Environment }, period: raw.period as string };
}

function mustBeClosed(period: string, now: Date): void {
  if (!isClosed(period, now))
    throw new ProblemError(409, [fieldError('period', 'period_open', `The period ${period} has not ended yet.`)]);
}

/** The CSV's lines (each with its CRLF), from its chunks, one at a time. */
async function* lines(
  view: ReadView,
  tenant: Tenant,
  period: string,
  from: 'lines' | 'fields' = 'lines',
): AsyncGenerator<string> {
  let rest = '';
  for await (const chunk of closingCsv(view, tenant, period, undefined, from)) {
    rest += chunk;
    let end: number;
    while ((end = rest.indexOf('\r\n')) >= 0) {
      yield rest.slice(0, end + 2);
      rest = rest.slice(end + 2);
    }
  }
  if (rest !== '') yield rest;
}

async function compareCsv(served: ReadView, recomputed: ReadView, tenant: Tenant, period: string) {
  const a = lines(served, tenant, period);
  const b = lines(recomputed, tenant, period);
  // The served movements' lines written again from their fields: a stored line that no longer says what its
  // movement says (a read model edited by hand) is a difference even where the bytes served still match.
  const f = lines(served, tenant, period, 'fields');
  const hashA = createHash('sha256');
  const hashB = createHash('sha256');
  let n = 0;
  let linesA = 0;
  let linesB = 0;
  let first: number | null = null;
  for (;;) {
    const [x, y, z] = await Promise.all([a.next(), b.next(), f.next()]);
    if (x.done && y.done && z.done) break;
    n++;
    if (!x.done) {
      hashA.update(x.value, 'utf8');
      linesA++;
    }
    if (!y.done) {
      hashB.update(y.value, 'utf8');
      linesB++;
    }
    if (first === null && (x.done || y.done || z.done || x.value !== y.value || z.value !== y.value)) first = n;
  }
  return {
    served: { sha256: hashA.digest('hex'), lines: linesA },
    recomputed: { sha256: hashB.digest('hex'), lines: linesB },
    first_difference_line: first,
  };
}

/** Only the tenant's events: its movements and balances do not depend on anyone else's. */
const onlyTenant = (tenant: Tenant): Projector => ({
  ...ledgerProjector,
  apply: (event, tx) =>
    belongsTo(event, tenant.partnerId, tenant.env) ? ledgerProjector.apply(event, tx) : Promise.resolve(),
});

async function verifyClosing(deps: ClosingVerifyDeps, tenant: Tenant, period: string): Promise<ClosingVerifyReport> {
  mustBeClosed(period, deps.now());
  const head = await deps.events.headPosition();
  // What the service serves must include everything recorded so far (the closed period's events are all in it).
  const deadline = Date.now() + CAUGHT_UP_MS;
  while ((await deps.live.getCheckpoint(LEDGER.projection)) < head) {
    if (Date.now() > deadline) throw new Error('the ledger projection did not reach the head of the log');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const scratch = await (deps.scratch ?? sqliteScratch)();
  try {
    await scratch.store.ensureCollections(LEDGER_COLLECTIONS);
    await replay(deps.events, scratch.store, [onlyTenant(tenant)], { after: 0, upTo: head });
    const csv = await compareCsv(deps.live, scratch.store, tenant, period);
    const served = await closingOf(deps.live, tenant, period);
    const recomputed = await closingOf(scratch.store, tenant, period);
    const closingDifferences = Object.keys(served).filter(
      (k) =>
        JSON.stringify(served[k as keyof typeof served]) !== JSON.stringify(recomputed[k as keyof typeof recomputed]),
    );
    return {
      ok: csv.first_difference_line === null && closingDifferences.length === 0,
      partner_id: tenant.partnerId,
      env: tenant.env,
      period,
      ...csv,
      closing_differences: closingDifferences,
    };
  } finally {
    await scratch.dispose();
  }
}

export function closingsAdminRoutes(router: Router, deps: ClosingVerifyDeps): void {
  router.get('/partners/:partner_id/closings/:period/movements.csv', (ctx) => {
    const { tenant, period } = closingTarget({ ...ctx.params, env: ctx.query.env });
    mustBeClosed(period, deps.now());
    ctx.type = 'text/csv; charset=utf-8';
    ctx.set('Content-Disposition', `attachment; filename="${tenant.partnerId}-${tenant.env}-${period}.csv"`);
    ctx.body = Readable.from(closingCsv(deps.live, tenant, period));
  });

  router.post('/closings/verify', async (ctx) => {
    const body = await readJson(ctx);
    const unknown = Object.keys(body).filter((k) => !['partner_id', 'env', 'period'].includes(k));
    if (unknown.length > 0)
      throw invalid(unknown.map((k) => fieldError(k, 'unknown_field', `${k}: not a field of a verification.`)));
    const { tenant, period } = closingTarget(body);
    ctx.body = await verifyClosing(deps, tenant, period);
  });
}
