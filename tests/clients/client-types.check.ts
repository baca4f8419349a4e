/**
 * Type-level checks of the typed client, compiled by the root build (never run): each `// @ts-expect-error` line
 * must fail to compile, or the build fails. The other lines show that bodies and answers are typed, not `unknown`.
 */
import { createClient, type Answer, type RequestBody, type Schemas } from '../../clients/typescript/src/client.js';

const PRODUCT: RequestBody<'putProduct'> = {
  store_id: 'loja-1',
  title: 'Camiseta',
  product_url: 'https://shop.test/p/1',
  image_urls: ['https://shop.test/1.jpg'],
  price_cents: 2999,
  available: true,
  updated_at: '2026-03-01T10:00:00Z',
};

export async function typeChecks(): Promise<void> {
  const api = createClient({ baseUrl: 'https://api.example.test/v1', apiKey: 'ik_test_x' });

  // @ts-expect-error a fixed shipping needs cost_cents
  await api.putProduct('SKU-1', { ...PRODUCT, shipping: { type: 'fixed', delivery_days_min: 2 } });
  await api.putProduct('SKU-1', { ...PRODUCT, shipping: { type: 'fixed', cost_cents: 1500 } });
  // @ts-expect-error a free shipping has no cost_cents
  await api.patchProduct('SKU-1', { updated_at: '2026-03-01T10:00:00Z', shipping: { type: 'free', cost_cents: 0 } });
  // @ts-expect-error a patch needs updated_at
  await api.patchProduct('SKU-1', { price_cents: 100 });
  // @ts-expect-error a store needs a cnpj
  await api.putStore('loja-1', { name: 'Loja', website_url: 'https://shop.test', domains: ['shop.test'] });
  // @ts-expect-error a sandbox click takes store_id and sku only
  await api.sandboxClick({ store_id: 'loja-1', sku: 'SKU-1', price_cents: 1 });
  // @ts-expect-error a batch item needs op
  await api.submitBatch({ items: [{ sku: 'SKU-1', product: PRODUCT }] });
  // @ts-expect-error a delete carries no product
  await api.submitBatch({ items: [{ op: 'delete', sku: 'SKU-1', product: PRODUCT }] });
  // prettier-ignore
  // @ts-expect-error status is paid, refunded or cancelled (one line: the error must be on the line after this)
  await api.postConversion({ event_id: 'e', order_id: 'o', store_id: 's', click_id: 'ic_x', status: 'shipped', currency: 'BRL', paid_at: 'x', occurred_at: 'x', items: [] });
  // @ts-expect-error the order read needs store_id
  await api.getConversion('o-1', {});
  // @ts-expect-error state is a ProductState
  await api.listProducts({ state: 'live' });
  // @ts-expect-error limit is a number
  await api.listStores({ limit: '10' });

  const product = await api.getProduct('SKU-1');
  const state: Schemas['ProductState'] = product.state;
  // @ts-expect-error an answer's fields are typed
  const wrong: number = product.state;
  const job: Answer<'getJob', 200> = await api.waitForJob('job_1');
  const done: boolean =
    job.state === 'done' &&
    job.totals.received === job.totals.accepted + job.totals.rejected + job.totals.pending + (job.totals.removed ?? 0);
  const report = await api.commissionReport({ since: '2026-03-01T00:00:00Z' });
  const expected: number | null = report.totals.expected_commission_cents;
  for await (const page of api.pages.products({ state: 'rejected' })) {
    for (const p of page.data) for (const r of p.reasons ?? []) void r.code;
  }
  // @ts-expect-error deleteProduct answers nothing (204)
  const nothing: string = await api.deleteProduct('SKU-1');
  void [state, wrong, done, expected, nothing];
}
