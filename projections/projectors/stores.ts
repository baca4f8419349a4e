/** The Store read model served by GET /stores and GET /stores/{store_id}. */
import type { RecordedEvent } from '../../shared-schema/ports/event-store.js';
import type { ReadTx } from '../../shared-schema/ports/read-store.js';
import type { StoreEvent, StoreInput, StoreStatus } from '../../shared-schema/events/store.js';
import { scopedId, streamScope, type Projector } from '../projector.js';
import { evolveStanding, NEW_STANDING } from '../../shared-schema/store-standing.js';

export type StoreDoc = {
  _id: string;
  partner_id: string;
  env: 'live' | 'test';
  store_id: string;
  input: StoreInput;
  status: StoreStatus;
  domains_approved: string[];
  position: number;
};

export const storesProjector: Projector = {
  name: 'stores',
  collections: [{ name: 'stores', indexes: [['partner_id', 'env', 'store_id']] }],
  categories: ['store'],
  async apply(recorded: RecordedEvent, tx: ReadTx) {
    const e = { type: recorded.type, data: recorded.data } as StoreEvent;
    const { env, partnerId } = streamScope(recorded.stream);
    const id = scopedId(env, partnerId, e.data.store_id);
    const current = await tx.get<StoreDoc>('stores', id);
    if (current && current.position >= recorded.position) return; // already applied
    let base: StoreDoc;
    if (current) base = current;
    else if (e.type === 'StoreRegistered') {
      base = { _id: id, partner_id: partnerId, env, store_id: e.data.store_id, input: e.data.store, ...NEW_STANDING, domains_approved: [], position: 0 };
    } else return;
    const standing = evolveStanding(base, e);
    const input = e.type === 'StoreRegistered' || e.type === 'StoreReplaced' ? e.data.store : base.input;
    await tx.put('stores', { ...base, input, ...standing, position: recorded.position });
  },
};
