/** The store aggregate: registration, replacement, and the operator's approve / suspend / reinstate. */
import type { StoreEvent, StoreInput, StoreStatus } from '../../shared-schema/events/store.js';
import { ProblemError, notFound, conflict } from '../../shared-schema/problems.js';
import { canonicalJson } from '../../shared-schema/json.js';
import { unreachable, type Decider, type Decision } from './decider.js';
import { evolveStanding } from '../../shared-schema/store-standing.js';

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
      if (canonicalJson(s.input) === canonicalJson(c.input)) return { events: [], result: s };
      return {
        events: [{ type: 'StoreReplaced', data: { store_id: c.storeId, store: c.input, replaced_at: c.now } }],
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

function requireStore(s: StoreState): void {
  if (!s.exists || !s.input) throw new ProblemError(404, [], 'No such store.');
}
