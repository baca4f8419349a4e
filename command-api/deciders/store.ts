/**
 * The store aggregate: registration, replacement (the CNPJ fixed; a new name sends an active store back to review),
 * and the operator's approve / suspend / reinstate.
 */
import type { StoreEvent, StoreInput, StoreStatus } from '../../shared-schema/events/store.js';
import {
  ProblemError,
  notFound,
  conflict,
  fieldError,
  invalid,
  type FieldError,
} from '../../shared-schema/contract/problems.js';
import { canonicalJson } from '../../shared-schema/http/json.js';
import { unreachable, type Decider, type Decision } from './decider.js';
import { evolveStanding } from '../../shared-schema/domain/store-standing.js';

export interface StoreState {
  exists: boolean;
  storeId: string;
  input: StoreInput | null;
  status: StoreStatus;
  domainsApproved: string[];
}

const initialState = (): StoreState => ({
  exists: false,
  storeId: '',
  input: null,
  status: 'pending_review',
  domainsApproved: [],
});

function evolve(s: StoreState, e: StoreEvent): StoreState {
  const standing = evolveStanding({ status: s.status, domains_approved: s.domainsApproved }, e);
  const next: StoreState = { ...s, status: standing.status, domainsApproved: standing.domains_approved };
  if (e.type === 'StoreRegistered') return { ...next, exists: true, storeId: e.data.store_id, input: e.data.store };
  if (e.type === 'StoreReplaced') return { ...next, input: e.data.store };
  return next;
}

export type StoreCommand =
  | { type: 'RegisterStore'; storeId: string; input: StoreInput; now: string }
  | { type: 'ApproveStore' }
  | { type: 'ApproveDomain'; domain: string }
  | { type: 'SuspendStore' }
  | { type: 'ReinstateStore' };

function decide(c: StoreCommand, s: StoreState): Decision<StoreEvent, StoreState> {
  switch (c.type) {
    case 'RegisterStore': {
      if (!s.exists) {
        return {
          events: [{ type: 'StoreRegistered', data: { store_id: c.storeId, store: c.input, registered_at: c.now } }],
          result: s,
        };
      }
      const errors = replacementErrors(s, c.input);
      if (errors.length > 0) throw invalid(errors);
      if (canonicalJson(s.input) === canonicalJson(c.input)) return { events: [], result: s };
      // A new name is what a shopper trusts: an active store shows it only after the operator has seen it.
      const backToReview = s.status === 'active' && c.input.name !== s.input!.name;
      return {
        events: [
          {
            type: 'StoreReplaced',
            data: {
              store_id: c.storeId,
              store: c.input,
              replaced_at: c.now,
              ...(backToReview ? { back_to_review: true as const } : {}),
            },
          },
        ],
        result: s,
      };
    }
    case 'ApproveStore':
      requireStore(s);
      return {
        events: [{ type: 'StoreApproved', data: { store_id: s.storeId, domains: [...s.input!.domains] } }],
        result: s,
      };
    case 'ApproveDomain':
      requireStore(s);
      if (!s.input!.domains.includes(c.domain)) throw notFound(`The store does not declare the domain ${c.domain}.`);
      if (s.domainsApproved.includes(c.domain)) return { events: [], result: s };
      return { events: [{ type: 'DomainApproved', data: { store_id: s.storeId, domain: c.domain } }], result: s };
    case 'SuspendStore':
      requireStore(s);
      if (s.status === 'suspended') return { events: [], result: s };
      return { events: [{ type: 'StoreSuspended', data: { store_id: s.storeId } }], result: s };
    case 'ReinstateStore':
      requireStore(s);
      if (s.status !== 'suspended')
        throw conflict('status', 'invalid_transition', 'Only a suspended store can be reinstated.');
      return { events: [{ type: 'StoreReinstated', data: { store_id: s.storeId } }], result: s };
    default:
      return unreachable(c);
  }
}

export const storeDecider: Decider<StoreState, StoreCommand, StoreEvent, StoreState> = {
  name: 'store',
  initialState,
  evolve,
  decide,
};

/**
 * What a replacement of an existing store may not change: its `cnpj` (both normalized), the company the store was
 * registered and reviewed as. Empty for a store that does not exist yet. The service checks it before it reserves a
 * CNPJ, so a refused change reserves nothing.
 */
export function replacementErrors(s: StoreState, input: StoreInput): FieldError[] {
  if (!s.exists || !s.input || s.input.cnpj === input.cnpj) return [];
  return [
    fieldError(
      'cnpj',
      'immutable',
      'The CNPJ of a store cannot change; register the other company as another store (another store_id).',
    ),
  ];
}

function requireStore(s: StoreState): void {
  if (!s.exists || !s.input) throw new ProblemError(404, [], 'No such store.');
}
