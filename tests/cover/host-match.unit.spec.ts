import { expect } from 'chai';
import { hostMatchesDomains, normalizeHost } from '../../shared-schema/host-match.js';

describe('hostMatchesDomains ("on a domain of the store")', () => {
  const store = ['shop.com.br', 'cdn-fotos.net'];

  it('accepts a listed domain and any subdomain of it', () => {
    for (const host of ['shop.com.br', 'www.shop.com.br', 'img.static.shop.com.br', 'cdn-fotos.net', 'a.cdn-fotos.net']) {
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
});
