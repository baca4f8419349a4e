/**
 * The front of the admin API: a request id, the token check (401 otherwise) that names the actor, every failure
 * answered as a problem, and one `admin request` log line per request. The actor is the token's, never a name the
 * caller states; every token is compared, so the time does not tell which one matched.
 */
import type Koa from 'koa';
import { timingSafeEqual, createHash } from 'node:crypto';
import type { Logger } from 'pino';
import { answerProblem, statusProblem } from '../problem-answer.js';
import { BEARER_CHALLENGE, ProblemError } from '../../../shared-schema/contract/problems.js';
import { newRequestId } from '../../../shared-schema/domain/ids.js';
import type { NamedAdminToken } from '../../wiring/config.js';

const digest = (s: string) => createHash('sha256').update(s).digest();

export function adminEnvelope(options: {
  token: string;
  namedTokens?: readonly NamedAdminToken[] | undefined;
  problemBaseUrl: string;
  log: Logger;
}): Koa.Middleware {
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

  return async (ctx, next) => {
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
  };
}
