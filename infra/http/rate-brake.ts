/**
 * The rate brake: fixed one-minute windows per key and kind (writes, reads), counted through messaging so every
 * replica of a door shares them; the window reads the injected clock. Above the limit: 429 with `Retry-After`
 * (whole seconds until the window ends, at least 1).
 */
import { ProblemError } from '../../shared-schema/problems.js';
import type { Clock } from '../../shared-schema/ports/clock.js';
import type { Messaging } from '../../shared-schema/ports/messaging.js';
import type { DoorContext, DoorMiddleware, Next } from '../../shared-schema/http/context.js';

/** The contract's limits per key and minute; a deployment may set others (RATE_LIMIT_WRITES / RATE_LIMIT_READS). */
export const RATE_LIMITS = { write: 600, read: 1200 } as const;
export type RateLimits = { write: number; read: number };
const WINDOW_MS = 60_000;

export function rateBrake(options: {
  messaging: Messaging;
  clock: Clock;
  limits?: RateLimits;
  onRefused?: (kind: string) => void;
}): DoorMiddleware {
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
