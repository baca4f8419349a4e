/**
 * The shopper search's reads and ranking on threads of their own (the embedded default): each thread opens the read
 * store's file with connections of its own, read only (SQLite in WAL mode lets them read while this process writes),
 * and answers each search with one page of ranked products, as the JSON text of their views (shared-schema/shopper/search-policy.ts
 * `resultsPageOf`). So a search's CPU (text index, documents, ranking, views: ~12 ms at 1,000,000 offers) runs beside
 * the event loop that serves the writes and the projections instead of taking turns with them, and the loop gets
 * one string to send.
 *
 * Nothing the rules need moves: the clock time is the caller's (`now`, read by the door from the injected clock),
 * and the physical names of the offers collections are resolved here, in the process that follows projection
 * generations, on every call. The thread sees what the projections have committed, like the door's own reader.
 * A search goes to the first thread of the pool while it has fewer than SPILL_AT searches in flight, else to the one
 * with the fewest (`pickThread`; the threads start with the first search); if every thread has ended, or the pool is
 * closed, searches run in this process again (`resultsPage` from `reads`).
 *
 * The threads read through SQLite's page cache, not a memory map of the file: with the projections writing, a map
 * cost the threads ~600 page faults per search and the service 12–29 % of a core more at 50 searches/s
 * (docs/adr/0050-search-threads-page-cache.md).
 */
import type { ReadStore } from '../../../shared-schema/ports/read-store.js';
import { OFFER_STORES, OFFERS } from '../../../shared-schema/read-models/offers.js';
import { resultsPage } from '../../../query-api/public/product-search.js';
import type { ProductSearch, ResultsPage } from '../../../shared-schema/shopper/search-policy.js';
import { WorkerCalls } from '../worker-calls.js';

/**
 * A search sent to the thread: the words, the caller's clock time (ms), the page, the service's public address (for
 * the views' links), the physical collection names.
 */
export type SearchRequest = {
  words: string[];
  now: number;
  offset: number;
  limit: number;
  publicBase: string;
  names: Record<string, string>;
};
export type SearchAnswer = { id: number } & (ResultsPage | { error: string });
/**
 * What a search thread starts with: the read store's file, and whether it searches on the offers it holds
 * (held-offers.ts; SEARCH_HELD_OFFERS).
 */
export type SearchThreadData = { path: string; held?: boolean };

/** Searches in flight in the first thread from which the next goes to another. */
export const SPILL_AT = 4;

/**
 * The thread a search goes to: the first of `live` while it has fewer than SPILL_AT searches in flight (one running,
 * up to three waiting: ~20 ms of warm searches), else the one with the fewest (the first of equals). So at a steady
 * 50 searches/s the first thread answers nearly all, holds the offers they read once, and takes one core at most,
 * leaving the other to the event loop that every search also needs and to the writes; a burst, or the first seconds
 * after a start while searches cost more, spill to the others (docs/adr/0056-first-search-thread-first.md).
 */
export function pickThread<T extends { inFlight: number }>(live: readonly T[]): T | undefined {
  if (live.length === 0 || live[0].inFlight < SPILL_AT) return live[0];
  return live.reduce((least, t) => (t.inFlight < least.inFlight ? t : least));
}

export interface SearchReader {
  search: ProductSearch;
  close(): Promise<void>;
}

/**
 * Starts `threads` threads on `file` (the read store's database; config SEARCH_THREADS). `reads` is this process's
 * read store, through which the collection names are resolved (generations) and which answers when a thread has ended.
 */
export function startSearchReader(
  file: string,
  reads: ReadStore & { resolve(name: string): string },
  threads: number,
  options: { held?: boolean } = {},
): SearchReader {
  const threadData: SearchThreadData = { path: file, held: options.held ?? true };
  // The threads start with the first search (a process that never searches starts none), all of them: a search
  // spilled to another thread later does not wait for that thread to start.
  const start = () =>
    new WorkerCalls<SearchAnswer>(
      new URL('./search-reader-thread.js', import.meta.url),
      threadData,
      'search reader thread',
    );
  const pool = Array.from({ length: threads }, () => ({
    calls: null as WorkerCalls<SearchAnswer> | null,
    inFlight: 0,
    ended: false,
  }));
  let closed = false;
  return {
    async search(words, now, offset, limit, publicBase) {
      const thread = pickThread(closed ? [] : pool.filter((t) => !t.ended));
      if (!thread) return resultsPage(reads, words, now, offset, limit, publicBase);
      const calls = (thread.calls ??= start());
      for (const t of pool) t.calls ??= start();
      const request: SearchRequest = {
        words: [...words],
        now: now.getTime(),
        offset,
        limit,
        publicBase,
        names: { [OFFERS]: reads.resolve(OFFERS), [OFFER_STORES]: reads.resolve(OFFER_STORES) },
      };
      let answer: SearchAnswer;
      thread.inFlight++;
      try {
        answer = await calls.call(request);
      } catch {
        thread.ended = true; // the thread is gone (WorkerCalls fails every call after): the others, or this process
        return resultsPage(reads, words, now, offset, limit, publicBase);
      } finally {
        thread.inFlight--;
      }
      if ('error' in answer) throw new Error(`search reader thread: ${answer.error}`);
      return { total: answer.total, count: answer.count, results: answer.results };
    },
    async close() {
      closed = true;
      await Promise.all(pool.map((t) => (t.calls ? t.calls.close() : Promise.resolve())));
    },
  };
}
