import { expect } from 'chai';
import { storeDecider } from '../../command-api/deciders/store.js';
import { productDecider } from '../../command-api/deciders/product.js';
import { partnerDecider, type PartnerCommand } from '../../command-api/deciders/partner.js';
import type { StoreEvent, StoreInput } from '../../shared-schema/events/store.js';
import type { ProductEvent, ProductInput } from '../../shared-schema/events/product.js';
import type { PartnerEvent } from '../../shared-schema/events/partner.js';
import { fold, given } from '../support/decider-given.js';
import type { StoreFacts } from '../../shared-schema/domain/product-status.js';

const now = '2026-01-01T00:00:00.000Z';
const later = '2026-01-03T00:00:00.000Z';
const STORE: StoreInput = {
  name: 'Loja',
  cnpj: '11222333000181',
  website_url: 'https://shop.test',
  domains: ['shop.test', 'shop2.test'],
};
const registered: StoreEvent = { type: 'StoreRegistered', data: { store_id: 's1', store: STORE, registered_at: now } };
const PRODUCT: ProductInput = {
  store_id: 's1',
  title: 'Camiseta',
  product_url: 'https://shop.test/p',
  image_urls: ['https://shop.test/1.jpg'],
  price_cents: 1000,
  available: true,
  updated_at: '2026-01-01T10:00:00.000Z',
};
const upserted = (p: Partial<ProductInput> = {}, at = now): ProductEvent => ({
  type: 'ProductUpserted',
  data: { sku: 'k', product: { ...PRODUCT, ...p }, received_at: at },
});
const removed: ProductEvent = { type: 'ProductRemoved', data: { sku: 'k', store_id: 's1', removed_at: now } };

describe('store decider', () => {
  it('when new, registers the store pending review', () => {
    const o = given(storeDecider).when({ type: 'RegisterStore', storeId: 's1', input: STORE, now });
    o.then({ type: 'StoreRegistered', data: { store_id: 's1', store: STORE, registered_at: now } });
    expect(o.after.status).to.equal('pending_review');
  });

  it('when registered, the same input again changes nothing; another input replaces it', () => {
    given(storeDecider, registered)
      .when({ type: 'RegisterStore', storeId: 's1', input: { ...STORE }, now: later })
      .thenNothing();
    given(storeDecider, registered)
      .when({ type: 'RegisterStore', storeId: 's1', input: { ...STORE, name: 'Outra' }, now: later })
      .then({
        type: 'StoreReplaced',
        data: { store_id: 's1', store: { ...STORE, name: 'Outra' }, replaced_at: later },
      });
  });

  it('a new name sends an active store back to review; a suspended or pending one keeps its status', () => {
    const approved: StoreEvent = {
      type: 'StoreApproved',
      data: { store_id: 's1', domains: ['shop.test', 'shop2.test'] },
    };
    const renamed = { ...STORE, name: 'Loja Nova' };
    const active = given(storeDecider, registered, approved).when({
      type: 'RegisterStore',
      storeId: 's1',
      input: renamed,
      now: later,
    });
    active.then({
      type: 'StoreReplaced',
      data: { store_id: 's1', store: renamed, replaced_at: later, back_to_review: true },
    });
    expect(active.after).to.include({ status: 'pending_review' });
    expect(active.after.domainsApproved).to.deep.equal(['shop.test', 'shop2.test']);
    // Compared exactly: another case is another name; other fields keep the status.
    given(storeDecider, registered, approved)
      .when({ type: 'RegisterStore', storeId: 's1', input: { ...STORE, name: 'LOJA' }, now: later })
      .then({
        type: 'StoreReplaced',
        data: { store_id: 's1', store: { ...STORE, name: 'LOJA' }, replaced_at: later, back_to_review: true },
      });
    const other = given(storeDecider, registered, approved).when({
      type: 'RegisterStore',
      storeId: 's1',
      input: { ...STORE, returns_days: 7 },
      now: later,
    });
    other.then({
      type: 'StoreReplaced',
      data: { store_id: 's1', store: { ...STORE, returns_days: 7 }, replaced_at: later },
    });
    expect(other.after.status).to.equal('active');
    const suspended = given(storeDecider, registered, approved, {
      type: 'StoreSuspended',
      data: { store_id: 's1' },
    }).when({ type: 'RegisterStore', storeId: 's1', input: renamed, now: later });
    suspended.then({ type: 'StoreReplaced', data: { store_id: 's1', store: renamed, replaced_at: later } });
    expect(suspended.after.status).to.equal('suspended');
    // A pending store renamed stays pending (and says nothing more).
    given(storeDecider, registered)
      .when({ type: 'RegisterStore', storeId: 's1', input: renamed, now: later })
      .then({ type: 'StoreReplaced', data: { store_id: 's1', store: renamed, replaced_at: later } });
  });

  it('refuses another CNPJ for an existing store (422 cnpj immutable)', () => {
    given(storeDecider, registered)
      .when({ type: 'RegisterStore', storeId: 's1', input: { ...STORE, cnpj: '11444777000161' }, now: later })
      .thenThrows(422, 'cnpj: immutable');
  });

  it('when approved, a replacement that drops a domain removes it from the approved ones', () => {
    const state = fold(storeDecider, [
      registered,
      { type: 'StoreApproved', data: { store_id: 's1', domains: ['shop.test', 'shop2.test'] } },
      {
        type: 'StoreReplaced',
        data: { store_id: 's1', store: { ...STORE, domains: ['shop.test', 'new.test'] }, replaced_at: now },
      },
    ]);
    expect(state.status).to.equal('active');
    expect(state.domainsApproved).to.deep.equal(['shop.test']);
  });

  it('approval approves every declared domain', () => {
    given(storeDecider, registered)
      .when({ type: 'ApproveStore' })
      .then({ type: 'StoreApproved', data: { store_id: 's1', domains: ['shop.test', 'shop2.test'] } });
  });

  it('approves one declared domain at a time, once, and refuses an undeclared one', () => {
    const approved: StoreEvent = { type: 'DomainApproved', data: { store_id: 's1', domain: 'shop2.test' } };
    given(storeDecider, registered).when({ type: 'ApproveDomain', domain: 'shop2.test' }).then(approved);
    given(storeDecider, registered, approved).when({ type: 'ApproveDomain', domain: 'shop2.test' }).thenNothing();
    given(storeDecider, registered).when({ type: 'ApproveDomain', domain: 'evil.test' }).thenThrows(404);
  });

  it('suspends once, and reinstates only a suspended store', () => {
    const suspended: StoreEvent = { type: 'StoreSuspended', data: { store_id: 's1' } };
    given(storeDecider, registered).when({ type: 'SuspendStore' }).then(suspended);
    given(storeDecider, registered, suspended).when({ type: 'SuspendStore' }).thenNothing();
    given(storeDecider, registered).when({ type: 'ReinstateStore' }).thenThrows(409, 'status: invalid_transition');
    given(storeDecider, registered, suspended)
      .when({ type: 'ReinstateStore' })
      .then({ type: 'StoreReinstated', data: { store_id: 's1' } });
  });

  it('refuses operator actions on a store that does not exist', () => {
    given(storeDecider).when({ type: 'ApproveStore' }).thenThrows(404);
    given(storeDecider).when({ type: 'SuspendStore' }).thenThrows(404);
  });
});

describe('product decider', () => {
  describe('LapseFreshness', () => {
    const active: StoreFacts = { status: 'active', domains: ['shop.test'], domains_approved: ['shop.test'] };
    const passed: ProductEvent = {
      type: 'CoverChecked',
      data: { sku: 'k', url: 'https://shop.test/1.jpg', ok: true, reasons: [], checked_at: now },
    };
    const lapse = (at: string, store: StoreFacts | null = active) =>
      ({ type: 'LapseFreshness', sku: 'k', store, now: at }) as const;
    const lapsed: ProductEvent = {
      type: 'ProductFreshnessLapsed',
      data: { sku: 'k', store_id: 's1', lapsed_at: '2026-01-03T00:00:00.000Z' },
    };
    const past = '2026-01-03T00:00:00.001Z';

    it('records the lapse of an accepted product once the clock is past its last write + 48 h', () => {
      given(productDecider, upserted(), passed).when(lapse(later)).thenNothing();
      given(productDecider, upserted(), passed).when(lapse(past)).then(lapsed);
    });

    it('records it once per write, and again for the next write', () => {
      given(productDecider, upserted(), passed, lapsed).when(lapse('2026-02-01T00:00:00.000Z')).thenNothing();
      given(productDecider, upserted(), passed, lapsed, upserted({}, later))
        .when(lapse('2026-01-05T00:00:00.001Z'))
        .then({ ...lapsed, data: { ...lapsed.data, lapsed_at: '2026-01-05T00:00:00.000Z' } });
    });

    it('records nothing for a product that is not accepted: pending, rejected, removed, its store not active', () => {
      given(productDecider, upserted()).when(lapse(past)).thenNothing();
      given(productDecider, upserted(), { ...passed, data: { ...passed.data, ok: false } })
        .when(lapse(past))
        .thenNothing();
      given(productDecider, upserted(), passed, removed).when(lapse(past)).thenNothing();
      given(productDecider, upserted(), passed)
        .when(lapse(past, { ...active, status: 'suspended' }))
        .thenNothing();
      given(productDecider).when(lapse(past)).thenNothing();
    });
  });

  it('when new, records the product', () => {
    const r = given(productDecider).when({ type: 'UpsertProduct', sku: 'k', input: PRODUCT, now }).then(upserted());
    expect(r.ignoredStale).to.equal(false);
  });

  it('when a newer version exists, ignores an older updated_at and applies an equal one', () => {
    const history = upserted({ updated_at: '2026-01-01T10:00:00.000Z' });
    const older = given(productDecider, history)
      .when({
        type: 'UpsertProduct',
        sku: 'k',
        input: { ...PRODUCT, updated_at: '2026-01-01T09:59:59.999Z' },
        now: later,
      })
      .thenNothing();
    expect(older.ignoredStale).to.equal(true);
    given(productDecider, history)
      .when({ type: 'UpsertProduct', sku: 'k', input: { ...PRODUCT, price_cents: 5 }, now: later })
      .then(upserted({ price_cents: 5 }, later));
  });

  it('refuses another store for a SKU, even after a delete', () => {
    given(productDecider, upserted(), removed)
      .when({ type: 'UpsertProduct', sku: 'k', input: { ...PRODUCT, store_id: 's2' }, now })
      .thenThrows(409, 'store_id: sku_store_conflict');
  });

  it('after a delete, accepts the SKU again whatever its updated_at', () => {
    const old = { ...PRODUCT, updated_at: '2020-01-01T00:00:00.000Z' };
    given(productDecider, upserted(), removed)
      .when({ type: 'UpsertProduct', sku: 'k', input: old, now: later })
      .then({ type: 'ProductUpserted', data: { sku: 'k', product: old, received_at: later } });
  });

  it('PATCH records the patch; of an unknown or removed SKU is 404; one that makes the from-price not higher is 422', () => {
    const patch = { price_cents: 900, updated_at: '2026-01-02T00:00:00.000Z' };
    given(productDecider, upserted())
      .when({ type: 'PatchProduct', sku: 'k', patch, now: later })
      .then({ type: 'ProductPatched', data: { sku: 'k', patch, received_at: later } });
    given(productDecider).when({ type: 'PatchProduct', sku: 'k', patch, now }).thenThrows(404);
    given(productDecider, upserted(), removed).when({ type: 'PatchProduct', sku: 'k', patch, now }).thenThrows(404);
    given(productDecider, upserted({ original_price_cents: 2000 }))
      .when({
        type: 'PatchProduct',
        sku: 'k',
        patch: { price_cents: 2000, updated_at: '2026-01-02T00:00:00.000Z' },
        now,
      })
      .thenThrows(422, 'original_price_cents: not_higher');
  });

  it('PATCH with null commission and null from-price removes them from the product', () => {
    const state = fold(productDecider, [
      upserted({ commission: { type: 'fixed', amount_cents: 10 }, original_price_cents: 2000 }),
      {
        type: 'ProductPatched',
        data: {
          sku: 'k',
          patch: { commission: null, original_price_cents: null, updated_at: '2026-01-02T00:00:00.000Z' },
          received_at: now,
        },
      },
    ]);
    expect(state.product).to.not.have.property('commission');
    expect(state.product).to.not.have.property('original_price_cents');
    expect(state.product!.price_cents).to.equal(1000);
  });

  it('DELETE records the removal with the SKU’s store; of a SKU never sent, or already removed, records nothing', () => {
    given(productDecider, upserted()).when({ type: 'RemoveProduct', sku: 'k', now }).then(removed);
    given(productDecider).when({ type: 'RemoveProduct', sku: 'k', now }).thenNothing();
    given(productDecider, upserted(), removed).when({ type: 'RemoveProduct', sku: 'k', now }).thenNothing();
  });
});

describe('partner decider', () => {
  const created: PartnerEvent = {
    type: 'PartnerCreated',
    data: { partner_id: 'pt_1', name: 'P', partner_type: 'hub', created_at: now },
  };
  const issued: PartnerEvent = {
    type: 'KeyIssued',
    data: { key_id: 'k1', key_hash: 'h', environment: 'test', scopes: ['catalog'], issued_at: now },
  };

  it('creates a partner once', () => {
    const create = { type: 'CreatePartner', partnerId: 'pt_1', name: 'P', partnerType: 'hub', now } as const;
    given(partnerDecider).when(create).then(created);
    given(partnerDecider, created).when(create).thenThrows(409);
  });

  it('issues keys only to an existing partner and revokes a key once', () => {
    const issue: PartnerCommand = {
      type: 'IssueKey',
      keyId: 'k1',
      keyHash: 'h',
      environment: 'test',
      scopes: ['catalog'],
      now,
    };
    given(partnerDecider).when(issue).thenThrows(404);
    given(partnerDecider, created).when(issue).then(issued);
    given(partnerDecider, created, issued)
      .when({ type: 'RevokeKey', keyId: 'k1', now: later })
      .then({ type: 'KeyRevoked', data: { key_id: 'k1', revoked_at: later } });
    given(partnerDecider, created, issued, { type: 'KeyRevoked', data: { key_id: 'k1', revoked_at: now } })
      .when({ type: 'RevokeKey', keyId: 'k1', now })
      .thenNothing();
    given(partnerDecider, created).when({ type: 'RevokeKey', keyId: 'nope', now }).thenThrows(404);
  });
});
