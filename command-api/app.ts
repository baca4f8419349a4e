/**
 * The command door: the routes that turn each write into a command, behind the front both doors share
 * (infra/http/front-door.ts: request id → 401 → 429 → route (404/405) → 403). Then, here: 413 (body) → 422 (path,
 * query) → idempotency → 422 (body validation) → business rules.
 */
import { callerOf, tenantKey, type DoorContext, type DoorRoutes } from '../shared-schema/http/context.js';
import { pathParamErrors, writeQueryErrors } from '../shared-schema/http/parameters.js';
import { Idempotency, type StoredResponse } from './idempotency.js';
import { invalid, notFound } from '../shared-schema/contract/problems.js';
import { BODY_LIMITS, BodyReader, type BodyRules } from './json-body.js';
import type { CommandDeps } from './services/context.js';
import { routeKey, type RouteSpec } from '../shared-schema/http/routes.js';

export interface WriteAnswer extends StoredResponse {
  /** Log position reached by the write, shared with the query door for read-your-writes. */
  position?: number;
}

export type WriteHandler = (ctx: DoorContext, body: unknown, deps: CommandDeps) => Promise<WriteAnswer>;

/** An answer of `status`, carrying the log position the write reached when it wrote one. */
export function writeAnswer(
  status: number,
  body: unknown,
  position?: number,
  headers: Record<string, string> = {},
): WriteAnswer {
  const a: WriteAnswer = { status, body, headers };
  if (position !== undefined) a.position = position;
  return a;
}

/** A write route of the contract, declared once: what the front door matches and authorizes, and its handler. */
export interface WriteRoute extends RouteSpec {
  method: Exclude<RouteSpec['method'], 'GET'>;
  handler: WriteHandler;
  /** A batch body: five times larger than any other, and given twice as long to arrive. */
  batch?: true;
}

export interface CommandDoorOptions {
  deps: CommandDeps;
  routes: readonly WriteRoute[];
  /** Default: BODY_RULES. */
  bodies?: BodyRules;
}

export function commandDoor(options: CommandDoorOptions): DoorRoutes {
  const { deps } = options;
  const idempotency = new Idempotency(deps.reads, deps.clock);
  const bodies = new BodyReader(options.bodies);
  const handlers = new Map(options.routes.map((r) => [routeKey(r), r]));
  return {
    routes: async (ctx: DoorContext) => {
      const route = ctx.state.route && handlers.get(routeKey(ctx.state.route));
      if (!route) throw notFound('No such resource.');
      const batch = route.batch === true;
      const limit = batch ? BODY_LIMITS.batch : BODY_LIMITS.default;
      const body = route.method === 'DELETE' ? undefined : await bodies.read(ctx, limit, batch ? 2 : 1);
      const requestErrors = [...pathParamErrors(ctx.state.params), ...writeQueryErrors(ctx.query)];
      if (requestErrors.length > 0) throw invalid(requestErrors);
      let position: number | undefined;
      const answer = await idempotency.run(ctx, body, async () => {
        const a = await route.handler(ctx, body, deps);
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
