/** The command door's body reader, and what a body may cost. */
import { ProblemError, fieldError } from '../shared-schema/contract/problems.js';
import { MAX_JSON_DEPTH, jsonDeeperThan } from '../shared-schema/http/json.js';
import type { DoorContext } from '../shared-schema/http/context.js';

export const BODY_LIMITS = { batch: 5 * 1024 * 1024, default: 1024 * 1024 } as const;

/** What a body may cost besides its size (DECISIONS.md, "Cost of a bad body"; docs/adr/0072-uploads-in-flight.md). */
export interface BodyRules {
  /** A body must have arrived this long after the door starts reading it (right after its headers); a batch twice. */
  deadlineMs: number;
  /** Bodies still arriving at once, per API key and per client address; one more is answered 429. */
  uploadsPerKey: number;
  uploadsPerAddress: number;
}

export const BODY_RULES: BodyRules = { deadlineMs: 30_000, uploadsPerKey: 8, uploadsPerAddress: 16 };

/** Bodies still arriving, counted by name (a key id, a client address). */
class InFlight {
  private readonly counts = new Map<string, number>();
  constructor(private readonly bound: number) {}

  /** Takes a place for `name`, or returns false when it has `bound` already. */
  take(name: string): boolean {
    const n = this.counts.get(name) ?? 0;
    if (n >= this.bound) return false;
    this.counts.set(name, n + 1);
    return true;
  }

  give(name: string): void {
    const n = (this.counts.get(name) ?? 1) - 1;
    if (n <= 0) this.counts.delete(name);
    else this.counts.set(name, n);
  }
}

/**
 * The command door's body reader: the whole JSON body of a write, read only after the route is known (its limit
 * and deadline depend on it), so that nothing is written before 408, 413, 429 (uploads in flight) and 422
 * `content_type` / `json` are decided.
 */
export class BodyReader {
  private readonly perKey: InFlight;
  private readonly perAddress: InFlight;

  constructor(private readonly rules: BodyRules = BODY_RULES) {
    this.perKey = new InFlight(rules.uploadsPerKey);
    this.perAddress = new InFlight(rules.uploadsPerAddress);
  }

  /**
   * Reads and parses a JSON body: 413 above `limit`, 408 past the deadline (`deadlineMs`, a multiple of the rules'
   * one), 429 past the uploads in flight, 422 `content_type` / `json` (JSON nested deeper than MAX_JSON_DEPTH is not
   * parsed).
   */
  async read(ctx: DoorContext, limit: number, deadlineFactor = 1): Promise<unknown> {
    if (Number(ctx.get('Content-Length') || '0') > limit) throw await refuse(ctx, limit);
    const raw = await this.receive(ctx, limit, this.rules.deadlineMs * deadlineFactor);
    if (raw === undefined) throw await refuse(ctx, limit);
    ctx.state.rawBody = raw;
    const type = ctx.get('Content-Type');
    if (!/^application\/(problem\+)?json\s*(;.*)?$/i.test(type)) {
      throw new ProblemError(422, [fieldError('', 'content_type', 'Send the body as application/json.')]);
    }
    if (jsonDeeperThan(raw, MAX_JSON_DEPTH)) {
      throw new ProblemError(422, [
        fieldError('', 'json', `The body nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep.`),
      ]);
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
   * The body, holding a place among the uploads in flight of its key and address while it arrives. A body already
   * received whole (most: a few KB come with their headers) is no upload in flight: it holds no place, and is never
   * refused for want of one, however many arrive at once.
   */
  private async receive(ctx: DoorContext, limit: number, deadlineMs: number): Promise<Buffer | undefined> {
    const req = ctx.req;
    if (req.readableEnded) return Buffer.alloc(0);
    const key = ctx.state.caller?.keyId ?? '';
    const address = ctx.ip;
    const uploading = !req.complete;
    if (uploading) this.takePlaces(key, address);
    try {
      const body = await readBody(req, limit, deadlineMs);
      if (body === 'late') {
        throw new ProblemError(408, [], `The body did not arrive within ${deadlineMs / 1000} s of its headers.`, {
          Connection: 'close',
        });
      }
      return body;
    } finally {
      if (uploading) {
        this.perKey.give(key);
        this.perAddress.give(address);
      }
    }
  }

  /** A place among the uploads in flight of the key and of the address, or 429. */
  private takePlaces(key: string, address: string): void {
    if (!this.perKey.take(key)) {
      throw this.refuseUpload(`${this.rules.uploadsPerKey} per key`);
    }
    if (!this.perAddress.take(address)) {
      this.perKey.give(key);
      throw this.refuseUpload(`${this.rules.uploadsPerAddress} per client address`);
    }
  }

  /** The body is not read: the connection is closed behind the answer, so the refused upload holds nothing. */
  private refuseUpload(bound: string): ProblemError {
    return new ProblemError(429, [], `Too many uploads in flight: at most ${bound}. Send it again once one ends.`, {
      'Retry-After': '1',
      Connection: 'close',
    });
  }
}

/**
 * The whole body, with plain stream events (cheaper per request than an async iterator); undefined once it grows
 * above `limit` (the rest is left to `refuse`); `late` when it has not ended after `deadlineMs`.
 */
function readBody(req: DoorContext['req'], limit: number, deadlineMs: number): Promise<Buffer | undefined | 'late'> {
  return new Promise((resolve, reject) => {
    if (req.readableEnded) return resolve(Buffer.alloc(0));
    const chunks: Buffer[] = [];
    let size = 0;
    const deadline = setTimeout(() => {
      done();
      req.pause();
      resolve('late');
    }, deadlineMs);
    const done = () => {
      clearTimeout(deadline);
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
      reject(new ClientClosedError());
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}

/** The client closed its connection before the body ended: nobody reads the answer (logged, never a 500). */
export class ClientClosedError extends Error {
  readonly code = 'ECONNABORTED';
  constructor() {
    super('request aborted: the client closed the connection before its body ended');
    this.name = 'ClientClosedError';
  }
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
