import type { Environment } from '../streams.js';

export type PartnerType = 'hub' | 'store';
export type Scope = 'catalog' | 'clicks' | 'promotions' | 'conversions' | 'reports';
export const ALL_SCOPES: readonly Scope[] = ['catalog', 'clicks', 'promotions', 'conversions', 'reports'];

export type PartnerEvent =
  | { type: 'PartnerCreated'; data: { partner_id: string; name: string; partner_type: PartnerType; created_at: string } }
  | {
      type: 'KeyIssued';
      data: {
        key_id: string;
        /** sha256 hex of the whole key; the key itself is never stored. */
        key_hash: string;
        environment: Environment;
        scopes: Scope[];
        issued_at: string;
      };
    }
  | { type: 'KeyRevoked'; data: { key_id: string; revoked_at: string } }
  | { type: 'PartnerConverted'; data: { partner_type: PartnerType } };
