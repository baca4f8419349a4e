/**
 * GET /statement, /closings, /closings/{period}, /closings/{period}/movements.csv (spec LEDGER.md). The statement
 * takes the window rules of `GET /clicks` (shared-schema/http/window.ts) and signs its cursors; its balances and its
 * page are read from one state of the movements read model. A closing is a pure function of the movements of a
 * period that has ended: served again, it gives the same bytes. A window or period that has ended is read only once
 * the projections have applied the log up to its head as of the request (`untilLedgerSettled`).
 */
import { Readable } from 'node:stream';
import { callerOf, type DoorContext } from '../../shared-schema/http/context.js';
import { DEFAULT_LIMIT, decodeCursor, encodeCursor, type CursorScope } from '../../shared-schema/http/pagination.js';
import { encodeWindowCursor, pageWindow } from '../../shared-schema/http/window.js';
import { JSON_TYPE, stringifyBigCents } from '../../shared-schema/http/big-json.js';
import { ProblemError, conflict } from '../../shared-schema/contract/problems.js';
import { LEDGER, ledgerScopeId, type LedgerStateDoc } from '../../shared-schema/read-models/ledger.js';
import { ListClosingsQuery, StatementQuery } from '../../shared-schema/contract/schemas/ledger.js';
import type { Tenant } from '../../shared-schema/domain/streams.js';
import type { QueryDeps, ReadRoute } from '../app.js';
import { NO_QUERY } from '../no-query.js';
import type { Scalar } from '../../shared-schema/ports/read-store.js';
import {
  answerBalance,
  answerMovement,
  balanceBefore,
  closingCsv,
  closingOf,
  firstMovement,
  isClosed,
  movementKey,
  movementsIn,
  periodBounds,
  periodOf,
  periodPlus,
  type LedgerScope,
} from '../ledger.js';
import { consistently } from './commerce.js';
import { textOf } from './catalog.js';

const json = (ctx: DoorContext, body: unknown): string => {
  ctx.type = JSON_TYPE;
  return stringifyBigCents(body);
};

/** 409 `period_open` until the service clock has passed the period's end. */
function closedPeriod(deps: QueryDeps, period: string): string {
  if (!isClosed(period, deps.clock.now()))
    throw conflict(
      'period',
      'period_open',
      `The period ${period} has not ended yet; it closes at its end in America/Sao_Paulo.`,
    );
  return period;
}

/** 503 with `Retry-After`: the projections did not reach the log's head within the bound. */
export class LedgerBehind extends ProblemError {
  constructor() {
    super(
      503,
      [],
      'Events recorded before this request are still being applied to the statement; try again in a second.',
      { 'Retry-After': '1' },
    );
  }
}

/**
 * A window that has ended by the service clock never changes (spec LEDGER.md), so its first answer must already hold
 * every movement booked in it. Read-your-writes covers the caller's own writes once their answers have raised the
 * tenant's number; a commit whose position is not published yet (its answer still on the way, a batch, another
 * process or key) would be missed, then appear later in a window already answered. So before reading a window that
 * has ended, wait (bounded) until the projections have committed the log's head as of now: an event recorded after
 * that head is booked by a clock read after now (the stores book at recording), so not inside the window. Past the
 * bound: 503 with `Retry-After`, never a window that could change. A window that has not ended promises nothing yet.
 */
export async function untilLedgerSettled(deps: QueryDeps, tenant: Tenant, windowEnd: string): Promise<void> {
  const end = Date.parse(windowEnd);
  const now = deps.clock.now().getTime();
  if (end > now) return;
  // A head already projected, read after the clock had passed this window's end: nothing can still fall inside it.
  if (deps.ledgerSettled?.covers(end, now)) return;
  // A tenant's bookings never go back in log order (the stores book at recording, and the projector never books
  // before the tenant's previous movement): once its last projected movement is booked at or after the window's end,
  // every movement that could fall inside the window is projected already, and no wait is needed.
  const booked = (await deps.reads.get<LedgerStateDoc>(LEDGER.state, ledgerScopeId(tenant)))?.booked_at;
  if (booked !== undefined && booked >= windowEnd) return;
  // The clock is read before the head: every event after that head is booked at or after this reading.
  const startedAt = deps.clock.now().getTime();
  const head = await deps.logHead();
  if (await deps.waitForPosition(head, deps.logWaitTimeoutMs ?? 5000)) {
    deps.ledgerSettled?.settledAt(startedAt);
    return;
  }
  throw new LedgerBehind();
}

/**
 * Up to `limit` movements of the window after `after`, and the balances at its ends, from one state of the model;
 * a window that has ended is read once the projections hold every event recorded before the call.
 */
export async function readStatement(
  deps: QueryDeps,
  scope: LedgerScope,
  window: { since: string; until: string },
  limit: number,
  after?: Scalar[],
) {
  await untilLedgerSettled(deps, scope.tenant, window.until);
  return consistently(
    deps.reads,
    async (view) => ({
      rows: await movementsIn(view, scope, window, limit, after),
      opening: await balanceBefore(view, scope, window.since),
      closing: await balanceBefore(view, scope, window.until),
    }),
    LEDGER.projection,
  );
}

async function statement(ctx: DoorContext, query: Record<string, unknown>, deps: QueryDeps) {
  const caller = callerOf(ctx);
  const storeId = textOf(query.store_id);
  const scope: LedgerScope = { tenant: caller, ...(storeId !== undefined ? { storeId } : {}) };
  const cursorScope: CursorScope = { tenant: caller, list: 'statement', filters: { store_id: storeId } };
  const { window, after } = pageWindow(deps.cursorSecret, cursorScope, query, deps.clock.now(), [
    'string',
    'number',
    'string',
  ]);
  const limit = (query.limit as number | undefined) ?? DEFAULT_LIMIT;
  const { rows, opening, closing } = await readStatement(deps, scope, window, limit + 1, after);
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return {
    since: window.since,
    until: window.until,
    store_id: storeId ?? null,
    environment: caller.env,
    currency: 'BRL' as const,
    opening: answerBalance(opening),
    closing: answerBalance(closing),
    data: page.map((m) => answerMovement(scope, m)),
    next_cursor:
      rows.length > limit && last
        ? encodeWindowCursor(deps.cursorSecret, cursorScope, window, movementKey(last))
        : null,
  };
}

/** Up to `limit` closings from the period `start` back to the one of the tenant's first movement, newest first. */
export async function closingsFrom(deps: QueryDeps, tenant: Tenant, start: string, limit: number) {
  await untilLedgerSettled(deps, tenant, periodBounds(start).until);
  const first = await firstMovement(deps.reads, { tenant });
  const firstPeriod = first ? periodOf(first.recorded_at) : null;
  const periods: string[] = [];
  if (firstPeriod !== null)
    for (let p = start; p >= firstPeriod && periods.length < limit; p = periodPlus(p, -1)) periods.push(p);
  const data = [];
  for (const period of periods) data.push(await closingOf(deps.reads, tenant, period));
  return { data, periods, firstPeriod };
}

/** Closings newest first: every closed period from the one of the first movement to the last closed one. */
async function closings(ctx: DoorContext, query: Record<string, unknown>, deps: QueryDeps) {
  const caller: Tenant = callerOf(ctx);
  const cursorScope: CursorScope = { tenant: caller, list: 'closings' };
  const limit = (query.limit as number | undefined) ?? DEFAULT_LIMIT;
  const start =
    typeof query.cursor === 'string'
      ? periodPlus(decodeCursor(deps.cursorSecret, cursorScope, query.cursor, ['string'])[0] as string, -1)
      : periodPlus(periodOf(deps.clock.now()), -1);
  const { data, periods, firstPeriod } = await closingsFrom(deps, caller, start, limit);
  const last = periods[periods.length - 1];
  return {
    data,
    next_cursor:
      last !== undefined && firstPeriod !== null && last > firstPeriod
        ? encodeCursor(deps.cursorSecret, cursorScope, [last])
        : null,
  };
}

export const ledgerReadRoutes: readonly ReadRoute[] = [
  {
    method: 'GET',
    path: '/statement',
    scope: 'reports',
    query: StatementQuery,
    handle: async (ctx, query, deps) => json(ctx, await statement(ctx, query, deps)),
  },
  {
    method: 'GET',
    path: '/closings',
    scope: 'reports',
    query: ListClosingsQuery,
    handle: async (ctx, query, deps) => json(ctx, await closings(ctx, query, deps)),
  },
  {
    method: 'GET',
    path: '/closings/:period',
    scope: 'reports',
    query: NO_QUERY,
    handle: async (ctx, _query, deps) => {
      const period = closedPeriod(deps, ctx.state.params.period);
      await untilLedgerSettled(deps, callerOf(ctx), periodBounds(period).until);
      return json(ctx, await closingOf(deps.reads, callerOf(ctx), period));
    },
  },
  {
    method: 'GET',
    path: '/closings/:period/movements.csv',
    scope: 'reports',
    query: NO_QUERY,
    handle: async (ctx, _query, deps) => {
      const period = closedPeriod(deps, ctx.state.params.period);
      await untilLedgerSettled(deps, callerOf(ctx), periodBounds(period).until);
      ctx.attachment(`movements-${callerOf(ctx).env}-${period}.csv`, { type: 'inline' });
      ctx.type = 'text/csv; charset=utf-8';
      // Bytes, not objects: the stream holds one page of text ahead of the socket, not 16.
      return Readable.from(closingCsv(deps.reads, callerOf(ctx), period), { objectMode: false });
    },
  },
];
