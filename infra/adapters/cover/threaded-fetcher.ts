/**
 * The cover check on a thread of its own: the `CoverChecker` the service uses by default. The checks are work that
 * does not answer a request; on the event loop each one's TLS handshake and certificate check cost about a tenth of
 * the loop under a PUT load (profile of the scale benchmark, docs/adr/0018-cover-fetch.md). One thread runs many
 * checks at once (they mostly wait on the network), as many as the pool hands it (`COVER_CHECK_CONCURRENCY`).
 */
import type { CoverChecker } from '../../../shared-schema/ports/cover-checker.js';
import { WorkerCalls } from '../worker-calls.js';
import type { CoverCheckResult, CoverFetcherOptions } from './cover-fetcher.js';

export interface CoverFetcherThread {
  check: CoverChecker;
  close(): Promise<void>;
}

/** `options` must be cloneable (no `lookup` nor `addressAllowed` function): what the configuration reads from env. */
export function coverFetcherThread(options: CoverFetcherOptions): CoverFetcherThread {
  if (options.lookup || options.addressAllowed) throw new Error('the cover fetcher thread takes no function options');
  const calls = new WorkerCalls<{ id: number; result?: CoverCheckResult; error?: string }>(
    new URL('./cover-fetcher-thread.js', import.meta.url),
    options,
    'cover check thread',
  );
  return {
    async check(url, allowedHosts) {
      const answer = await calls.call({ url, hosts: [...allowedHosts] });
      if (answer.result) return answer.result;
      return {
        ok: false,
        reasons: [
          {
            code: 'image_unreachable',
            field: 'image_urls[0]',
            message: `the cover could not be fetched (${answer.error ?? 'error'})`,
          },
        ],
      };
    },
    close: () => calls.close(),
  };
}
