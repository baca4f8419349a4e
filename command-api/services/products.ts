/**
 * Product writes, one code path for a single PUT/PATCH/DELETE and a batch item: check the product against its
 * store (registered, page and photos on declared hosts), decide on the product stream, and build the status the
 * answer carries from the same derivation the read side uses.
 */
import { streams, type Tenant } from '../../shared-schema/domain/streams.js';
import type { EventMetadata } from '../../shared-schema/ports/event-store.js';
import type { ProductInput, ProductPatch } from '../../shared-schema/events/product.js';
import { fieldError, invalid, type FieldError } from '../../shared-schema/contract/problems.js';
import {
  deriveBaseState,
  productStatusView,
  withClock,
  type ProductStatusView,
  type StoreFacts,
} from '../../shared-schema/domain/product-status.js';
import { hostMatchesDomains, urlHost } from '../../shared-schema/domain/host-match.js';
import { PRODUCTS, productDocId, type ProductDoc } from '../../shared-schema/read-models/products.js';
import { productDecider, skuStoreConflict, type ProductCommand, type ProductStreamState } from '../deciders/product.js';
import { storeDecider, type StoreState } from '../deciders/store.js';
import type { CommandDeps } from './context.js';

export interface ProductWrite {
  view: ProductStatusView;
  position?: number;
}

export function storeFacts(s: StoreState): StoreFacts | null {
  if (!s.exists || !s.input) return null;
  const facts: StoreFacts = { status: s.status, domains: s.input.domains, domains_approved: s.domainsApproved };
  if (s.input.default_commission !== undefined) facts.default_commission = s.input.default_commission;
  return facts;
}

/** store_not_found, domain_not_declared, image_host_not_declared: every one at once. */
export function storeRuleErrors(input: ProductInput, store: StoreState): FieldError[] {
  if (!store.exists || !store.input) {
    return [
      fieldError('store_id', 'store_not_found', 'Register the store (PUT /stores/{store_id}) before its products.'),
    ];
  }
  const errors: FieldError[] = [];
  if (!hostMatchesDomains(urlHost(input.product_url), store.input.domains)) {
    errors.push(fieldError('product_url', 'domain_not_declared', "product_url is outside the store's domains."));
  }
  const photoHosts = [...store.input.domains, ...(store.input.image_hosts ?? [])];
  input.image_urls.forEach((url, i) => {
    if (!hostMatchesDomains(urlHost(url), photoHosts)) {
      errors.push(
        fieldError(
          `image_urls[${i}]`,
          'image_host_not_declared',
          "The photo is outside the store's domains and image_hosts.",
        ),
      );
    }
  });
  return errors;
}

export async function statusOf(
  deps: CommandDeps,
  tenant: Tenant,
  product: ProductStreamState,
  store: StoreState,
  ignoredStale?: boolean,
): Promise<ProductStatusView> {
  const facts = storeFacts(store);
  const base = deriveBaseState({ product: product.product!, removed: product.removed, cover: product.cover }, facts);
  // `published_at` is set by the projection once the product is accepted, which takes a passed cover check.
  const doc = product.coverEverPassed
    ? await deps.reads.get<ProductDoc>(PRODUCTS, productDocId(tenant, product.sku))
    : null;
  const view: Parameters<typeof productStatusView>[0] = {
    sku: product.sku,
    product: product.product!,
    state: withClock(base.state, product.lastWriteAt, deps.clock.now()),
    reasons: base.reasons,
    received_at: product.receivedAt,
    published_at: doc?.published_at ?? null,
    store_default: facts?.default_commission,
    public_base: deps.publicBaseUrl,
    tenant,
  };
  if (ignoredStale !== undefined) view.ignored_stale = ignoredStale;
  return productStatusView(view);
}

async function decideOnProduct(
  deps: CommandDeps,
  tenant: Tenant,
  store: StoreState,
  command: ProductCommand,
  meta: EventMetadata,
): Promise<ProductWrite> {
  const handled = await deps.repo.handle(streams.product(tenant, command.sku), productDecider, command, meta);
  const write: ProductWrite = { view: await statusOf(deps, tenant, handled.state, store, handled.result.ignoredStale) };
  if (handled.position !== undefined) write.position = handled.position;
  return write;
}

export async function upsertProduct(
  deps: CommandDeps,
  tenant: Tenant,
  sku: string,
  input: ProductInput,
  meta: EventMetadata,
): Promise<ProductWrite> {
  const store = await deps.repo.load(streams.store(tenant, input.store_id), storeDecider);
  const errors = storeRuleErrors(input, store.state);
  if (errors.length > 0) {
    // The SKU's store cannot change, even to a store that does not exist: that answer wins.
    const existing = await deps.repo.load(streams.product(tenant, sku), productDecider);
    if (existing.state.exists && existing.state.storeId !== input.store_id)
      throw skuStoreConflict(existing.state.storeId);
    throw invalid(errors);
  }
  return decideOnProduct(deps, tenant, store.state, { type: 'UpsertProduct', sku, input, now: meta.recorded_at }, meta);
}

export async function patchProduct(
  deps: CommandDeps,
  tenant: Tenant,
  sku: string,
  patch: ProductPatch,
  meta: EventMetadata,
): Promise<ProductWrite> {
  const current = await deps.repo.load(streams.product(tenant, sku), productDecider);
  const store = await deps.repo.load(streams.store(tenant, current.state.storeId || '-'), storeDecider);
  return decideOnProduct(deps, tenant, store.state, { type: 'PatchProduct', sku, patch, now: meta.recorded_at }, meta);
}

export async function removeProduct(
  deps: CommandDeps,
  tenant: Tenant,
  sku: string,
  meta: EventMetadata,
): Promise<{ position?: number }> {
  const handled = await deps.repo.handle(
    streams.product(tenant, sku),
    productDecider,
    { type: 'RemoveProduct', sku, now: meta.recorded_at },
    meta,
  );
  return handled.position !== undefined ? { position: handled.position } : {};
}

/**
 * Records the 48 h lapse of the product's last write if it is due now (LapseFreshness). The append checks the
 * stream's revision: a write that came meanwhile wins, and the decision is taken again on it (then nothing is due).
 * Returns the log position of the lapse, or undefined when none was due.
 */
export async function lapseFreshness(
  deps: CommandDeps,
  tenant: Tenant,
  sku: string,
  storeId: string,
  meta: EventMetadata,
): Promise<number | undefined> {
  const store = await deps.repo.load(streams.store(tenant, storeId), storeDecider);
  const command: ProductCommand = {
    type: 'LapseFreshness',
    sku,
    store: storeFacts(store.state),
    now: meta.recorded_at,
  };
  const handled = await deps.repo.handle(streams.product(tenant, sku), productDecider, command, meta);
  return handled.position;
}
