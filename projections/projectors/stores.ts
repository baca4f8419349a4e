/** The Store read model (shared-schema/read-models/stores.ts). */
import { asUnion } from '../../shared-schema/ports/event-store.js';
import type { StoreEvent } from '../../shared-schema/events/store.js';
import { STORES, STORE_COLLECTIONS, storeDocId, type StoreDoc } from '../../shared-schema/read-models/stores.js';
import { alreadyApplied, streamScope, type Projector } from '../projector.js';
import { evolveStanding, NEW_STANDING } from '../../shared-schema/domain/store-standing.js';

export const storesProjector: Projector = {
  name: 'stores',
  collections: STORE_COLLECTIONS,
  categories: ['store'],
  async apply(recorded, tx) {
    const e = asUnion<StoreEvent>(recorded);
    const { env, partnerId } = streamScope(recorded.stream);
    const id = storeDocId({ env, partnerId }, e.data.store_id);
    const current = await tx.get<StoreDoc>(STORES, id);
    if (alreadyApplied(current, recorded)) return;
    let base: StoreDoc;
    if (current) base = current;
    else if (e.type === 'StoreRegistered') {
      base = {
        _id: id,
        partner_id: partnerId,
        env,
        store_id: e.data.store_id,
        input: e.data.store,
        ...NEW_STANDING,
        domains_approved: [],
        position: 0,
      };
    } else return;
    const standing = evolveStanding(base, e);
    const input = e.type === 'StoreRegistered' || e.type === 'StoreReplaced' ? e.data.store : base.input;
    await tx.put(STORES, { ...base, input, ...standing, position: recorded.position });
  },
};
