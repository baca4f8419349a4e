/** The stores read model, written by projections/projectors/stores.ts, served by GET /stores and GET /stores/{store_id}. */
import type { CollectionSpec } from '../ports/read-store.js';
import type { StoreInput, StoreStatus } from '../events/store.js';
import type { Tenant } from '../domain/streams.js';
import { scopedId, type ScopedDoc } from './scoped-id.js';

export const STORES = 'stores';

export type StoreDoc = ScopedDoc & {
  store_id: string;
  input: StoreInput;
  status: StoreStatus;
  domains_approved: string[];
};

export const storeDocId = (t: Tenant, storeId: string): string => scopedId(t, storeId);

export const STORE_COLLECTIONS: readonly CollectionSpec[] = [
  { name: STORES, indexes: [['partner_id', 'env', 'store_id']] },
];
