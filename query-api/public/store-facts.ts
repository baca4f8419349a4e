/**
 * The stores' facts a search joins to its offers (OFFER_STORES: name, status, declared and approved domains).
 *
 * `readStoreFacts` reads the stores of one search in one read. `StoreFactsCopy` keeps the whole collection in memory
 * for a reader that searches often (a search reader thread) and brings it up to date at every call with the
 * documents written since the newest it holds: a store's document is only ever replaced by one of a later log
 * position and never removed (projections/projectors/offers.ts), so after that read the copy equals the collection.
 * With no store changed, a call costs two seeks of the `position` index (one document read) instead of one lookup
 * and one JSON parse per store of the search (~280 of them per search in the search bench).
 */
import type { Doc, ReadStore } from '../../shared-schema/ports/read-store.js';
import type { OfferStoreDoc } from '../../shared-schema/shopper/offer-facts.js';
import { OFFER_STORES } from '../../shared-schema/read-models/offers.js';
import { documentsById } from '../documents.js';

/** The facts of the stores `keys` names (`_id`s of OFFER_STORES) that exist, by `_id`. */
export type StoreFacts = (reads: ReadStore, keys: readonly string[]) => Promise<Map<string, OfferStoreDoc>>;

/** One read of the stores asked for. */
export const readStoreFacts: StoreFacts = (reads, keys) => documentsById<OfferStoreDoc>(reads, OFFER_STORES, keys);

/** Documents read per page while a copy catches up. */
const PAGE = 1000;

export class StoreFactsCopy {
  private docs = new Map<string, OfferStoreDoc>();
  /** The sort key (`position`, `_id`) of the newest document held; null when none is. */
  private newest: [number, string] | null = null;

  /** `readStoreFacts`, answered from the copy once it is up to date. */
  readonly facts: StoreFacts = async (reads, keys) => {
    await this.catchUp(reads);
    const stores = new Map<string, OfferStoreDoc>();
    for (const key of keys) {
      const doc = this.get(key);
      if (doc) stores.set(key, doc);
    }
    return stores;
  };

  /** The store's facts as of the last `catchUp`. */
  get(key: string): OfferStoreDoc | undefined {
    return this.docs.get(key);
  }

  /**
   * Reads the documents after the newest held in the `position` index's order (`position`, then `_id`), page by
   * page. A collection with no document at or after the newest position held was made anew with older documents (a
   * projector's writes only move a document forward, and never remove one): the copy starts again from nothing.
   */
  async catchUp(reads: ReadStore): Promise<void> {
    const byPosition = [{ field: 'position' }] as const;
    if (this.newest !== null) {
      const probe = await reads.find<OfferStoreDoc & Doc>(OFFER_STORES, {
        where: { position: { gte: this.newest[0] } },
        orderBy: byPosition,
        limit: 1,
      });
      if (probe.length === 0) {
        this.docs = new Map();
        this.newest = null;
      }
    }
    for (;;) {
      const page: (OfferStoreDoc & Doc)[] = await reads.find<OfferStoreDoc & Doc>(OFFER_STORES, {
        orderBy: byPosition,
        ...(this.newest === null ? {} : { after: this.newest }),
        limit: PAGE,
      });
      for (const doc of page) this.docs.set(doc._id, doc);
      const last: OfferStoreDoc | undefined = page[page.length - 1];
      if (last !== undefined) this.newest = [last.position, last._id];
      if (page.length < PAGE) return;
    }
  }
}
