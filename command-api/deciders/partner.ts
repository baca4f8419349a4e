/** The partner aggregate: creation, keys issued and revoked (only hashes are stored). */
import type { PartnerEvent, PartnerType, Scope } from '../../shared-schema/events/partner.js';
import type { Environment } from '../../shared-schema/domain/streams.js';
import { ProblemError, notFound } from '../../shared-schema/contract/problems.js';
import { unreachable, type Decider, type Decision } from './decider.js';

export interface KeyState {
  keyId: string;
  environment: Environment;
  scopes: Scope[];
  revoked: boolean;
}

export interface PartnerState {
  exists: boolean;
  partnerId: string;
  name: string;
  partnerType: PartnerType;
  keys: KeyState[];
}

const initialState = (): PartnerState => ({ exists: false, partnerId: '', name: '', partnerType: 'hub', keys: [] });

function evolve(s: PartnerState, e: PartnerEvent): PartnerState {
  switch (e.type) {
    case 'PartnerCreated':
      return { ...s, exists: true, partnerId: e.data.partner_id, name: e.data.name, partnerType: e.data.partner_type };
    case 'KeyIssued':
      return {
        ...s,
        keys: [
          ...s.keys,
          { keyId: e.data.key_id, environment: e.data.environment, scopes: e.data.scopes, revoked: false },
        ],
      };
    case 'KeyRevoked':
      return { ...s, keys: s.keys.map((k) => (k.keyId === e.data.key_id ? { ...k, revoked: true } : k)) };
    case 'PartnerConverted':
      return { ...s, partnerType: e.data.partner_type };
    default:
      return unreachable(e);
  }
}

export type PartnerCommand =
  | { type: 'CreatePartner'; partnerId: string; name: string; partnerType: PartnerType; now: string }
  | { type: 'IssueKey'; keyId: string; keyHash: string; environment: Environment; scopes: Scope[]; now: string }
  | { type: 'RevokeKey'; keyId: string; now: string };

function decide(c: PartnerCommand, s: PartnerState): Decision<PartnerEvent, null> {
  switch (c.type) {
    case 'CreatePartner':
      if (s.exists) throw new ProblemError(409, [], 'The partner exists.');
      return {
        events: [
          {
            type: 'PartnerCreated',
            data: { partner_id: c.partnerId, name: c.name, partner_type: c.partnerType, created_at: c.now },
          },
        ],
        result: null,
      };
    case 'IssueKey':
      if (!s.exists) throw notFound('No such partner.');
      return {
        events: [
          {
            type: 'KeyIssued',
            data: {
              key_id: c.keyId,
              key_hash: c.keyHash,
              environment: c.environment,
              scopes: c.scopes,
              issued_at: c.now,
            },
          },
        ],
        result: null,
      };
    case 'RevokeKey': {
      const key = s.keys.find((k) => k.keyId === c.keyId);
      if (!key) throw notFound('No such key.');
      if (key.revoked) return { events: [], result: null };
      return { events: [{ type: 'KeyRevoked', data: { key_id: c.keyId, revoked_at: c.now } }], result: null };
    }
    default:
      return unreachable(c);
  }
}

export const partnerDecider: Decider<PartnerState, PartnerCommand, PartnerEvent, null> = {
  name: 'partner',
  initialState,
  evolve,
  decide,
};
