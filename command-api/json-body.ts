/**
 * The command door's body reader: the whole JSON body of a write, read only after the route is known (its limit
 * depends on it), so that nothing is written before 413 and 422 `content_type` / `json` are decided.
 */
import { ProblemError, fieldError } from '../shared-schema/problems.js';
import type { DoorContext } from '../shared-schema/http/context.js';

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
 * other body of up to 33 MiB, gets a readable 413). Past it the connection is cut. docs/adr/0027-oversized-bodies.md.
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
