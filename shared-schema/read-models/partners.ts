/**
 * The partners read model, written by projections/projectors/partners.ts: partners by id, and their keys by key
 * hash, looked up on every call (the key itself is never stored).
 */
import type { CollectionSpec } from '../ports/read-store.js';
import type { Environment } from '../domain/streams.js';
import type { PartnerType, Scope } from '../events/partner.js';

export const PARTNERS = 'partners';
export const KEYS = 'keys';

export type PartnerDoc = {
  _id: string;
  partner_id: string;
  name: string;
  partner_type: 'hub' | 'store';
  created_at: string;
  activated_at: string | null;
};
/** What a door reads of a key, found by the hash of the key sent. */
export type KeyRecord = {
  key_id: string;
  partner_id: string;
  partner_name: string;
  partner_type: PartnerType;
  environment: Environment;
  scopes: Scope[];
  revoked: boolean;
};

export type KeyDoc = KeyRecord & { _id: string; issued_at: string; revoked_at?: string };

export const PARTNER_COLLECTIONS: readonly CollectionSpec[] = [
  { name: PARTNERS, indexes: [] },
  { name: KEYS, indexes: [['partner_id'], ['key_id']] },
];
