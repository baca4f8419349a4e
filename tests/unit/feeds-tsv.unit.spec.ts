/**
 * One line of the full feed (FEEDS.md, shared-schema/feeds/feed-offer.ts) from a given offer: the values /v1 cannot
 * send (a CR: a control character, refused there) are written as spaces too, and the money is exact in integer cents.
 */
import { expect } from 'chai';
import { TSV_COLUMNS, feedMoney, tsvLine, type FeedOffer } from '../../shared-schema/feeds/feed-offer.js';

const base: FeedOffer = {
  store: { store_id: 'Loja-A', name: 'Loja A' },
  sku: 'sku-1',
  title: 'Camiseta',
  price_cents: 199,
  original_price_cents: null,
  installments: null,
  shipping: { kind: 'to_be_calculated', cost_cents: null, delivery_days_min: null, delivery_days_max: null },
  condition: 'new',
  condition_label: null,
  rating: null,
  image_url: 'https://cdn.shop.test/1.jpg',
  offer_url: 'https://svc.test/p/x/loja-a/sku-1?canal=ch_1',
  buy_url: 'https://svc.test/r/x/loja-a/sku-1?canal=ch_1',
  updated_at: '2026-01-01T00:00:00.000Z',
  description: null,
  brand: null,
  gtin: null,
  category: null,
  id: 'abc',
};

const cells = (o: FeedOffer): Record<string, string> => {
  const line = tsvLine(o);
  expect(line.endsWith('\n')).to.equal(true);
  const values = line.slice(0, -1).split('\t');
  expect(values).to.have.length(TSV_COLUMNS.length);
  return Object.fromEntries(TSV_COLUMNS.map((c, i) => [c, values[i]]));
};

describe('the full feed line (FEEDS.md)', () => {
  it('writes a tab, CR or LF inside any value as a space', () => {
    const row = cells({
      ...base,
      title: 'a\rb\nc\td',
      description: 'x\r\ny',
      brand: 'B\rC',
      category: 'Casa\t> Cozinha',
    });
    expect(row).to.deep.include({
      title: 'a b c d',
      description: 'x  y',
      brand: 'B C',
      product_type: 'Casa > Cozinha',
    });
  });

  it('writes money as "1234.56 BRL" exactly, price and sale_price by original_price_cents, shipping by kind', () => {
    expect(feedMoney(0)).to.equal('0.00 BRL');
    expect(feedMoney(5)).to.equal('0.05 BRL');
    expect(feedMoney(123456)).to.equal('1234.56 BRL');
    expect(feedMoney(9_007_199_254_740_991)).to.equal('90071992547409.91 BRL');
    expect(cells(base)).to.deep.include({ price: '1.99 BRL', sale_price: '', shipping: '', availability: 'in_stock' });
    const sale = cells({
      ...base,
      original_price_cents: 250,
      shipping: { kind: 'fixed', cost_cents: 1234, delivery_days_min: 1, delivery_days_max: 2 },
    });
    expect(sale).to.deep.include({ price: '2.50 BRL', sale_price: '1.99 BRL', shipping: 'BR:::12.34 BRL' });
    const free = cells({
      ...base,
      shipping: { kind: 'free', cost_cents: 0, delivery_days_min: null, delivery_days_max: null },
    });
    expect(free.shipping).to.equal('BR:::0.00 BRL');
    expect(cells(base)).to.deep.include({ link: base.offer_url, image_link: base.image_url, id: 'abc' });
  });
});
