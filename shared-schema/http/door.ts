/**
 * The front-door middleware both Koa apps (command and query) share, in the order of DECISIONS.md:
 * request id → problems → 401 (key) → 429 (rate) → route (404 / 405) → 403 (scope) → route handlers
 * (413 → 422 → business rules). Nothing here touches an engine directly: lookups arrive as ports.
 */
import type { Logger } from 'pino';
import { ProblemError, unauthorized, forbidden, notFound, fieldError, type FieldError } from '../problems.js';
import { EXTERNAL_ID_PATTERN } from '../schemas/common.js';
import { isPublicPath, matchRoute } from '../routes.js';
import { newRequestId, sha256Hex } from '../ids.js';
import type { Clock } from '../ports/clock.js';
import type { Messaging } from '../ports/messaging.js';
import type { Caller, DoorContext, DoorMiddleware, DoorState, Next } from './context.js';

export const API_PREFIX = '/v1';

/** What `onCompleted` learns of a request once its answer is decided (operation history, metrics). */
export interface CompletedRequest {
  requestId: string;
  method: string;
  /** Route template (`/products/:sku`), or null when no route matched. */
  route: string | null;
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

/**
 * Sets `X-Request-Id`, turns every error into a problem, logs one line per request (never a body or a key), then
 * hands the outcome to `onCompleted` (errors there are logged and never change the answer).
 */
export function requestEnvelope(options: { log: Logger; baseUrl: string; onCompleted?: (request: CompletedRequest) => void }): DoorMiddleware {
  return async (ctx: DoorContext, next: Next) => {
    const started = process.hrtime.bigint();
    const requestId = newRequestId();
    ctx.state = new RequestState(requestId, options.log);
    ctx.set('X-Request-Id', requestId);
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) throw notFound('No such resource.');
    } catch (err) {
      const problem = toProblem(err, ctx);
      ctx.status = problem.status;
      for (const [k, v] of Object.entries(problem.headers)) ctx.set(k, v);
      ctx.type = 'application/problem+json';
      ctx.body = problem.toBody(options.baseUrl, requestId);
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
      // begin onCompleted hook (operations: history, metrics)
      if (options.onCompleted) {
        try {
          const write = ctx.method !== 'GET' && ctx.method !== 'HEAD';
          const route = ctx.state.route?.path ?? null;
          options.onCompleted({ requestId, method: ctx.method, route, status: ctx.status, ms, caller, params: ctx.state.params, write, body: ctx.state.body, answer: ctx.body });
        } catch (err) {
          ctx.state.log.error({ err }, 'onCompleted hook failed');
        }
      }
      // end onCompleted hook
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

function toProblem(err: unknown, ctx: DoorContext): ProblemError {
  if (err instanceof ProblemError) return err;
  const e = err as { status?: number; expose?: boolean; message?: string };
  if (typeof e?.status === 'number' && e.status >= 400 && e.status < 500) {
    return new ProblemError(e.status, [], e.expose ? e.message : undefined);
  }
  ctx.state.log.error({ err }, 'unhandled error');
  return new ProblemError(500, [], 'Internal error. Quote the X-Request-Id to support.');
}

export type KeyRecord = {
  key_id: string;
  partner_id: string;
  partner_name: string;
  partner_type: Caller['partnerType'];
  environment: Caller['env'];
  scopes: Caller['scopes'];
  revoked: boolean;
};

export type KeyLookup = (keyHash: string) => Promise<KeyRecord | null>;

const BEARER = /^Bearer ([A-Za-z0-9_]{1,200})$/;

/** Resolves the caller from `Authorization: Bearer <key>` (only a hash is ever looked up). Public paths pass. */
export function authenticate(lookup: KeyLookup): DoorMiddleware {
  return async (ctx: DoorContext, next: Next) => {
    const path = ctx.path.slice(API_PREFIX.length);
    if (isPublicPath(path) && (ctx.method === 'GET' || ctx.method === 'HEAD')) {
      await next();
      return;
    }
    const match = BEARER.exec(ctx.get('Authorization'));
    if (!match) throw unauthorized();
    const record = await lookup(sha256Hex(match[1]));
    if (!record || record.revoked) throw unauthorized();
    ctx.state.caller = {
      keyId: record.key_id,
      partnerId: record.partner_id,
      partnerName: record.partner_name,
      partnerType: record.partner_type,
      env: record.environment,
      scopes: record.scopes,
    };
    await next();
  };
}

/** The contract's limits per key and minute; a deployment may set others (RATE_LIMIT_WRITES / RATE_LIMIT_READS). */
export const RATE_LIMITS = { write: 600, read: 1200 } as const;
export type RateLimits = { write: number; read: number };
const WINDOW_MS = 60_000;

/**
 * The rate brake: fixed one-minute windows per key and kind (writes, reads), counted through messaging so every
 * replica of a door shares them; the window reads the injected clock. Above the limit: 429 with `Retry-After`
 * (whole seconds until the window ends, at least 1).
 */
export function rateBrake(options: { messaging: Messaging; clock: Clock; limits?: RateLimits; onRefused?: (kind: string) => void }): DoorMiddleware {
  const limits = options.limits ?? RATE_LIMITS;
  return async (ctx: DoorContext, next: Next) => {
    const caller = ctx.state.caller;
    if (!caller) {
      await next();
      return;
    }
    const kind = ctx.method === 'GET' || ctx.method === 'HEAD' ? 'read' : 'write';
    const now = options.clock.now().getTime();
    const window = Math.floor(now / WINDOW_MS);
    const count = await options.messaging.increment(`rate:${caller.keyId}:${kind}:${window}`, 1, WINDOW_MS * 2);
    if (count > limits[kind]) {
      options.onRefused?.(kind);
      const retryAfter = Math.max(1, Math.ceil(((window + 1) * WINDOW_MS - now) / 1000));
      throw new ProblemError(429, [], `Rate brake: at most ${limits[kind]} ${kind}s per minute per key.`, {
        'Retry-After': String(retryAfter),
      });
    }
    await next();
  };
}

/** 404 for unknown paths (Phase 3 included), 405 with `Allow` for a known path, 403 for a missing scope. */
export function routeGuard(): DoorMiddleware {
  return async (ctx: DoorContext, next: Next) => {
    if (!ctx.path.startsWith(API_PREFIX + '/')) throw notFound('No such resource.');
    const path = ctx.path.slice(API_PREFIX.length);
    if (isPublicPath(path)) {
      if (ctx.method !== 'GET' && ctx.method !== 'HEAD') throw new ProblemError(405, [], 'Method not allowed.', { Allow: 'GET, HEAD' });
      await next();
      return;
    }
    const match = matchRoute(ctx.method, path);
    if (match.allowed.length === 0) throw notFound('No such resource.');
    if (!match.route) {
      throw new ProblemError(405, [], `Method ${ctx.method} is not allowed here.`, { Allow: match.allowed.join(', ') });
    }
    const caller = ctx.state.caller!;
    if (match.route.scope && !caller.scopes.includes(match.route.scope)) {
      throw forbidden(`This key lacks the scope \`${match.route.scope}\`.`, 'scope');
    }
    if (match.route.testOnly && caller.env !== 'test') {
      throw forbidden('This route needs a test key (ik_test_…).', 'test_key_required');
    }
    ctx.state.route = match.route;
    ctx.state.params = match.params;
    await next();
  };
}

export const BODY_LIMITS = { batch: 5 * 1024 * 1024, default: 1024 * 1024 } as const;

/** Reads and parses a JSON body: 413 above the limit, 422 `content_type` / `json`. Nothing is written before. */
export async function readJsonBody(ctx: DoorContext, limit: number): Promise<unknown> {
  const raw = Number(ctx.get('Content-Length') || '0') > limit ? undefined : await readBody(ctx.req, limit);
  if (raw === undefined) throw await refuse(ctx, limit);
  ctx.state.rawBody = raw;
  const type = ctx.get('Content-Type');
  if (!/^application\/(problem\+)?json\s*(;.*)?$/i.test(type)) {
    throw new ProblemError(422, [fieldError('', 'content_type', 'Send the body as application/json.')]);
  }
  try {
    const parsed = JSON.parse(raw.toString('utf8')) as unknown;
    ctx.state.body = parsed;
    return parsed;
  } catch {
    throw new ProblemError(422, [fieldError('', 'json', 'The body is not valid JSON.')]);
  }
}

/** Path parameters that are ExternalIds (`job_id` is an opaque string: an unknown one is simply 404). */
const EXTERNAL_ID_PARAMS = ['store_id', 'sku', 'order_id'];
const EXTERNAL_ID = new RegExp(EXTERNAL_ID_PATTERN);

/** 422 `pattern` for a path parameter outside ExternalId (it could never name a resource). */
export function pathParamErrors(params: Record<string, string>): FieldError[] {
  return EXTERNAL_ID_PARAMS.filter((name) => params[name] !== undefined && !EXTERNAL_ID.test(params[name])).map((name) =>
    fieldError(name, 'pattern', `${name} must match ${EXTERNAL_ID_PATTERN}`),
  );
}

/** Writes take no query parameter: each one is `unknown_field`, as in bodies. */
export function writeQueryErrors(ctx: DoorContext): FieldError[] {
  return Object.keys(ctx.query).map((name) => fieldError(name, 'unknown_field', `${name} is not a parameter of this route`));
}

/**
 * The whole body, with plain stream events (cheaper per request than an async iterator); undefined once it grows
 * above `limit` (the rest is left to `refuse`).
 */
function readBody(req: DoorContext['req'], limit: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    if (req.readableEnded) return resolve(Buffer.alloc(0));
    const chunks: Buffer[] = [];
    let size = 0;
    const done = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        done();
        resolve(undefined);
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      done();
      resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size));
    };
    const onError = (err: Error) => {
      done();
      reject(err);
    };
    const onClose = () => {
      done();
      reject(new Error('the request was closed before its body ended'));
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}

/**
 * How much of a refused body is still read, and dropped, after the refusal: 32 MiB (a batch of up to 37 MiB, any
 * other body of up to 33 MiB, gets a readable 413). Past it the connection is cut. docs/decisions.md, "Oversized
 * bodies".
 */
export const DISCARD_BYTES = 32 * 1024 * 1024;

/**
 * The 413 for a body above `limit`; its rest is read and dropped. Node's server destroys the socket as soon as it
 * has sent an answer on a connection it will not keep (`Connection: close`, HTTP/1.0), and a client still uploading
 * then gets a reset (`write EPIPE`) instead of the answer. So the 413 carries no `Connection: close` and goes out at
 * once on a kept connection (the body is drained behind it, and the connection serves the next request); on one the
 * client closes, it goes out once the body is read. A client that sends more than DISCARD_BYTES is cut off.
 */
async function refuse(ctx: DoorContext, limit: number): Promise<ProblemError> {
  const req = ctx.req;
  const drained = new Promise<void>((resolve) => {
    let dropped = 0;
    req.on('data', (chunk: Buffer) => {
      dropped += chunk.length;
      if (dropped > DISCARD_BYTES) req.destroy();
    });
    req.on('error', () => undefined);
    req.once('end', resolve);
    req.once('close', resolve);
    req.resume();
  });
  if (!ctx.res.shouldKeepAlive) await drained;
  return new ProblemError(413, [], `The body is larger than ${limit / (1024 * 1024)} MB.`);
}
