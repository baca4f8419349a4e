import type { Environment } from '../domain/streams.js';

export type PartnerType = 'hub' | 'store';
export type Scope = 'catalog' | 'clicks' | 'promotions' | 'conversions' | 'reports';
/** Every scope a key may hold (what an operator may ask for). */
export const ALL_SCOPES: readonly Scope[] = ['catalog', 'clicks', 'promotions', 'conversions', 'reports'];
/**
 * The scopes of a key issued without a list: the four the integration guide names. `promotions` guards Phase 3
 * routes, which answer 404 to everyone; it is granted only when the operator asks for it (docs/adr/0028-default-key-scopes.md).
 */
export const DEFAULT_SCOPES: readonly Scope[] = ['catalog', 'clicks', 'conversions', 'reports'];

export type PartnerEvent =
  | {
      type: 'PartnerCreated';
      data: { partner_id: string; name: string; partner_type: PartnerType; created_at: string };
    }
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
