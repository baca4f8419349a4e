import { expect } from 'chai';
import {
  productStatusView,
  storeAddress,
  svcUrl,
  withClock,
  STALE_AFTER_MS,
} from '../../shared-schema/domain/product-status.js';
import type { ProductInput } from '../../shared-schema/events/product.js';

const product: ProductInput = {
  store_id: 'Loja-Azul',
  title: 'Camiseta',
  product_url: 'https://shop.test/p',
  image_urls: ['https://shop.test/1.jpg'],
  price_cents: 999,
  available: true,
  updated_at: '2026-01-01T00:00:00Z',
};
const view = (state: 'pending' | 'accepted' | 'rejected' | 'stale' | 'removed', env: 'live' | 'test' = 'live') =>
  productStatusView({
    sku: 'sku 1',
    product,
    state,
    reasons: [],
    received_at: '2026-01-01T00:00:00.000Z',
    published_at: null,
    store_default: undefined,
    public_base: 'https://svc.example',
    tenant: { partnerId: 'pt_PARTNER', env },
  });

describe('product status view (DECISIONS.md, Products)', () => {
  it('svc_url is {public_base}/p/{partner_id}/{store_id}/{sku} live and {public_base}/test/p/... in test, the address lower-cased', () => {
    expect(svcUrl('https://svc.example', { partnerId: 'pt_AB12', env: 'live' }, 'Loja-Azul', 'sku-1')).to.equal(
      'https://svc.example/p/pt_ab12/loja-azul/sku-1',
    );
    expect(svcUrl('https://svc.example', { partnerId: 'pt_AB12', env: 'test' }, 'Loja-Azul', 'sku-1')).to.equal(
      'https://svc.example/test/p/pt_ab12/loja-azul/sku-1',
    );
    expect(view('accepted').svc_url).to.equal('https://svc.example/p/pt_partner/loja-azul/sku%201');
  });

  it('the store address holds the partner: the same store_id of two partners has two addresses', () => {
    expect(storeAddress('pt_AAAA', 'Loja')).to.equal('pt_aaaa/loja');
    expect(storeAddress('pt_AAAA', 'Loja')).to.not.equal(storeAddress('pt_BBBB', 'Loja'));
    expect(storeAddress('pt_AAAA', 'LOJA')).to.equal(storeAddress('pt_AAAA', 'loja'));
  });

  it('carries svc_url only while accepted or stale', () => {
    expect(view('accepted', 'test').svc_url).to.equal('https://svc.example/test/p/pt_partner/loja-azul/sku%201');
    expect(view('stale').svc_url).to.be.a('string');
    for (const state of ['pending', 'rejected', 'removed'] as const)
      expect(view(state)).to.not.have.property('svc_url');
  });

  it('with no rule at either level, the expected commission is unknown (null), not zero', () => {
    expect(view('pending')).to.include({ commission: null, commission_source: null, expected_commission_cents: null });
  });

  it('reads stale only after more than 48 h without an applied PUT or PATCH', () => {
    const last = '2026-01-01T00:00:00.000Z';
    expect(withClock('accepted', last, new Date(Date.parse(last) + STALE_AFTER_MS))).to.equal('accepted');
    expect(withClock('accepted', last, new Date(Date.parse(last) + STALE_AFTER_MS + 1))).to.equal('stale');
    expect(withClock('pending', last, new Date(Date.parse(last) + 10 * STALE_AFTER_MS))).to.equal('pending');
  });
});
