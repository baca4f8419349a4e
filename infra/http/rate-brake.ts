/**
 * The rate brake of a key: per key and kind (writes, reads), by the one rule of every brake
 * (shared-schema/http/minute-brake.ts: one-minute windows of the injected clock, shared through messaging by every
 * replica of a door, 429 with `Retry-After` above the limit).
 */
import { ProblemError } from '../../shared-schema/contract/problems.js';
import type { Clock } from '../../shared-schema/ports/clock.js';
import type { Messaging } from '../../shared-schema/ports/messaging.js';
import type { DoorContext, DoorMiddleware, Next } from '../../shared-schema/http/context.js';
import { countInMinute } from '../../shared-schema/http/minute-brake.js';

/** The contract's limits per key and minute; a deployment may set others (RATE_LIMIT_WRITES / RATE_LIMIT_READS). */
export const RATE_LIMITS = { write: 600, read: 1200 } as const;
export type RateLimits = { write: number; read: number };

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
    try {
      await countInMinute(
        options,
        `rate:${caller.keyId}:${kind}`,
        limits[kind],
        `Rate brake: at most ${limits[kind]} ${kind}s per minute per key.`,
      );
    } catch (err) {
      if (err instanceof ProblemError) options.onRefused?.(kind);
      throw err;
    }
    await next();
  };
}
