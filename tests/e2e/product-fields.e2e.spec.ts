import { expect } from 'chai';
import { productBody, startTestService, storeBody, type Partner, type TestService } from '../support/service.js';
import { expectInvalid, fieldCodes, productEvents } from '../support/e2e.js';

const MAX_SAFE = 9007199254740991;
const s = (n: number, c = 'a') => c.repeat(n);
const map = (keys: number, valueLength = 1) =>
  Object.fromEntries(Array.from({ length: keys }, (_, i) => [`k${i}`, s(valueLength)]));
const url = (n: number) => `https://shop.test/${s(n - 'https://shop.test/'.length)}`;
const images = (n: number) => Array.from({ length: n }, (_, i) => `https://cdn.shop.test/${i}.jpg`);

/** [what, overrides of a valid Product input, expected `field:code` list ([] = accepted)]. */
const PRODUCT_CASES: [string, Record<string, unknown>, string[]][] = [
  ['store_id with a space', { store_id: 'a b' }, ['store_id:pattern']],
  ['store_id of 81 characters', { store_id: s(81) }, ['store_id:pattern']],
  ['title of 4', { title: s(4) }, ['title:min_length']],
  ['title of 5', { title: s(5) }, []],
  ['title of 200', { title: s(200) }, []],
  ['title of 201', { title: s(201) }, ['title:max_length']],
  ['description of 5000', { description: s(5000) }, []],
  ['description of 5001', { description: s(5001) }, ['description:max_length']],
  ['brand of 80', { brand: s(80) }, []],
  ['brand of 81', { brand: s(81) }, ['brand:max_length']],
  ['model of 81', { model: s(81) }, ['model:max_length']],
  ['gtin of 8, 12, 13, 14 digits', { gtin: '12345678' }, []],
  ['gtin of 12', { gtin: '123456789012' }, []],
  ['gtin of 14', { gtin: '12345678901234' }, []],
  ['gtin of 7', { gtin: '1234567' }, ['gtin:pattern']],
  ['gtin of 9', { gtin: '123456789' }, ['gtin:pattern']],
  ['gtin of 15', { gtin: '123456789012345' }, ['gtin:pattern']],
  ['gtin with a letter', { gtin: '1234567a' }, ['gtin:pattern']],
  ['category of 200', { category: s(200) }, []],
  ['category of 201', { category: s(201) }, ['category:max_length']],
  ['attributes of 50 keys × 200', { attributes: map(50, 200) }, []],
  ['attributes of 51 keys', { attributes: map(51) }, ['attributes:max_properties']],
  ['attribute value of 201', { attributes: { cor: s(201) } }, ['attributes.cor:max_length']],
  ['attribute value not a string', { attributes: { peso: 3 } }, ['attributes.peso:string']],
  [
    'attribute value of 201 under a key of digits',
    { attributes: { '2024': s(201) } },
    ['attributes["2024"]:max_length'],
  ],
  // Map keys: 1 to 80 characters, no control character; each bad key on its own path, JSON-quoted.
  [
    'attribute key with NUL',
    { attributes: { 'a\u0000b': 'x', cor: 'azul' } },
    ['attributes["a\\u0000b"]:key_control_character'],
  ],
  ['attribute key of 80', { attributes: { [s(80, 'k')]: 'x' } }, []],
  ['attribute key of 81', { attributes: { [s(81, 'k')]: 'x' } }, [`attributes.${s(81, 'k')}:key_too_long`]],
  ['attribute key empty', { attributes: { '': 'x' } }, ['attributes[""]:key_empty']],
  [
    'every bad attribute key at once',
    {
      attributes: {
        'a\u0000b': 'x',
        'tab\tname': 'x',
        'del\u007f': 'x',
        'line\nbreak': 'x',
        [s(81, 'k')]: 'x',
        '': 'x',
        [`${s(81, 'z')}\u001f`]: 'x',
        ok: 'x',
      },
    },
    [
      'attributes["a\\u0000b"]:key_control_character',
      'attributes["tab\\tname"]:key_control_character',
      'attributes["del\\u007f"]:key_control_character',
      'attributes["line\\nbreak"]:key_control_character',
      `attributes.${s(81, 'k')}:key_too_long`,
      'attributes[""]:key_empty',
      `attributes["${s(81, 'z')}\\u001f"]:key_control_character`,
      `attributes["${s(81, 'z')}\\u001f"]:key_too_long`,
    ],
  ],
  [
    'variant key with U+001F',
    { variant_attributes: { 'tam\u001f': 'P' } },
    ['variant_attributes["tam\\u001f"]:key_control_character'],
  ],
  [
    'variant key of 81',
    { variant_attributes: { [s(81, 'v')]: 'P' } },
    [`variant_attributes.${s(81, 'v')}:key_too_long`],
  ],
  // Text a shopper sees: no control character (a description takes tab and newline), no bidirectional override
  // or isolate; keys follow the same character rule.
  ['title with NUL', { title: 'Camiseta\u0000azul' }, ['title:control_character']],
  ['title with a newline', { title: 'Camiseta\nazul' }, ['title:control_character']],
  ['title with a right-to-left override', { title: 'Camiseta \u202elupa' }, ['title:control_character']],
  ['title with a pop directional isolate', { title: 'Camiseta \u2069azul' }, ['title:control_character']],
  ['title with zero-width marks (U+200B to U+200F)', { title: 'Cami\u200bseta \u200c\u200d\u200e\u200f' }, []],
  ['title with an emoji sequence (ZWJ)', { title: 'Camiseta \u{1F469}\u200d\u{1F4BB} azul' }, []],
  ['description with tab and newline', { description: 'Linha 1\n\tLinha 2\n' }, []],
  ['description with a carriage return', { description: 'Linha 1\r\nLinha 2' }, ['description:control_character']],
  ['description with a vertical tab', { description: 'a\u000bb' }, ['description:control_character']],
  ['description with a C1 control (U+0085)', { description: 'a\u0085b' }, ['description:control_character']],
  ['description with a left-to-right isolate', { description: 'a\u2066b' }, ['description:control_character']],
  ['brand with DEL', { brand: 'Marca\u007f' }, ['brand:control_character']],
  ['model with U+009F', { model: 'X\u009f1' }, ['model:control_character']],
  ['category with U+001F', { category: 'Casa \u001f Cozinha' }, ['category:control_character']],
  ['attribute value with a tab', { attributes: { cor: 'azul\tescuro' } }, ['attributes.cor:control_character']],
  ['attribute value with U+202B', { attributes: { 'a.b': '\u202bx' } }, ['attributes["a.b"]:control_character']],
  [
    'variant value with U+202D',
    { variant_attributes: { tam: 'P\u202d' } },
    ['variant_attributes.tam:control_character'],
  ],
  // …and the path that names such a key spells the character out, so the answer cannot be reordered either.
  [
    'attribute key with a bidi override',
    { attributes: { 'cor\u202e': 'x' } },
    ['attributes["cor\\u202e"]:key_control_character'],
  ],
  [
    'attribute key with a C1 control',
    { attributes: { 'cor\u0080': 'x' } },
    ['attributes["cor\\u0080"]:key_control_character'],
  ],
  [
    'every text field with a control character at once',
    {
      title: 'Camiseta \u202e',
      description: 'ok\n\u0000',
      brand: '\u0007',
      model: '\u2068',
      category: '\u0085',
      attributes: { cor: '\u0001', ok: 'azul' },
      variant_attributes: { tam: '\u2067' },
    },
    [
      'title:control_character',
      'description:control_character',
      'brand:control_character',
      'model:control_character',
      'category:control_character',
      'attributes.cor:control_character',
      'variant_attributes.tam:control_character',
    ],
  ],
  [
    'attribute keys that document stores treat specially are data',
    {
      attributes: {
        $where: '1',
        'a.b': '2',
        ['__proto__']: '3',
        _bsontype: 'ObjectId',
        '%24': '4',
        'Memória RAM': '8 GB',
      },
      variant_attributes: { $size: 'M', '.': 'x' },
    },
    [],
  ],
  // Lone surrogates: refused in every string and key of a body.
  ['title with a lone surrogate', { title: 'Camiseta \ud800 azul' }, ['title:unicode']],
  ['title with a surrogate pair (emoji)', { title: 'Camiseta \u{1F600} azul' }, []],
  ['attribute value with a lone low surrogate', { attributes: { cor: '\udc00' } }, ['attributes.cor:unicode']],
  ['attribute key with a lone surrogate', { attributes: { 'a\ud800': 'x' } }, ['attributes["a\\ud800"]:unicode']],
  [
    'unknown field with a lone surrogate in its name and value',
    { 'x\udfff': '\ud800' },
    ['["x\\udfff"]:unicode', '["x\\udfff"]:unknown_field'],
  ],
  ['condition used', { condition: 'used' }, []],
  ['condition refurbished', { condition: 'refurbished' }, []],
  ['condition broken', { condition: 'broken' }, ['condition:enum']],
  ['group_id with a slash', { group_id: 'a/b' }, ['group_id:pattern']],
  ['variant_attributes of 5 keys × 40', { variant_attributes: map(5, 40) }, []],
  ['variant_attributes of 6 keys', { variant_attributes: map(6) }, ['variant_attributes:max_properties']],
  ['variant value of 41', { variant_attributes: { tam: s(41) } }, ['variant_attributes.tam:max_length']],
  ['product_url over http', { product_url: 'http://shop.test/p' }, ['product_url:https']],
  ['product_url of 2048', { product_url: url(2048) }, []],
  ['product_url of 2049', { product_url: url(2049) }, ['product_url:max_length']],
  ['image_urls empty', { image_urls: [] }, ['image_urls:min_items']],
  ['image_urls of 10', { image_urls: images(10) }, []],
  ['image_urls of 11', { image_urls: images(11) }, ['image_urls:max_items']],
  ['image_urls[2] over http', { image_urls: [...images(2), 'http://cdn.shop.test/x.jpg'] }, ['image_urls[2]:https']],
  ['price_cents 0', { price_cents: 0 }, ['price_cents:minimum']],
  ['price_cents 1', { price_cents: 1 }, []],
  ['price_cents fraction', { price_cents: 1.5 }, ['price_cents:integer']],
  ['price_cents text', { price_cents: '100' }, ['price_cents:integer']],
  ['price_cents above 2^53 - 1', { price_cents: MAX_SAFE + 1 }, ['price_cents:maximum']],
  ['price_cents at 2^53 - 1', { price_cents: MAX_SAFE }, []],
  ['original_price_cents 0', { original_price_cents: 0 }, ['original_price_cents:minimum']],
  ['available text', { available: 'yes' }, ['available:boolean']],
  ['stock_quantity -1', { stock_quantity: -1 }, ['stock_quantity:minimum']],
  ['stock_quantity 0', { stock_quantity: 0 }, []],
  [
    'shipping free, all fields 0',
    { shipping: { type: 'free', min_order_cents: 0, delivery_days_min: 0, delivery_days_max: 0 } },
    [],
  ],
  ['shipping fixed', { shipping: { type: 'fixed', cost_cents: 0 } }, []],
  ['shipping type express', { shipping: { type: 'express' } }, ['shipping.type:enum']],
  ['shipping without type', { shipping: {} }, ['shipping.type:required']],
  ['shipping fixed without cost', { shipping: { type: 'fixed' } }, ['shipping.cost_cents:required']],
  ['shipping fixed cost -1', { shipping: { type: 'fixed', cost_cents: -1 } }, ['shipping.cost_cents:minimum']],
  [
    'shipping free min_order -1',
    { shipping: { type: 'free', min_order_cents: -1 } },
    ['shipping.min_order_cents:minimum'],
  ],
  [
    'shipping delivery days -1',
    { shipping: { type: 'free', delivery_days_min: -1, delivery_days_max: -1 } },
    ['shipping.delivery_days_max:minimum', 'shipping.delivery_days_min:minimum'],
  ],
  [
    'shipping free with cost_cents',
    { shipping: { type: 'free', cost_cents: 1 } },
    ['shipping.cost_cents:unknown_field'],
  ],
  ['installments count 2 and 24', { installments: { count: 24, value_cents: 1, interest_free: false } }, []],
  [
    'installments count 1',
    { installments: { count: 1, value_cents: 100, interest_free: true } },
    ['installments.count:minimum'],
  ],
  [
    'installments count 25',
    { installments: { count: 25, value_cents: 100, interest_free: true } },
    ['installments.count:maximum'],
  ],
  [
    'installments value 0',
    { installments: { count: 2, value_cents: 0, interest_free: true } },
    ['installments.value_cents:minimum'],
  ],
  [
    'installments missing interest_free',
    { installments: { count: 2, value_cents: 100 } },
    ['installments.interest_free:required'],
  ],
  [
    'installments interest_free text',
    { installments: { count: 2, value_cents: 100, interest_free: 'no' } },
    ['installments.interest_free:boolean'],
  ],
  ['rating 0 and 5', { rating: { average: 5, count: 1 } }, []],
  ['rating average 5.1', { rating: { average: 5.1, count: 1 } }, ['rating.average:maximum']],
  ['rating average -0.1', { rating: { average: -0.1, count: 1 } }, ['rating.average:minimum']],
  ['rating count 0', { rating: { average: 4, count: 0 } }, ['rating.count:minimum']],
  ['rating without count', { rating: { average: 4 } }, ['rating.count:required']],
  ['updated_at not a date', { updated_at: 'yesterday' }, ['updated_at:date_time']],
  ['updated_at without a time zone', { updated_at: '2026-01-01T00:00:00' }, ['updated_at:date_time']],
  ['updated_at with an offset', { updated_at: '2026-01-01T00:00:00-03:00' }, []],
  ['commission percentage 0', { commission: { type: 'percentage', rate: 0 } }, []],
  ['commission percentage 100', { commission: { type: 'percentage', rate: 100 } }, []],
  [
    'commission percentage 0.07 (a multiple of 0.01 in decimal)',
    { commission: { type: 'percentage', rate: 0.07 } },
    [],
  ],
  ['commission percentage 12.57', { commission: { type: 'percentage', rate: 12.57 } }, []],
  ['commission percentage 1.15', { commission: { type: 'percentage', rate: 1.15 } }, []],
  ['commission percentage 100.01', { commission: { type: 'percentage', rate: 100.01 } }, ['commission.rate:maximum']],
  ['commission percentage -0.01', { commission: { type: 'percentage', rate: -0.01 } }, ['commission.rate:minimum']],
  [
    'commission percentage 12.345',
    { commission: { type: 'percentage', rate: 12.345 } },
    ['commission.rate:multiple_of'],
  ],
  ['commission percentage without rate', { commission: { type: 'percentage' } }, ['commission.rate:required']],
  [
    'commission percentage with amount_cents',
    { commission: { type: 'percentage', rate: 1, amount_cents: 1 } },
    ['commission.amount_cents:unknown_field'],
  ],
  ['commission fixed 0 and 2^53 - 1', { commission: { type: 'fixed', amount_cents: MAX_SAFE } }, []],
  ['commission fixed -1', { commission: { type: 'fixed', amount_cents: -1 } }, ['commission.amount_cents:minimum']],
  [
    'commission fixed fraction',
    { commission: { type: 'fixed', amount_cents: 1.5 } },
    ['commission.amount_cents:integer'],
  ],
  [
    'commission fixed above 2^53 - 1',
    { commission: { type: 'fixed', amount_cents: MAX_SAFE + 2 } },
    ['commission.amount_cents:maximum'],
  ],
  ['commission of another type', { commission: { type: 'tiered' } }, ['commission.type:enum']],
  ['commission without type', { commission: {} }, ['commission.type:required']],
  ['commission null', { commission: null }, []],
  ['commission a string', { commission: 'percentage' }, ['commission:object']],
  ['unknown field', { colour: 'blue' }, ['colour:unknown_field']],
];

/** [what, PATCH body, expected `field:code` list]. */
const PATCH_CASES: [string, Record<string, unknown>, string[]][] = [
  ['only updated_at', { updated_at: '2026-01-01T05:00:00Z' }, [':min_properties']],
  ['no updated_at', { price_cents: 10 }, [':min_properties', 'updated_at:required']],
  ['no updated_at, two other fields', { price_cents: 10, available: true }, ['updated_at:required']],
  ['empty', {}, [':min_properties', 'updated_at:required']],
  ['price_cents 0', { price_cents: 0 }, ['price_cents:minimum']],
  ['price_cents fraction', { price_cents: 2.5 }, ['price_cents:integer']],
  ['original_price_cents 0', { original_price_cents: 0 }, ['original_price_cents:minimum']],
  ['original_price_cents text', { original_price_cents: '10' }, ['original_price_cents:integer']],
  ['available text', { available: 1 }, ['available:boolean']],
  ['stock_quantity -1', { stock_quantity: -1 }, ['stock_quantity:minimum']],
  ['shipping fixed without cost', { shipping: { type: 'fixed' } }, ['shipping.cost_cents:required']],
  ['commission rate 101', { commission: { type: 'percentage', rate: 101 } }, ['commission.rate:maximum']],
  // A PATCH carries no text a shopper sees: a title is refused as a field, whatever it holds.
  ['title with a control character', { title: 'Camiseta\u0000' }, ['title:unknown_field']],
  ['a field PATCH does not take (title)', { title: 'Novo título' }, ['title:unknown_field']],
  ['a field PATCH does not take (store_id)', { store_id: 'loja' }, ['store_id:unknown_field']],
  ['updated_at not a date', { price_cents: 10, updated_at: '01/01/2026' }, ['updated_at:date_time']],
];

describe('product fields: every bound of Product input and Product patch (HTTP)', function () {
  let t: TestService;
  let hub: Partner;

  before(async () => {
    t = await startTestService();
    t.clock.set(new Date('2026-01-02T00:00:00Z'));
    hub = await t.partner();
    expect((await hub.api.put('/stores/loja', storeBody())).status).to.equal(200);
    expect((await hub.api.put(`/stores/${s(80, 'l')}`, storeBody())).status).to.equal(200); // the longest store_id
  });
  after(async () => t.close());

  it('takes a store_id of 80 characters', async () => {
    expect((await hub.api.put('/products/long-store', productBody(s(80, 'l')))).status).to.equal(200);
  });

  PRODUCT_CASES.forEach(([what, overrides, expected], i) => {
    it(`PUT: ${what} → ${expected.length ? expected.join(', ') : '200'}`, async () => {
      const sku = `f-${i}`;
      const r = await hub.api.put(`/products/${sku}`, productBody('loja', overrides));
      if (expected.length === 0) {
        expect(r.status, JSON.stringify(r.body)).to.equal(200);
      } else {
        expectInvalid(r, expected);
        expect(await productEvents(t, hub, sku)).to.deep.equal([]);
      }
    });
  });

  it('PUT: lists every missing required field at once', async () => {
    expectInvalid(await hub.api.put('/products/empty', {}), [
      'available:required',
      'image_urls:required',
      'price_cents:required',
      'product_url:required',
      'store_id:required',
      'title:required',
      'updated_at:required',
    ]);
  });

  it('PUT: lists several invalid fields at once, with the store rules left for later', async () => {
    const r = await hub.api.put(
      '/products/many',
      productBody('none', { title: 'abc', price_cents: 0, gtin: 'x', rating: { average: 9 } }),
    );
    expect(fieldCodes(r)).to.deep.equal([
      'gtin:pattern',
      'price_cents:minimum',
      'rating.average:maximum',
      'rating.count:required',
      'title:min_length',
    ]);
  });

  it('path: a SKU or store_id outside ExternalId is 422 pattern on the path parameter, and nothing is written', async () => {
    expectInvalid(await hub.api.put(`/products/${s(81)}`, productBody('loja')), ['sku:pattern']);
    expectInvalid(await hub.api.put('/products/a%20b', productBody('loja')), ['sku:pattern']);
    expectInvalid(await hub.api.patch('/products/a%2Fb', { price_cents: 5, updated_at: '2026-01-01T00:00:00Z' }), [
      'sku:pattern',
    ]);
    expectInvalid(await hub.api.delete('/products/%C3%A7'), ['sku:pattern']);
    expectInvalid(await hub.api.get(`/products/${s(81)}`), ['sku:pattern']);
    expectInvalid(await hub.api.put('/stores/a%20b', storeBody()), ['store_id:pattern']);
    expectInvalid(await hub.api.get('/stores/a%20b?x=1'), ['store_id:pattern', 'x:unknown_field']);
    expect(await productEvents(t, hub, s(81))).to.deep.equal([]);
    expect(await productEvents(t, hub, 'a b')).to.deep.equal([]);
  });

  it('map keys such as "$where", "a.b", "__proto__", "_bsontype" are kept exactly: in the event and in the read model', async () => {
    const body = JSON.parse(
      '{"attributes":{"$where":"1","a.b":"2","__proto__":"3","_bsontype":"ObjectId","%24":"4","$ref":"5","2024":"ano","Memória RAM":"8 GB"},' +
        '"variant_attributes":{"$size":"M","tam.br":"P"}}',
    ) as Record<string, unknown>;
    const text = (v: unknown) => JSON.stringify(v);
    const r = await hub.api.put('/products/odd-keys', productBody('loja', body));
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    const [event] = await productEvents(t, hub, 'odd-keys');
    expect(text(event.data.product.attributes)).to.equal(text(body.attributes));
    expect(text(event.data.product.variant_attributes)).to.equal(text(body.variant_attributes));
    expect(await t.service.runner.waitFor(await t.service.events.headPosition(), 60_000)).to.equal(true);
    const doc = await t.service.reads.get<{ _id: string; product: Record<string, unknown> }>(
      'products',
      `live:${hub.partnerId}:odd-keys`,
    );
    expect(text(doc!.product.attributes)).to.equal(text(body.attributes));
    expect(text(doc!.product.variant_attributes)).to.equal(text(body.variant_attributes));
    expect(Object.prototype.hasOwnProperty.call(doc!.product.attributes, '__proto__')).to.equal(true);
    expect((await hub.api.get('/products/odd-keys')).status).to.equal(200);
  });

  it("batch: a bad key and a lone surrogate of an item are listed once each, on the item's path", async () => {
    const r = await hub.api.post('/products/batch', {
      items: [
        { op: 'upsert', sku: 'b-ok', product: productBody('loja') },
        {
          op: 'upsert',
          sku: 'b-bad',
          product: productBody('loja', { title: 'Camiseta \ud800', attributes: { 'a.b': 'ok', 'a\u0000b': 'x' } }),
        },
        { op: 'delete', sku: 'b-del\udc00' },
      ],
    });
    expectInvalid(r, [
      'items[1].product.title:unicode',
      'items[1].product.attributes["a\\u0000b"]:key_control_character',
      'items[2].sku:unicode',
      'items[2].sku:pattern',
    ]);
  });

  it('admin bodies refuse a lone surrogate too (a partner name reaches the read models)', async () => {
    expectInvalid(await t.admin.post('/partners', { name: 'Loja \ud800', partner_type: 'hub' }), ['name:unicode']);
  });

  describe('PATCH', () => {
    before(async () => {
      expect((await hub.api.put('/products/pt', productBody('loja', { price_cents: 1000 }))).status).to.equal(200);
    });

    PATCH_CASES.forEach(([what, body, expected]) => {
      it(`PATCH: ${what} → ${expected.join(', ')}`, async () => {
        const full =
          'updated_at' in body || what.startsWith('no updated_at') || what === 'empty'
            ? body
            : { ...body, updated_at: '2026-01-01T05:00:00Z' };
        expectInvalid(await hub.api.patch('/products/pt', full), expected);
      });
    });

    it('PATCH: takes original_price_cents null, stock 0, each shipping form, commission null', async () => {
      for (const body of [
        { original_price_cents: null },
        { stock_quantity: 0 },
        { shipping: { type: 'free' } },
        { shipping: { type: 'fixed', cost_cents: 990, delivery_days_min: 1, delivery_days_max: 3 } },
        { commission: null },
        { available: false },
      ]) {
        const r = await hub.api.patch('/products/pt', { ...body, updated_at: '2026-01-01T06:00:00Z' });
        expect(r.status, `${JSON.stringify(body)} ${JSON.stringify(r.body)}`).to.equal(200);
      }
    });
  });
});
