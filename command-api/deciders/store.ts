/** The store aggregate: registration, replacement, and the operator's approve / suspend / reinstate. */
import type { EventMetadata, RecordedEvent } from '../../shared-schema/ports/event-store.js';
import type { StoreEvent, StoreInput, StoreStatus } from '../../shared-schema/events/store.js';
import { ProblemError, notFound, conflict } from '../../shared-schema/problems.js';
import { canonicalJson } from '../../shared-schema/json.js';
import type { Aggregate, Decision } from '../aggregate-repository.js';
import { asUnion, event, unreachable } from './events.js';
import { evolveStanding } from '../../shared-schema/store-standing.js';

export interface StoreState {
  exists: boolean;
  storeId: string;
  input: StoreInput | null;
  status: StoreStatus;
  domainsApproved: string[];
}

export const storeAggregate: Aggregate<StoreState> = {
  name: 'store',
  initial: () => ({ exists: false, storeId: '', input: null, status: 'pending_review', domainsApproved: [] }),
  evolve: (s: StoreState, recorded: RecordedEvent): StoreState => {
    const e = asUnion<StoreEvent>(recorded);
    const standing = evolveStanding({ status: s.status, domains_approved: s.domainsApproved }, e);
    const next: StoreState = { ...s, status: standing.status, domainsApproved: standing.domains_approved };
    if (e.type === 'StoreRegistered') return { ...next, exists: true, storeId: e.data.store_id, input: e.data.store };
    if (e.type === 'StoreReplaced') return { ...next, input: e.data.store };
    return next;
  },
};

export type StoreCommand =
  | { type: 'RegisterStore'; storeId: string; input: StoreInput; now: string; meta: EventMetadata }
  | { type: 'ApproveStore'; meta: EventMetadata }
  | { type: 'ApproveDomain'; domain: string; meta: EventMetadata }
  | { type: 'SuspendStore'; meta: EventMetadata }
  | { type: 'ReinstateStore'; meta: EventMetadata };

export function decideStore(c: StoreCommand, s: StoreState): Decision<StoreState> {
  switch (c.type) {
    case 'RegisterStore': {
      if (!s.exists) {
        return { events: [event<StoreEvent>({ type: 'StoreRegistered', data: { store_id: c.storeId, store: c.input, registered_at: c.now } }, c.meta)], result: s };
      }
      if (canonicalJson(s.input) === canonicalJson(c.input)) return { events: [], result: s };
      return { events: [event<StoreEvent>({ type: 'StoreReplaced', data: { store_id: c.storeId, store: c.input, replaced_at: c.now } }, c.meta)], result: s };
    }
    case 'ApproveStore':
      requireStore(s);
      return {
        events: [event<StoreEvent>({ type: 'StoreApproved', data: { store_id: s.storeId, domains: [...s.input!.domains] } }, c.meta)],
        result: s,
      };
    case 'ApproveDomain':
      requireStore(s);
      if (!s.input!.domains.includes(c.domain)) throw notFound(`The store does not declare the domain ${c.domain}.`);
      if (s.domainsApproved.includes(c.domain)) return { events: [], result: s };
      return { events: [event<StoreEvent>({ type: 'DomainApproved', data: { store_id: s.storeId, domain: c.domain } }, c.meta)], result: s };
    case 'SuspendStore':
      requireStore(s);
      if (s.status === 'suspended') return { events: [], result: s };
      return { events: [event<StoreEvent>({ type: 'StoreSuspended', data: { store_id: s.storeId } }, c.meta)], result: s };
    case 'ReinstateStore':
      requireStore(s);
      if (s.status !== 'suspended') throw conflict('status', 'invalid_transition', 'Only a suspended store can be reinstated.');
      return { events: [event<StoreEvent>({ type: 'StoreReinstated', data: { store_id: s.storeId } }, c.meta)], result: s };
    default:
      return unreachable(c);
  }
}

function requireStore(s: StoreState): void {
  if (!s.exists || !s.input) throw new ProblemError(404, [], 'No such store.');
}
