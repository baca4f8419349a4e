/** Entry point of the search reader thread (see search-reader.ts). */
import { parentPort, workerData } from 'node:worker_threads';
import { MappedReadStore } from '../../projections/generations.js';
import { resultsPage } from '../../query-api/public/search.js';
import { StoreFactsCopy, type StoreFacts } from '../../query-api/public/store-facts.js';
import { OFFER_STORES } from '../../shared-schema/read-models/offers.js';
import { SqliteReadStore } from './read-store.js';
import { nameThread, setThreadNice } from '../thread-priority.js';
import type { SearchAnswer, SearchRequest, SearchThreadData } from './search-reader.js';

nameThread('pc-search');
const data = workerData as SearchThreadData;
// This thread's priority (SEARCH_NICE); why it could not be set goes back with the first answer, to be logged.
let priorityRefused = data.nice === undefined ? null : setThreadNice(data.nice);
const store = SqliteReadStore.open({
  path: data.path,
  readOnly: true,
  sweepIntervalMs: 0,
});

// The stores' facts kept in this thread, for the collection that serves now (a rebuild's generation gets a copy of
// its own, and the older one is let go).
let storeCopy: { name: string; copy: StoreFactsCopy } | null = null;
function storeFactsOf(name: string): StoreFacts {
  if (storeCopy?.name !== name) storeCopy = { name, copy: new StoreFactsCopy() };
  return storeCopy.copy.facts;
}

parentPort!.on('message', (message: ({ id: number } & SearchRequest) | { close: true }) => {
  if ('close' in message) {
    void store.close().then(() => parentPort!.close());
    return;
  }
  const { id, words, now, offset, limit, publicBase, names } = message;
  const reads = new MappedReadStore(store, (name) => names[name] ?? name);
  const facts = storeFactsOf(names[OFFER_STORES] ?? OFFER_STORES);
  resultsPage(reads, words, new Date(now), offset, limit, publicBase, facts).then(
    (page) => {
      const answer: SearchAnswer = { id, ...page, ...(priorityRefused ? { priorityRefused } : {}) };
      priorityRefused = null;
      parentPort!.postMessage(answer);
    },
    (err: unknown) =>
      parentPort!.postMessage({ id, error: err instanceof Error ? err.message : String(err) } satisfies SearchAnswer),
  );
});
