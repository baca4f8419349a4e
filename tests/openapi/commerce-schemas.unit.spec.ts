import { expect } from 'chai';
import { bodyValidator, queryValidator } from '../../shared-schema/contract/validation.js';
import {
  BatchInput,
  CommissionReportQuery,
  ConversionEventSchema,
  GetConversionQuery,
  ListClicksQuery,
  ListConversionsQuery,
  SandboxClickInput,
} from '../../shared-schema/contract/schemas/commerce.js';
import type { FieldError } from '../../shared-schema/contract/problems.js';

const conversion = bodyValidator(ConversionEventSchema);
const sandbox = bodyValidator(SandboxClickInput);
const batch = bodyValidator(BatchInput);

/** `field code` pairs, sorted: what a partner reads in `errors`. */
const pairs = (errors: FieldError[]) => errors.map((e) => `${e.field} ${e.code}`).sort();

const item = (sku: string, extra: Record<string, unknown> = {}) => ({
  sku,
  quantity: 2,
  unit_price_cents: 25000,
  refunded_cents: 0,
  ...extra,
});
const paid = (extra: Record<string, unknown> = {}) => ({
  event_id: 'evt-9001-paid',
  order_id: '9001',
  store_id: 'loja-centro',
  click_id: 'ic_AbCdEfGhIjKlMnOpQrStUv',
  status: 'paid',
  currency: 'BRL',
  paid_at: '2026-03-02T10:00:00Z',
  occurred_at: '2026-03-02T10:00:00Z',
  items: [item('SKU-1')],
  ...extra,
});

const product = (extra: Record<string, unknown> = {}) => ({
  store_id: 'loja-centro',
  title: 'Tênis de corrida azul 42',
  product_url: 'https://www.lojacentro.com.br/p/sku-1',
  image_urls: ['https://cdn.lojacentro.com.br/sku-1.jpg'],
  price_cents: 29990,
  available: true,
  updated_at: '2026-03-01T14:30:00Z',
  ...extra,
});

describe('commerce request schemas', () => {
  describe('ConversionEvent (POST /conversions)', () => {
    it('accepts a paid event and a refund with cumulative line refunds', () => {
      expect(conversion(paid())).to.deep.equal([]);
      const refund = paid({
        event_id: 'evt-9001-r1',
        status: 'refunded',
        occurred_at: '2026-03-05T10:00:00-03:00',
        items: [item('SKU-1', { refunded_cents: 25000 })],
      });
      expect(conversion(refund)).to.deep.equal([]);
    });

    it('names the line and the bound: items[3].unit_price_cents above 1e9 is maximum', () => {
      const items = [item('A'), item('B'), item('C'), item('D', { unit_price_cents: 1_000_000_001 })];
      expect(pairs(conversion(paid({ items })))).to.deep.equal(['items[3].unit_price_cents maximum']);
    });

    it('refuses every bound of an item at once', () => {
      const items = [
        item('A', { quantity: 0 }),
        item('B', { quantity: 10001 }),
        item('C', { refunded_cents: 1_000_000_000_001 }),
        item('D', { unit_price_cents: -1, quantity: 1.5 }),
        item('bad sku'),
        { sku: 'E', quantity: 1 },
      ];
      expect(pairs(conversion(paid({ items })))).to.deep.equal([
        'items[0].quantity minimum',
        'items[1].quantity maximum',
        'items[2].refunded_cents maximum',
        'items[3].quantity integer',
        'items[3].unit_price_cents minimum',
        'items[4].sku pattern',
        'items[5].refunded_cents required',
        'items[5].unit_price_cents required',
      ]);
    });

    it('refuses fields outside the contract (buyer data) with unknown_field, in the body and in items', () => {
      const body = paid({ buyer_email: 'a@b.c', items: [item('A', { name: 'x' })] });
      expect(pairs(conversion(body))).to.deep.equal(['buyer_email unknown_field', 'items[0].name unknown_field']);
    });

    it('refuses a bad click id, status, currency and dates, and names each field', () => {
      const body = paid({
        click_id: 'ic_short',
        status: 'shipped',
        currency: 'USD',
        paid_at: 'yesterday',
        occurred_at: 5,
      });
      expect(pairs(conversion(body))).to.deep.equal([
        'click_id pattern',
        'currency enum',
        'occurred_at string',
        'paid_at date_time',
        'status enum',
      ]);
    });

    it('lists every missing field, and bounds the number of items to 1..200', () => {
      expect(pairs(conversion({}))).to.deep.equal(
        ['click_id', 'currency', 'event_id', 'items', 'occurred_at', 'order_id', 'paid_at', 'status', 'store_id'].map(
          (f) => `${f} required`,
        ),
      );
      expect(pairs(conversion(paid({ items: [] })))).to.deep.equal(['items min_items']);
      const many = Array.from({ length: 201 }, (_, i) => item(`S${i}`));
      expect(pairs(conversion(paid({ items: many })))).to.deep.equal(['items max_items']);
      expect(conversion(paid({ items: many.slice(0, 200) }))).to.deep.equal([]);
    });
  });

  describe('SandboxClickInput (POST /sandbox/clicks)', () => {
    it('accepts store_id and sku, and nothing else', () => {
      expect(sandbox({ store_id: 'loja-centro', sku: 'SKU-1' })).to.deep.equal([]);
      expect(pairs(sandbox({ store_id: 'loja-centro', price_cents: 1 }))).to.deep.equal([
        'price_cents unknown_field',
        'sku required',
      ]);
    });
  });

  describe('BatchInput (POST /products/batch)', () => {
    it('accepts upserts and deletes', () => {
      const body = {
        items: [
          { op: 'upsert', sku: 'SKU-1', product: product() },
          { op: 'delete', sku: 'SKU-OLD' },
        ],
      };
      expect(batch(body)).to.deep.equal([]);
    });

    it('reports only the fields of the form each element chose', () => {
      const body = {
        items: [
          { op: 'delete', sku: 'SKU-1', product: product() },
          { op: 'upsert', sku: 'SKU-2' },
          { op: 'merge', sku: 'SKU-3' },
          { sku: 'SKU-4' },
          { op: 'upsert', sku: 'SKU-5', product: product({ title: 'abc', price_cents: 0, color: 'blue' }) },
          { op: 'delete', sku: 'bad sku' },
        ],
      };
      expect(pairs(batch(body))).to.deep.equal([
        'items[0].product unknown_field',
        'items[1].product required',
        'items[2].op enum',
        'items[3].op required',
        'items[4].product.color unknown_field',
        'items[4].product.price_cents minimum',
        'items[4].product.title min_length',
        'items[5].sku pattern',
      ]);
    });

    it('bounds items to 1..1000 and refuses unknown top-level fields', () => {
      expect(pairs(batch({ items: [] }))).to.deep.equal(['items min_items']);
      const many = Array.from({ length: 1001 }, (_, i) => ({ op: 'delete', sku: `S${i}` }));
      expect(pairs(batch({ items: many }))).to.deep.equal(['items max_items']);
      expect(batch({ items: many.slice(0, 1000) })).to.deep.equal([]);
      expect(pairs(batch({ items: [{ op: 'delete', sku: 'A' }], dry_run: true }))).to.deep.equal([
        'dry_run unknown_field',
      ]);
    });
  });

  describe('query schemas', () => {
    it('GET /clicks and GET /conversions: window, store, cursor and a coerced limit', () => {
      for (const schema of [ListClicksQuery, ListConversionsQuery]) {
        const v = queryValidator(schema);
        const ok: Record<string, unknown> = {
          since: '2026-03-01T00:00:00Z',
          until: '2026-03-31T00:00:00Z',
          store_id: 'loja-centro',
          cursor: 'abc',
          limit: '20',
        };
        expect(v(ok)).to.deep.equal([]);
        expect(ok.limit).to.equal(20);
        expect(pairs(v({ since: 'yesterday', limit: '500', store_id: 'a b', page: '2' }))).to.deep.equal([
          'limit maximum',
          'page unknown_field',
          'since date_time',
          'store_id pattern',
        ]);
        expect(pairs(v({ limit: '0' }))).to.deep.equal(['limit minimum']);
      }
    });

    it('GET /conversions/{order_id} requires store_id', () => {
      const v = queryValidator(GetConversionQuery);
      expect(v({ store_id: 'loja-centro' })).to.deep.equal([]);
      expect(pairs(v({}))).to.deep.equal(['store_id required']);
      expect(pairs(v({ store_id: 'loja-centro', since: '2026-03-01T00:00:00Z' }))).to.deep.equal([
        'since unknown_field',
      ]);
    });

    it('GET /reports/commission takes no cursor or limit', () => {
      const v = queryValidator(CommissionReportQuery);
      expect(
        v({ since: '2026-03-01T00:00:00Z', until: '2026-03-31T00:00:00Z', store_id: 'loja-centro' }),
      ).to.deep.equal([]);
      expect(pairs(v({ cursor: 'abc', limit: '10' }))).to.deep.equal(['cursor unknown_field', 'limit unknown_field']);
    });
  });
});
