/** The Store read model served by GET /stores and GET /stores/{store_id}. */
import type { RecordedEvent } from '../../shared-schema/ports/event-store.js';
import type { ReadTx } from '../../shared-schema/ports/read-store.js';
import type { StoreEvent, StoreInput, StoreStatus } from '../../shared-schema/events/store.js';
import { scopedId, streamScope, type Projector } from '../projector.js';

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
    let next: StoreDoc | null = null;
    switch (e.type) {
      case 'StoreRegistered':
        next = { _id: id, partner_id: partnerId, env, store_id: e.data.store_id, input: e.data.store, status: 'pending_review', domains_approved: [], position: 0 };
        break;
      case 'StoreReplaced':
        if (current) next = { ...current, input: e.data.store, domains_approved: current.domains_approved.filter((d) => e.data.store.domains.includes(d)) };
        break;
      case 'StoreApproved':
        if (current) next = { ...current, status: 'active', domains_approved: [...e.data.domains] };
        break;
      case 'DomainApproved':
        if (current && !current.domains_approved.includes(e.data.domain)) next = { ...current, domains_approved: [...current.domains_approved, e.data.domain] };
        break;
      case 'StoreSuspended':
        if (current) next = { ...current, status: 'suspended' };
        break;
      case 'StoreReinstated':
        if (current) next = { ...current, status: 'active' };
        break;
    }
    if (next) await tx.put('stores', { ...next, position: recorded.position });
  },
};

export function storeDocView(doc: StoreDoc) {
  return { store_id: doc.store_id, ...doc.input, status: doc.status, domains_approved: doc.domains_approved };
}
