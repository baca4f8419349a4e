/** Entry point of the search reader thread (see search-reader.ts). */
import { parentPort, workerData } from 'node:worker_threads';
import { MappedReadStore } from '../../../projections/generations.js';
import { resultsPage } from '../../../query-api/public/product-search.js';
import type { ResultsPage } from '../../../shared-schema/shopper/search-policy.js';
import { StoreFactsCopy } from '../../../query-api/public/store-facts.js';
import { OFFER_STORES, OFFERS } from '../../../shared-schema/read-models/offers.js';
import { HeldOffersSearch } from './held-offers.js';
import { SqliteReadStore } from './read-store.js';
import { nameThread } from '../thread-name.js';
import type { SearchAnswer, SearchRequest, SearchThreadData } from './search-reader.js';

nameThread('pc-search');
const data = workerData as SearchThreadData;
const store = SqliteReadStore.open({
  path: data.path,
  readOnly: true,
  sweepIntervalMs: 0,
});

// The offers this thread's searches read, held (SEARCH_HELD_OFFERS): held-offers.ts.
const heldSearch = data.held === true ? new HeldOffersSearch(data.path) : null;

// The stores' facts kept in this thread, for the collection that serves now (a rebuild's generation gets a copy of
// its own, and the older one is let go).
let storeCopy: { name: string; copy: StoreFactsCopy } | null = null;
function storeCopyOf(name: string): StoreFactsCopy {
  if (storeCopy?.name !== name) storeCopy = { name, copy: new StoreFactsCopy() };
  return storeCopy.copy;
}

/** The page from the held offers when they can answer it (held-offers.ts), else from the documents. */
async function search(message: SearchRequest): Promise<ResultsPage> {
  const { words, offset, limit, publicBase, names } = message;
  const now = new Date(message.now);
  const reads = new MappedReadStore(store, (name) => names[name] ?? name);
  const stores = storeCopyOf(names[OFFER_STORES] ?? OFFER_STORES);
  if (heldSearch) {
    await stores.catchUp(reads);
    const page = heldSearch.resultsPage(names[OFFERS] ?? OFFERS, words, now, offset, limit, publicBase, (key) =>
      stores.get(key),
    );
    if (page) return page;
  }
  return resultsPage(reads, words, now, offset, limit, publicBase, stores.facts);
}

parentPort!.on('message', (message: ({ id: number } & SearchRequest) | { close: true }) => {
  if ('close' in message) {
    heldSearch?.close();
    void store.close().then(() => parentPort!.close());
    return;
  }
  const { id } = message;
  search(message).then(
    (page) => parentPort!.postMessage({ id, ...page } satisfies SearchAnswer),
    (err: unknown) =>
      parentPort!.postMessage({ id, error: err instanceof Error ? err.message : String(err) } satisfies SearchAnswer),
  );
});
