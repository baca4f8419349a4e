/**
 * The shopper search of the embedded default: on the event loop that serves it, over the offers it holds
 * (held-offers.ts), with a read connection of its own to the read store's file. A warm search costs ~3 ms of CPU there,
 * less than handing it to a thread and back did on a busy machine (docs/adr/0117-search-on-the-event-loop.md).
 *
 * Nothing the rules need moves: the clock time is the caller's (`now`, read by the door from the injected clock), and
 * the physical names of the offers collections are resolved at every search through `reads`, which follows
 * projection generations. The search sees what the projections have committed, like the door's own reader. A query
 * the held offers cannot answer (more distinct words than the text index takes) reads the documents
 * (query-api/public/product-search.ts `resultsPage`), with the same stores' facts.
 */
import type { ReadStore } from '../../../shared-schema/ports/read-store.js';
import { OFFER_STORES, OFFERS } from '../../../shared-schema/read-models/offers.js';
import { resultsPage } from '../../../query-api/public/product-search.js';
import { StoreFactsCopy } from '../../../query-api/public/store-facts.js';
import type { ProductSearch } from '../../../shared-schema/shopper/search-policy.js';
import { HeldOffersSearch } from './held-offers.js';

export interface HeldSearch {
  search: ProductSearch;
  close(): void;
}

/**
 * The search on the offers held from `file` (the read store's database). `reads` is this process's read store:
 * the collection names are resolved through it (generations), and the stores' facts are read from it.
 */
export function startHeldSearch(file: string, reads: ReadStore & { resolve(name: string): string }): HeldSearch {
  const held = new HeldOffersSearch(file);
  // The stores' facts kept for the collection that serves now (a rebuild's generation gets a copy of its own, and
  // the older one is let go).
  let stores: { name: string; copy: StoreFactsCopy } | null = null;
  return {
    async search(words, now, offset, limit, publicBase) {
      const name = reads.resolve(OFFER_STORES);
      if (stores?.name !== name) stores = { name, copy: new StoreFactsCopy() };
      const { copy } = stores;
      await copy.catchUp(reads);
      const page = held.resultsPage(reads.resolve(OFFERS), words, now, offset, limit, publicBase, (key) =>
        copy.get(key),
      );
      return page ?? resultsPage(reads, words, now, offset, limit, publicBase, copy.facts);
    },
    close: () => held.close(),
  };
}
