/** The write side's answer to a lost race on a stream: take the decision again on fresh reads, a bounded number of times. */
import { WrongExpectedRevisionError } from '../shared-schema/ports/event-store.js';
import { ProblemError } from '../shared-schema/contract/problems.js';

/**
 * How a decision that lost a race on its streams is taken again. Every attempt that fails proves that another
 * writer succeeded, so the attempts bound how many writers may overtake one request, not how long it waits.
 */
export interface ConflictRetry {
  attempts: number;
  /** Upper bound of the first wait; each later attempt doubles it, up to `maxDelayMs` ("full jitter"). */
  baseDelayMs: number;
  maxDelayMs: number;
}

export const CONFLICT_RETRY: ConflictRetry = { attempts: 16, baseDelayMs: 2, maxDelayMs: 200 };

/**
 * The answer when every attempt lost its race: 503 with `Retry-After`, never a 500. The contract tells clients to
 * repeat a 5xx with the same `Idempotency-Key`; nothing was written by the refused request.
 */
export class ConflictsExhausted extends ProblemError {
  constructor(attempts: number) {
    super(
      503,
      [],
      `Too many concurrent writes to the same resource (${attempts} attempts). Repeat the request with the same Idempotency-Key.`,
      {
        'Retry-After': '1',
      },
    );
    this.name = 'ConflictsExhausted';
  }
}

/** A random wait in [0, min(max, base × 2^(attempt−1))) ms: writers that collided spread apart. */
export const jitteredBackoff = (attempt: number, policy: ConflictRetry = CONFLICT_RETRY): Promise<void> => {
  const bound = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  return new Promise((resolve) => setTimeout(resolve, Math.random() * bound));
};

/**
 * Runs `attempt` until it does not lose a race: a `WrongExpectedRevisionError` (another writer appended to a
 * stream the attempt read) makes it wait a jittered, growing pause and run again on fresh reads; after
 * `policy.attempts` lost races it throws `ConflictsExhausted`. Any other error passes through at once.
 * The one retry loop of the write side: every command path goes through it (most through `AggregateRepository.handle`).
 */
export async function retryOnConflict<T>(
  attempt: (n: number) => Promise<T>,
  policy: ConflictRetry = CONFLICT_RETRY,
): Promise<T> {
  for (let n = 1; ; n++) {
    try {
      return await attempt(n);
    } catch (err) {
      if (!(err instanceof WrongExpectedRevisionError)) throw err;
      if (n >= policy.attempts) throw new ConflictsExhausted(n);
      await jitteredBackoff(n, policy);
    }
  }
}
