/**
 * Entry point of the cover check's thread (see threaded-fetcher.ts `coverFetcherThread`): the fetcher runs here,
 * several checks at once on this thread's own event loop, so the TLS handshakes, certificate checks and image
 * headers of the checks never hold the service's event loop.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { nameThread } from '../thread-name.js';
import { createCoverFetcher, type CoverFetcherOptions } from './cover-fetcher.js';

nameThread('pc-cover-fetch');
const check = createCoverFetcher(workerData as CoverFetcherOptions);

parentPort!.on('message', (message: { id: number; url: string; hosts: string[] } | { close: true }) => {
  if ('close' in message) {
    parentPort!.close();
    return;
  }
  const { id } = message;
  check(message.url, message.hosts).then(
    (result) => parentPort!.postMessage({ id, result }),
    // The fetcher turns every failure of a remote into a reason; anything else is a bug, answered as unreachable.
    (err: unknown) => parentPort!.postMessage({ id, error: err instanceof Error ? err.message : String(err) }),
  );
});
