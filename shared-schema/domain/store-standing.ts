/**
 * What the service has decided about a store: its status and which of its declared domains are approved. One rule,
 * folded by the store decider and by the projectors that keep a copy (stores, products' store facts).
 */
import type { StoreEvent, StoreStatus } from '../events/store.js';

export type StoreStanding = { status: StoreStatus; domains_approved: string[] };

/** A store nobody has reviewed yet. */
export const NEW_STANDING: Readonly<StoreStanding> = Object.freeze({ status: 'pending_review', domains_approved: [] });

/**
 * The standing after one event of the store's stream: a new store waits for review with nothing approved; a
 * replacement keeps the status (unless it sends the store back to review) and drops approvals of domains it no
 * longer declares; approving a store approves every domain it declares; a domain is approved once.
 */
export function evolveStanding(
  s: { status: StoreStatus; domains_approved: readonly string[] },
  e: StoreEvent,
): StoreStanding {
  switch (e.type) {
    case 'StoreRegistered':
      return { status: 'pending_review', domains_approved: [] };
    case 'StoreReplaced':
      return {
        status: e.data.back_to_review ? 'pending_review' : s.status,
        domains_approved: s.domains_approved.filter((d) => e.data.store.domains.includes(d)),
      };
    case 'StoreApproved':
      return { status: 'active', domains_approved: [...e.data.domains] };
    case 'DomainApproved':
      return {
        status: s.status,
        domains_approved: s.domains_approved.includes(e.data.domain)
          ? [...s.domains_approved]
          : [...s.domains_approved, e.data.domain],
      };
    case 'StoreSuspended':
      return { status: 'suspended', domains_approved: [...s.domains_approved] };
    case 'StoreReinstated':
      return { status: 'active', domains_approved: [...s.domains_approved] };
  }
}
