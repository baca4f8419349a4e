/** Waiting in tests without sleeping for correctness: a promise or a condition, bounded by a deadline. */
import fs from 'node:fs';

/** Resolves as `promise` does, or rejects once `ms` have passed. */
export async function within<T>(promise: Promise<T>, ms: number, what = 'operation'): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Polls `condition` every `intervalMs` (default 5) until it holds; rejects after `ms`. Polling the partner API, use
 * a longer interval: the rate brake counts reads per minute of the manual clock, which does not move by itself.
 */
export async function until(
  condition: () => boolean | Promise<boolean>,
  ms: number,
  what = 'condition',
  intervalMs = 5,
): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`${what} did not hold within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/**
 * Removes a test's data directory. A thread of a service that just closed can still land its last file (a SQLite
 * journal) while the tree is removed, which fails with ENOTEMPTY: removal is tried again until it succeeds or `ms`
 * pass, however slow the machine.
 */
export async function removeDir(dir: string, ms = 30_000): Promise<void> {
  await until(
    () => {
      try {
        fs.rmSync(dir, { recursive: true, force: true });
        return true;
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'ENOTEMPTY' || code === 'EBUSY') return false;
        throw err;
      }
    },
    ms,
    `removal of ${dir}`,
    50,
  );
}
