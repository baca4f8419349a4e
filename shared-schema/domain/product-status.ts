/**
 * The product state, derived from facts (DECISIONS.md): its last write, its cover check, its store's status, the
 * approval of its page's domain, and the clock. The command door (write answers, batch totals), the projector
 * (materialized base state, for indexed filters) and the query door (the 48-hour clock rule) all use these.
 */
import type { Commission } from './commission.js';
import { effectiveCommission, expectedUnitCommission } from './commission.js';
import type { ProductInput, ProductPatch, RejectionReason } from '../events/product.js';
import type { StoreStatus } from '../events/store.js';
import type { Tenant } from './streams.js';
import { matchingDomains, urlHost } from './host-match.js';

export type ProductState = 'pending' | 'accepted' | 'rejected' | 'stale' | 'removed';
export type BaseState = Exclude<ProductState, 'stale'>;

export const STALE_AFTER_MS = 48 * 60 * 60 * 1000;

export interface CoverFacts {
  url: string;
  ok: boolean;
  reasons: RejectionReason[];
  checked_at: string;
}

export interface ProductFacts {
  product: ProductInput;
  removed: boolean;
  cover: CoverFacts | null;
}

export type StoreFacts = {
  status: StoreStatus;
  domains: readonly string[];
  domains_approved: readonly string[];
  default_commission?: Commission;
};

/** PATCH semantics: only the fields sent change; `commission: null` and `original_price_cents: null` remove. */
export function applyPatch(product: ProductInput, patch: ProductPatch): ProductInput {
  const next: Record<string, unknown> = { ...product };
  for (const [k, v] of Object.entries(patch)) {
    if ((k === 'commission' || k === 'original_price_cents') && v === null) delete next[k];
    else next[k] = v;
  }
  return next as unknown as ProductInput;
}

/** The cover result that applies to the current cover address (a check of an older address does not count). */
export function currentCover(facts: ProductFacts): CoverFacts | null {
  const url = facts.product.image_urls[0];
  return facts.cover && facts.cover.url === url ? facts.cover : null;
}

export function deriveBaseState(
  facts: ProductFacts,
  store: StoreFacts | null,
): { state: BaseState; reasons: RejectionReason[] } {
  return baseState(
    { removed: facts.removed, cover: currentCover(facts), page_host: urlHost(facts.product.product_url) },
    store,
  );
}

/**
 * What the base state reads of a product: its removal, the verdict of the check of its current cover (null: none
 * yet), the host of its page (`urlHost` of `product_url`). The shopper search keeps these for the offers it has read
 * (infra/adapters/sqlite/held-offers.ts) and judges them here, with the partner API's own derivation.
 */
export interface StateFacts {
  removed: boolean;
  cover: Pick<CoverFacts, 'ok' | 'reasons'> | null;
  page_host: string;
}

/** The page is on an approved domain when any declared domain it stands on is approved (host-match.ts rule). */
export function pageDomainApproved(
  store: Pick<StoreFacts, 'domains' | 'domains_approved'> | null,
  pageHost: string,
): boolean {
  if (!store) return false;
  return matchingDomains(pageHost, store.domains).some((d) => store.domains_approved.includes(d));
}

export function baseState(
  facts: StateFacts,
  store: StoreFacts | null,
): { state: BaseState; reasons: RejectionReason[] } {
  if (facts.removed) return { state: 'removed', reasons: [] };
  const cover = facts.cover;
  if (cover && !cover.ok) return { state: 'rejected', reasons: cover.reasons };
  const reasons: RejectionReason[] = [];
  if (!store || store.status !== 'active') {
    reasons.push({
      code: 'store_not_active',
      field: 'store_id',
      message: 'The store is not approved, or is suspended.',
    });
  }
  if (!pageDomainApproved(store, facts.page_host)) {
    reasons.push({
      code: 'domain_not_approved',
      field: 'product_url',
      message: 'The domain of product_url is not approved yet.',
    });
  }
  if (reasons.length > 0) return { state: 'pending', reasons };
  if (!cover) return { state: 'pending', reasons: [] };
  return { state: 'accepted', reasons: [] };
}

/**
 * The 48-hour rule: `accepted` with no applied PUT/PATCH for more than 48 h reads `stale` (the last one's time as
 * ISO text or ms since the epoch).
 */
export function withClock(state: BaseState, lastWriteAt: string | number, now: Date): ProductState {
  const at = typeof lastWriteAt === 'number' ? lastWriteAt : Date.parse(lastWriteAt);
  if (state === 'accepted' && now.getTime() - at > STALE_AFTER_MS) return 'stale';
  return state;
}

/**
 * When an accepted product written last at `lastWriteAt` goes stale unless written again: 48 h later (ISO). It
 * reads `stale` once the clock is past this instant (`withClock`).
 */
export function freshUntil(lastWriteAt: string): string {
  return new Date(Date.parse(lastWriteAt) + STALE_AFTER_MS).toISOString();
}

/** The instant, for a read at `now`, before which a last write makes an accepted product stale (`withClock`). */
export function staleCutoff(now: Date): string {
  return new Date(now.getTime() - STALE_AFTER_MS).toISOString();
}

/**
 * A store's address in the service (DECISIONS.md, "Stores"): `{partner_id lower-cased}/{store_id lower-cased}`.
 * Store ids are chosen by partners and repeat across them, so the partner is part of it: two partners' stores of
 * the same id never share an address, their offer pages or their clicks.
 */
export function storeAddress(partnerId: string, storeId: string): string {
  return `${partnerId.toLowerCase()}/${storeId.toLowerCase()}`;
}

/** `{store address}/{sku}` as a URL path (each segment encoded), the part after `/p/` and `/r/`. */
export function offerPath(partnerId: string, storeId: string, sku: string): string {
  return [...storeAddress(partnerId, storeId).split('/'), sku].map(encodeURIComponent).join('/');
}

/** The offer page of a product: `{public_base}/p/{store address}/{sku}`, under `/test` for the test environment. */
export function svcUrl(publicBase: string, tenant: Tenant, storeId: string, sku: string): string {
  const prefix = tenant.env === 'test' ? '/test' : '';
  return `${publicBase}${prefix}/p/${offerPath(tenant.partnerId, storeId, sku)}`;
}

export interface ProductStatusView {
  sku: string;
  store_id: string;
  state: ProductState;
  received_at: string;
  published_at: string | null;
  reasons: RejectionReason[];
  ignored_stale?: boolean;
  commission: Commission;
  commission_source: 'product' | 'store' | null;
  expected_commission_cents: number | null;
  svc_url?: string;
}

export function productStatusView(input: {
  sku: string;
  product: ProductInput;
  state: ProductState;
  reasons: RejectionReason[];
  received_at: string;
  published_at: string | null;
  store_default: Commission | undefined;
  public_base: string;
  tenant: Tenant;
  ignored_stale?: boolean;
}): ProductStatusView {
  const eff = effectiveCommission(input.product.commission, input.store_default);
  const view: ProductStatusView = {
    sku: input.sku,
    store_id: input.product.store_id,
    state: input.state,
    received_at: input.received_at,
    published_at: input.published_at,
    reasons: input.reasons,
    commission: eff.commission,
    commission_source: eff.commission_source,
    expected_commission_cents: expectedUnitCommission(eff.commission, input.product.price_cents),
  };
  if (input.ignored_stale !== undefined) view.ignored_stale = input.ignored_stale;
  if (input.state === 'accepted' || input.state === 'stale') {
    view.svc_url = svcUrl(input.public_base, input.tenant, input.product.store_id, input.sku);
  }
  return view;
}
