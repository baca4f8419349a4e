import type { Commission } from '../domain/commission.js';

/** A store as the partner sent it (after normalization: cnpj without punctuation, upper-case). */
export interface StoreInput {
  default_commission?: Commission;
  name: string;
  cnpj: string;
  logo_url?: string;
  website_url: string;
  domains: string[];
  image_hosts?: string[];
  returns_days?: number;
  handling_days?: number;
}

export type StoreStatus = 'pending_review' | 'active' | 'suspended';

export type StoreEvent =
  | { type: 'StoreRegistered'; data: { store_id: string; store: StoreInput; registered_at: string } }
  | {
      type: 'StoreReplaced';
      /**
       * `back_to_review`: this replacement renamed an active store, which waits for the operator's approval again.
       * Absent otherwise (and on replacements recorded before the rule), which keeps the status.
       */
      data: { store_id: string; store: StoreInput; replaced_at: string; back_to_review?: true };
    }
  | { type: 'StoreApproved'; data: { store_id: string; domains: string[] } }
  | { type: 'DomainApproved'; data: { store_id: string; domain: string } }
  | { type: 'StoreSuspended'; data: { store_id: string } }
  | { type: 'StoreReinstated'; data: { store_id: string } };

/**
 * Events of `storeindex-…`: the stores of one partner and environment. `address` is the store's address when it was
 * indexed: `{partner}/{store}` lower-cased, or only the lower-cased `store_id` in events written before the address
 * held the partner (readers derive the address from `store_id`).
 */
export type StoreIndexEvent = { type: 'StoreIndexed'; data: { store_id: string; address: string } };

/**
 * Events of `cnpj-…`: who holds a CNPJ in an environment. A store's CNPJ no longer changes, so nothing writes
 * `CnpjReleased` now; streams that hold one from before still read as free.
 */
export type CnpjEvent =
  | { type: 'CnpjReserved'; data: { cnpj: string; partner_id: string; store_id: string } }
  | { type: 'CnpjReleased'; data: { cnpj: string; partner_id: string; store_id: string } };
