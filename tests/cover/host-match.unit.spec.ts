import { expect } from 'chai';
import { hostMatchesDomains, matchingDomains, normalizeHost, urlHost } from '../../shared-schema/domain/host-match.js';
import { deriveBaseState } from '../../shared-schema/domain/product-status.js';

describe('hostMatchesDomains ("on a domain of the store")', () => {
  const store = ['shop.com.br', 'cdn-fotos.net'];

  it('accepts a listed domain and any subdomain of it', () => {
    for (const host of [
      'shop.com.br',
      'www.shop.com.br',
      'img.static.shop.com.br',
      'cdn-fotos.net',
      'a.cdn-fotos.net',
    ]) {
      expect(hostMatchesDomains(host, store), host).to.equal(true);
    }
  });

  it('ignores case and one trailing dot, on either side', () => {
    expect(hostMatchesDomains('IMG.Shop.COM.BR.', store)).to.equal(true);
    expect(hostMatchesDomains('img.shop.com.br', ['Shop.com.br.'])).to.equal(true);
    expect(normalizeHost(' Shop.Test. ')).to.equal('shop.test');
  });

  it('refuses look-alikes: a suffix without a dot, the domain as a prefix, a parent domain', () => {
    for (const host of ['evilshop.com.br', 'shop.com.br.evil.io', 'com.br', 'shop.com', 'xcdn-fotos.net', '']) {
      expect(hostMatchesDomains(host, store), host).to.equal(false);
    }
  });

  it('refuses IP literals and an empty list', () => {
    expect(hostMatchesDomains('127.0.0.1', ['127.0.0.1'])).to.equal(false);
    expect(hostMatchesDomains('[::1]', ['[::1]'])).to.equal(false);
    expect(hostMatchesDomains('shop.com.br', [])).to.equal(false);
    expect(hostMatchesDomains('shop.com.br', [''])).to.equal(false);
  });

  it('names every listed domain a host is on, as listed', () => {
    expect(matchingDomains('www.shop.test', ['shop.test', 'www.shop.test', 'other.test'])).to.deep.equal([
      'shop.test',
      'www.shop.test',
    ]);
    expect(matchingDomains('127.0.0.1', ['127.0.0.1'])).to.deep.equal([]);
    expect(urlHost('https://IMG.Shop.test:8443/a.jpg')).to.equal('img.shop.test');
    expect(urlHost('not a url')).to.equal('');
  });

  it('is the rule of the product state too: a page is on an approved domain when any declared domain it is on is approved', () => {
    const product = {
      store_id: 's',
      title: 'Title',
      product_url: 'https://www.shop.test/p',
      image_urls: ['https://shop.test/a.jpg'],
      price_cents: 1,
      available: true,
      updated_at: '2026-01-01T00:00:00Z',
    };
    const cover = { url: 'https://shop.test/a.jpg', ok: true, reasons: [], checked_at: '2026-01-01T00:00:00Z' };
    const state = (approved: string[]) =>
      deriveBaseState(
        { product, removed: false, cover },
        { status: 'active', domains: ['www.shop.test', 'shop.test'], domains_approved: approved },
      ).state;
    expect(state(['shop.test'])).to.equal('accepted');
    expect(state(['www.shop.test'])).to.equal('accepted');
    expect(state([])).to.equal('pending');
    const evil = deriveBaseState(
      { product: { ...product, product_url: 'https://evilshop.test/p' }, removed: false, cover },
      { status: 'active', domains: ['shop.test'], domains_approved: ['shop.test'] },
    );
    expect(evil.reasons.map((r) => r.code)).to.deep.equal(['domain_not_approved']);
  });
});
