/**
 * The one way a door of ours answers an error, whether it is a Koa app (the partner doors, the admin API) or a plain
 * Node handler (the click redirector, `/metrics`, the gateway's refusals before any handler): every error becomes an
 * RFC 9457 problem (`type` under the partner API's base URL, the request id, the field errors as capped by
 * `ProblemError`) with the same status, headers and body (`problemAnswer`), and is logged the one way: a client that
 * went away at info without a stack, an unexpected error at error with its stack, a problem (a refusal we meant) not
 * at all here (the request's own line records its status). The security headers are `listen`'s, on every answer.
 */
import type http from 'node:http';
import type { Logger } from 'pino';
import { CLIENT_CLOSED, isClientAbort, logClientGone } from './client-abort.js';
import { ProblemError, methodNotAllowed, notFound, type ProblemBody } from '../../shared-schema/contract/problems.js';

/** The media type of every problem answer. */
export const PROBLEM_JSON = 'application/problem+json';

/** What `answerProblem` needs of a Koa context (the partner doors' and the admin app's both fit). */
export interface ProblemContext {
  req: http.IncomingMessage;
  method: string;
  status: number;
  body: unknown;
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
  if (ctx.status === 405) return methodNotAllowed(ctx.method, ctx.response.get('Allow'));
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

/** What a problem answers, whichever server writes it: its status, its headers (its own, such as `Allow`,
 * `Retry-After` or `WWW-Authenticate`, and the Content-Type) and its body. */
export interface ProblemAnswer {
  status: number;
  headers: Record<string, string>;
  body: ProblemBody;
}

/** The answer of a problem already decided (no logging: it is a refusal we meant). */
export function answerOf(problem: ProblemError, baseUrl: string, requestId: string): ProblemAnswer {
  return {
    status: problem.status,
    headers: { ...problem.headers, 'Content-Type': PROBLEM_JSON },
    body: problem.toBody(baseUrl, requestId),
  };
}

export interface ProblemOptions {
  /** The partner API's base URL: problems' `type` is `{baseUrl}/problemas/{status}`. */
  baseUrl: string;
  requestId: string;
  /** Carries the request id. */
  log: Logger;
}

/** The answer of any error (`problemOf`, logged as it says). */
export function problemAnswer(err: unknown, req: http.IncomingMessage, options: ProblemOptions): ProblemAnswer {
  return answerOf(problemOf(err, req, options.log), options.baseUrl, options.requestId);
}

/** Answers `err` as its problem on a Koa context (status, headers, `application/problem+json` body). */
export function answerProblem(ctx: ProblemContext, err: unknown, options: ProblemOptions): void {
  const answer = problemAnswer(err, ctx.req, options);
  ctx.status = answer.status;
  for (const [k, v] of Object.entries(answer.headers)) ctx.set(k, v);
  ctx.body = answer.body;
}

/**
 * Answers `err` as its problem from a plain Node handler: the same status, headers and body as `answerProblem`,
 * with `X-Request-Id`, and no body for HEAD (its Content-Length is the GET's, as Koa sends it). Headers the handler
 * set before (Cache-Control, Vary, the security headers) stay. Once an answer has begun nothing more can be said:
 * the error is still logged and the answer ended.
 */
export function writeProblem(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  err: unknown,
  options: ProblemOptions,
): void {
  const answer = problemAnswer(err, req, options);
  if (res.headersSent) {
    res.end();
    return;
  }
  const body = JSON.stringify(answer.body);
  res.writeHead(answer.status, {
    ...answer.headers,
    'Content-Length': String(Buffer.byteLength(body)),
    'X-Request-Id': options.requestId,
  });
  res.end(req.method === 'HEAD' ? undefined : body);
}
