/**
 * The outermost middleware of both partner doors: sets `X-Request-Id`, turns every error into a problem
 * (`answerProblem`, as every Koa app of ours does), logs one
 * line per request (never a body or a key), then hands the outcome to `onCompleted` (errors there are logged and
 * never change the answer).
 */
import type { Logger } from 'pino';
import { answerProblem, statusProblem } from './problem-answer.js';
import { newRequestId } from '../../shared-schema/domain/ids.js';
import type { Caller, DoorContext, DoorMiddleware, DoorState, Next } from '../../shared-schema/http/context.js';

/** What `onCompleted` learns of a request once its answer is decided (operation history, metrics). */
export interface CompletedRequest {
  requestId: string;
  method: string;
  /** Route template (`/products/:sku`), or null when no route matched. */
  route: string | null;
  /** The path as sent (without the query): never a metrics label as such. */
  path: string;
  status: number;
  ms: number;
  caller: Caller | undefined;
  params: Record<string, string>;
  /** True for methods other than GET / HEAD. */
  write: boolean;
  /** Parsed request body (writes that got that far), for field names and references only. */
  body: unknown;
  /** Response body as answered. */
  answer: unknown;
}

export function requestEnvelope(options: {
  log: Logger;
  baseUrl: string;
  onCompleted?: (request: CompletedRequest) => void;
}): DoorMiddleware {
  return async (ctx: DoorContext, next: Next) => {
    const started = process.hrtime.bigint();
    const requestId = newRequestId();
    ctx.state = new RequestState(requestId, options.log);
    ctx.set('X-Request-Id', requestId);
    try {
      await next();
      const unanswered = statusProblem(ctx, 'No such resource.');
      if (unanswered) throw unanswered;
    } catch (err) {
      answerProblem(ctx, err, { baseUrl: options.baseUrl, requestId, log: ctx.state.log });
    } finally {
      const caller = ctx.state.caller;
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      options.log.info(
        {
          request_id: requestId,
          method: ctx.method,
          route: ctx.state.route?.path ?? ctx.path.split('?')[0],
          status: ctx.status,
          ms,
          partner_id: caller?.partnerId,
          environment: caller?.env,
          key_id: caller?.keyId,
        },
        'request',
      );
      if (options.onCompleted) {
        try {
          const write = ctx.method !== 'GET' && ctx.method !== 'HEAD';
          const route = ctx.state.route?.path ?? null;
          options.onCompleted({
            requestId,
            method: ctx.method,
            route,
            path: ctx.path,
            status: ctx.status,
            ms,
            caller,
            params: ctx.state.params,
            write,
            body: ctx.state.body,
            answer: ctx.body,
          });
        } catch (err) {
          ctx.state.log.error({ err }, 'onCompleted hook failed');
        }
      }
    }
  };
}

/**
 * A request's state, one shape for every request (fields in a fixed order, so property reads stay fast). Its child
 * logger is made on first use: most requests only write the envelope's one line.
 */
class RequestState implements DoorState {
  caller?: Caller;
  route?: DoorState['route'];
  params: Record<string, string> = {};
  body?: unknown;
  rawBody?: Buffer;
  position?: number;
  private child: Logger | undefined;

  constructor(
    readonly requestId: string,
    private readonly baseLog: Logger,
  ) {}

  get log(): Logger {
    return (this.child ??= this.baseLog.child({ request_id: this.requestId }));
  }
}
