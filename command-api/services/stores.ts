/**
 * Store registration spans three streams: the store itself, the partner's store index (one store for a direct
 * store; ids that lower-case alike conflict) and the CNPJ reservation (one company, one store per environment; a
 * store keeps its CNPJ for good, so a reservation is never released).
 * Each is appended with an expected revision; a race restarts the whole decision.
 */
import type { CnpjEvent, StoreIndexEvent, StoreInput } from '../../shared-schema/events/store.js';
import { streams, type Tenant } from '../../shared-schema/domain/streams.js';
import { fieldError, invalid, type FieldError } from '../../shared-schema/contract/problems.js';
import { storeAddress } from '../../shared-schema/domain/product-status.js';
import type { PartnerType } from '../../shared-schema/events/partner.js';
import type { EventMetadata } from '../../shared-schema/ports/event-store.js';
import type { Fold } from '../deciders/decider.js';
import { replacementErrors, storeDecider, type StoreCommand, type StoreState } from '../deciders/store.js';
import type { CommandDeps } from './context.js';

/**
 * The store ids of one partner and environment. An event's `address` is not read back: those written before the
 * address held the partner carry only the lower-cased `store_id`; the address is derived from the id instead.
 */
interface IndexState {
  storeIds: string[];
}
const storeIndexFold: Fold<IndexState, StoreIndexEvent> = {
  name: 'storeindex',
  initialState: () => ({ storeIds: [] }),
  evolve: (s, e) => ({ storeIds: [...s.storeIds, e.data.store_id] }),
};

interface CnpjState {
  holder: { partnerId: string; storeId: string } | null;
}
const cnpjFold: Fold<CnpjState, CnpjEvent> = {
  name: 'cnpj',
  initialState: () => ({ holder: null }),
  evolve: (_s, e) =>
    e.type === 'CnpjReserved'
      ? { holder: { partnerId: e.data.partner_id, storeId: e.data.store_id } }
      : { holder: null },
};

export interface StoreView extends StoreInput {
  store_id: string;
  status: StoreState['status'];
  domains_approved: string[];
}

export function storeView(s: StoreState): StoreView {
  return { store_id: s.storeId, ...s.input!, status: s.status, domains_approved: [...s.domainsApproved] };
}

export async function registerStore(
  deps: CommandDeps,
  tenant: Tenant,
  partnerType: PartnerType,
  storeId: string,
  input: StoreInput,
  meta: EventMetadata,
): Promise<{ view: StoreView; position?: number }> {
  /** One decision over the three streams; a lost race (WrongExpectedRevisionError) makes the caller start again. */
  const once = async (): Promise<{ view: StoreView; position?: number }> => {
    const storeStream = streams.store(tenant, storeId);
    const indexStream = streams.storeIndex(tenant);
    const cnpjStream = streams.cnpj(tenant.env, input.cnpj);
    const [store, index, cnpj] = await Promise.all([
      deps.repo.load(storeStream, storeDecider),
      deps.repo.load(indexStream, storeIndexFold),
      deps.repo.load(cnpjStream, cnpjFold),
    ]);

    const errors: FieldError[] = [];
    const address = storeAddress(tenant.partnerId, storeId);
    const known = index.state.storeIds.includes(storeId);
    if (!known) {
      if (partnerType === 'store' && index.state.storeIds.length > 0) {
        errors.push(
          fieldError(
            'store_id',
            'single_store',
            'A direct-store account has one store per environment; ask for a hub to add more.',
          ),
        );
      }
      const clash = index.state.storeIds.find((id) => storeAddress(tenant.partnerId, id) === address);
      if (clash) errors.push(fieldError('store_id', 'conflict', `store_id turns into the same address as ${clash}.`));
    }
    const fixed = replacementErrors(store.state, input);
    errors.push(...fixed);
    const holder = cnpj.state.holder;
    if (fixed.length === 0 && holder && (holder.partnerId !== tenant.partnerId || holder.storeId !== storeId)) {
      errors.push(fieldError('cnpj', 'already_registered', 'This CNPJ is already registered for another store.'));
    }
    if (errors.length > 0) throw invalid(errors);

    // Reservations first: a crash after them leaves a reservation that the same PUT, repeated, reuses.
    if (!holder) {
      await deps.repo.append(
        cnpjStream,
        cnpjFold,
        cnpj,
        [{ type: 'CnpjReserved', data: { cnpj: input.cnpj, partner_id: tenant.partnerId, store_id: storeId } }],
        meta,
      );
    }
    if (!known)
      await deps.repo.append(
        indexStream,
        storeIndexFold,
        index,
        [{ type: 'StoreIndexed', data: { store_id: storeId, address } }],
        meta,
      );
    const handled = await deps.repo.handle(
      storeStream,
      storeDecider,
      { type: 'RegisterStore', storeId, input, now: meta.recorded_at },
      meta,
    );
    const result: { view: StoreView; position?: number } = { view: storeView(handled.state) };
    if (handled.position !== undefined) result.position = handled.position;
    return result;
  };
  // One registration at a time per partner and environment in this process (they all append to the store index);
  // the expected revisions still guard against other processes.
  return deps.repo.serialized(streams.storeIndex(tenant), once);
}

/** Operator actions on a store (approve, approve a domain, suspend, reinstate). */
export async function operateStore(
  deps: CommandDeps,
  tenant: Tenant,
  storeId: string,
  command: StoreCommand,
  meta: EventMetadata,
) {
  const handled = await deps.repo.handle(streams.store(tenant, storeId), storeDecider, command, meta);
  return { view: storeView(handled.state), position: handled.position };
}
