import { expect } from 'chai';
import { decideStore, storeAggregate } from '../../command-api/deciders/store.js';
import { decideProduct, productAggregate } from '../../command-api/deciders/product.js';
import { decidePartner, partnerAggregate } from '../../command-api/deciders/partner.js';
import type { StoreInput } from '../../shared-schema/events/store.js';
import type { ProductInput } from '../../shared-schema/events/product.js';
import { fold, given, META } from './given.js';

const STORE: StoreInput = { name: 'Loja', cnpj: '11222333000181', website_url: 'https://shop.test', domains: ['shop.test', 'shop2.test'] };
const registered = { type: 'StoreRegistered', data: { store_id: 's1', store: STORE, registered_at: META.recorded_at } };
const PRODUCT: ProductInput = {
  store_id: 's1',
  title: 'Camiseta',
  product_url: 'https://shop.test/p',
  image_urls: ['https://shop.test/1.jpg'],
  price_cents: 1000,
  available: true,
  updated_at: '2026-01-01T10:00:00.000Z',
};
const upserted = (p: Partial<ProductInput> = {}) => ({ type: 'ProductUpserted', data: { sku: 'k', product: { ...PRODUCT, ...p }, received_at: META.recorded_at } });
const now = META.recorded_at;

describe('store decider', () => {
  it('when new, registers the store pending review', () => {
    given(storeAggregate, decideStore, []).when({ type: 'RegisterStore', storeId: 's1', input: STORE, now, meta: META }).then([
      { type: 'StoreRegistered', data: { store_id: 's1', store: STORE, registered_at: now } },
    ]);
    expect(fold(storeAggregate, [registered]).status).to.equal('pending_review');
  });

  it('when registered, the same input again changes nothing; another input replaces it', () => {
    given(storeAggregate, decideStore, [registered]).when({ type: 'RegisterStore', storeId: 's1', input: { ...STORE }, now, meta: META }).thenNothing();
    given(storeAggregate, decideStore, [registered])
      .when({ type: 'RegisterStore', storeId: 's1', input: { ...STORE, name: 'Outra' }, now, meta: META })
      .then([{ type: 'StoreReplaced' }]);
  });

  it('when approved, a replacement that drops a domain removes it from the approved ones', () => {
    const state = fold(storeAggregate, [
      registered,
      { type: 'StoreApproved', data: { store_id: 's1', domains: ['shop.test', 'shop2.test'] } },
      { type: 'StoreReplaced', data: { store_id: 's1', store: { ...STORE, domains: ['shop.test', 'new.test'] }, replaced_at: now } },
    ]);
    expect(state.status).to.equal('active');
    expect(state.domainsApproved).to.deep.equal(['shop.test']);
  });

  it('approves one declared domain at a time and refuses an undeclared one', () => {
    given(storeAggregate, decideStore, [registered]).when({ type: 'ApproveDomain', domain: 'shop2.test', meta: META }).then([{ type: 'DomainApproved' }]);
    given(storeAggregate, decideStore, [registered]).when({ type: 'ApproveDomain', domain: 'evil.test', meta: META }).thenThrows(404);
  });

  it('reinstates only a suspended store', () => {
    given(storeAggregate, decideStore, [registered]).when({ type: 'ReinstateStore', meta: META }).thenThrows(409, 'invalid_transition');
    given(storeAggregate, decideStore, [registered, { type: 'StoreSuspended', data: { store_id: 's1' } }])
      .when({ type: 'ReinstateStore', meta: META })
      .then([{ type: 'StoreReinstated' }]);
  });

  it('refuses operator actions on a store that does not exist', () => {
    given(storeAggregate, decideStore, []).when({ type: 'ApproveStore', meta: META }).thenThrows(404);
    given(storeAggregate, decideStore, []).when({ type: 'SuspendStore', meta: META }).thenThrows(404);
  });
});

describe('product decider', () => {
  it('when new, records the product', () => {
    const r = given(productAggregate, decideProduct, []).when({ type: 'UpsertProduct', sku: 'k', input: PRODUCT, now, meta: META }).then([upserted()]);
    expect(r.ignoredStale).to.equal(false);
  });

  it('when a newer version exists, ignores an older updated_at and applies an equal one', () => {
    const history = [upserted({ updated_at: '2026-01-01T10:00:00.000Z' })];
    const older = given(productAggregate, decideProduct, history)
      .when({ type: 'UpsertProduct', sku: 'k', input: { ...PRODUCT, updated_at: '2026-01-01T09:59:59.999Z' }, now, meta: META })
      .thenNothing();
    expect(older.ignoredStale).to.equal(true);
    given(productAggregate, decideProduct, history)
      .when({ type: 'UpsertProduct', sku: 'k', input: { ...PRODUCT, price_cents: 5 }, now, meta: META })
      .then([{ type: 'ProductUpserted' }]);
  });

  it('refuses another store for a SKU, even after a delete', () => {
    const removed = { type: 'ProductRemoved', data: { sku: 'k', store_id: 's1', removed_at: now } };
    given(productAggregate, decideProduct, [upserted(), removed])
      .when({ type: 'UpsertProduct', sku: 'k', input: { ...PRODUCT, store_id: 's2' }, now, meta: META })
      .thenThrows(409, 'sku_store_conflict', 'store_id');
  });

  it('after a delete, accepts the SKU again whatever its updated_at', () => {
    const removed = { type: 'ProductRemoved', data: { sku: 'k', store_id: 's1', removed_at: now } };
    given(productAggregate, decideProduct, [upserted(), removed])
      .when({ type: 'UpsertProduct', sku: 'k', input: { ...PRODUCT, updated_at: '2020-01-01T00:00:00.000Z' }, now, meta: META })
      .then([{ type: 'ProductUpserted' }]);
  });

  it('PATCH of an unknown or removed SKU is 404; a PATCH that makes the from-price not higher is 422', () => {
    given(productAggregate, decideProduct, []).when({ type: 'PatchProduct', sku: 'k', patch: { price_cents: 1, updated_at: PRODUCT.updated_at }, now, meta: META }).thenThrows(404);
    given(productAggregate, decideProduct, [upserted({ original_price_cents: 2000 })])
      .when({ type: 'PatchProduct', sku: 'k', patch: { price_cents: 2000, updated_at: '2026-01-02T00:00:00.000Z' }, now, meta: META })
      .thenThrows(422, 'not_higher', 'original_price_cents');
  });

  it('PATCH with null commission and null from-price removes them from the product', () => {
    const state = fold(productAggregate, [
      upserted({ commission: { type: 'fixed', amount_cents: 10 }, original_price_cents: 2000 }),
      { type: 'ProductPatched', data: { sku: 'k', patch: { commission: null, original_price_cents: null, updated_at: '2026-01-02T00:00:00.000Z' }, received_at: now } },
    ]);
    expect(state.product).to.not.have.property('commission');
    expect(state.product).to.not.have.property('original_price_cents');
    expect(state.product!.price_cents).to.equal(1000);
  });

  it('DELETE of a SKU never sent, or already removed, records nothing', () => {
    given(productAggregate, decideProduct, []).when({ type: 'RemoveProduct', sku: 'k', now, meta: META }).thenNothing();
    given(productAggregate, decideProduct, [upserted(), { type: 'ProductRemoved', data: { sku: 'k', store_id: 's1', removed_at: now } }])
      .when({ type: 'RemoveProduct', sku: 'k', now, meta: META })
      .thenNothing();
  });
});

describe('partner decider', () => {
  const created = { type: 'PartnerCreated', data: { partner_id: 'pt_1', name: 'P', partner_type: 'hub', created_at: now } };
  it('issues keys only to an existing partner and revokes a key once', () => {
    given(partnerAggregate, decidePartner, []).when({ type: 'IssueKey', keyId: 'k1', keyHash: 'h', environment: 'test', scopes: ['catalog'], now, meta: META }).thenThrows(404);
    const issued = { type: 'KeyIssued', data: { key_id: 'k1', key_hash: 'h', environment: 'test', scopes: ['catalog'], issued_at: now } };
    given(partnerAggregate, decidePartner, [created, issued]).when({ type: 'RevokeKey', keyId: 'k1', now, meta: META }).then([{ type: 'KeyRevoked' }]);
    given(partnerAggregate, decidePartner, [created, issued, { type: 'KeyRevoked', data: { key_id: 'k1', revoked_at: now } }])
      .when({ type: 'RevokeKey', keyId: 'k1', now, meta: META })
      .thenNothing();
    given(partnerAggregate, decidePartner, [created]).when({ type: 'RevokeKey', keyId: 'nope', now, meta: META }).thenThrows(404);
  });
});
