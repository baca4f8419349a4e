import { expect } from 'chai';
import { esc, local, money, pageLinks, shippingLabel } from '../../shared-schema/html/shopper.js';
import type { OfferView } from '../../shared-schema/shopper/search-view.js';

describe('shopper pages: escaping, money, shipping words, links', () => {
  it('escapes the five characters that matter in elements and double-quoted attributes', () => {
    expect(esc(`<a href="x" title='y'>&amp;</a>`)).to.equal(
      '&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;amp;&lt;/a&gt;',
    );
    expect(esc('Café Açaí ✓')).to.equal('Café Açaí ✓');
  });

  it('writes money as R$ with a comma and thousands dots', () => {
    const table: [number, string][] = [
      [0, 'R$ 0,00'],
      [5, 'R$ 0,05'],
      [29990, 'R$ 299,90'],
      [100000, 'R$ 1.000,00'],
      [123456789, 'R$ 1.234.567,89'],
    ];
    for (const [cents, text] of table) expect(money(cents), String(cents)).to.equal(text);
  });

  it('names shipping as sent: "Frete a calcular" when none was sent, "Frete grátis" only for free, else the cost; with the days', () => {
    const o = (shipping: OfferView['shipping']) => ({ shipping }) as OfferView;
    expect(
      shippingLabel(
        o({ kind: 'to_be_calculated', cost_cents: null, delivery_days_min: null, delivery_days_max: null }),
      ),
    ).to.equal('Frete a calcular');
    expect(shippingLabel(o({ kind: 'free', cost_cents: 0, delivery_days_min: null, delivery_days_max: 1 }))).to.equal(
      'Frete grátis · entrega em até 1 dia',
    );
    expect(shippingLabel(o({ kind: 'fixed', cost_cents: 1990, delivery_days_min: 2, delivery_days_max: 4 }))).to.equal(
      'Frete R$ 19,90 · entrega em 2 a 4 dias',
    );
    expect(shippingLabel(o({ kind: 'fixed', cost_cents: 0, delivery_days_min: 3, delivery_days_max: null }))).to.equal(
      'Frete R$ 0,00 · entrega em até 3 dias',
    );
  });

  it('links between pages are root-relative, under the path of the public base', () => {
    expect(pageLinks('https://svc.example').root).to.equal('');
    expect(pageLinks('https://svc.example/ofertas/').root).to.equal('/ofertas');
    expect(local('https://svc.example/ofertas/r/pt_a/loja-a/sku%201?x=1#y')).to.equal(
      '/ofertas/r/pt_a/loja-a/sku%201?x=1#y',
    );
  });
});
