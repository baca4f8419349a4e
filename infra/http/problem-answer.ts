/**
 * The one way a Koa app of ours answers an error: every error thrown under its outermost middleware, and every
 * status a router set without a body, becomes an RFC 9457 problem (`type` under the partner API's base URL, the
 * request id, the field errors as capped by `ProblemError`), and is logged the one way: a client that went away at
 * info without a stack, an unexpected error at error with its stack, a problem (a refusal we meant) not at all here
 * (the request's own line records its status).
 */
import type http from 'node:http';
import type { Logger } from 'pino';
import { CLIENT_CLOSED, isClientAbort, logClientGone } from './client-abort.js';
import { ProblemError, notFound } from '../../shared-schema/contract/problems.js';

/** What `answerProblem` needs of a Koa context (the partner doors' and the admin app's both fit). */
export interface ProblemContext {
  req: http.IncomingMessage;
  method: string;
  status: number;
  body: unknown;
  type: string;
  set(field: string, value: string): void;
  response: { get(field: string): string };
}

/**
 * The problem of a status the router set without a body (404: no such path, 405 with `Allow`, 501), or undefined
 * when the answer has a body or is not an error.
 */
export function statusProblem(ctx: ProblemContext, notFoundDetail: string): ProblemError | undefined {
  if (ctx.status < 400 || (ctx.body !== undefined && ctx.body !== null)) return undefined;
  if (ctx.status === 404) return notFound(notFoundDetail);
  if (ctx.status === 405) {
    const allow = ctx.response.get('Allow');
    return new ProblemError(405, [], `${ctx.method} is not allowed here; allowed: ${allow}.`, { Allow: allow });
  }
  if (ctx.status === 501) return new ProblemError(501, [], `The method ${ctx.method} is not implemented.`);
  return new ProblemError(ctx.status, []);
}

/**
 * A problem as it is; a client that closed its connection mid-request a 499 nobody reads (not a fault of ours); a
 * 4xx some middleware threw (http-errors style, e.g. from Koa's body reading) as that status, with its message
 * only when it is meant for the client; anything else a 500 logged with its stack. `log` carries the request id.
 */
export function problemOf(err: unknown, req: http.IncomingMessage, log: Logger): ProblemError {
  if (err instanceof ProblemError) return err;
  if (isClientAbort(err, req)) {
    logClientGone(log, err);
    return new ProblemError(CLIENT_CLOSED, [], 'The client closed the connection before the answer.');
  }
  const e = err as { status?: unknown; expose?: unknown; message?: unknown } | null;
  if (typeof e?.status === 'number' && e.status >= 400 && e.status < 500) {
    const detail = e.expose === true && typeof e.message === 'string' && e.message ? e.message : undefined;
    return new ProblemError(e.status, [], detail);
  }
  log.error({ err }, 'unhandled error');
  return new ProblemError(500, [], 'Internal error. Quote the X-Request-Id to support.');
}

/** Answers `err` as its problem (status, headers, `application/problem+json` body). */
export function answerProblem(
  ctx: ProblemContext,
  err: unknown,
  options: { baseUrl: string; requestId: string; log: Logger },
): void {
  const problem = problemOf(err, ctx.req, options.log);
  ctx.status = problem.status;
  for (const [k, v] of Object.entries(problem.headers)) ctx.set(k, v);
  ctx.type = 'application/problem+json';
  ctx.body = problem.toBody(options.baseUrl, options.requestId);
}
