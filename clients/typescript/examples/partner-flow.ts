/**
 * The whole partner flow with the typed client, on a test key: a store, a product and a price change, a batch and
 * its job, a sandbox click, the paid order it brought, a partial refund, and the commission report.
 *
 *   SERVICE_URL=http://127.0.0.1:8080 API_KEY=ik_test_… node dist/clients/typescript/examples/partner-flow.js
 *
 * The service is SERVICE_URL (default http://127.0.0.1:$PORT, PORT default 8080), the partner API $SERVICE_URL/v1:
 * the convention of every tool of the repository (docs/adr/0064-one-address-convention.md).
 *
 * Every run uses new ids (store, CNPJ, order), so it can be repeated on the same data. Products stay `pending` until
 * the operator approves the store and the cover check passes; a sandbox click needs neither.
 */
import { pathToFileURL } from 'node:url';
import { createClient, ProblemError, type PartnerClient, type RequestBody } from '../src/client.js';

export interface FlowOptions {
  /** The store's domain: product pages and covers are on it (default `loja.example`). */
  domain?: string;
  /** Appended to the ids of this run (default: from the time). */
  run?: string;
  /** One line per step (default: nothing). */
  log?: (line: string) => void;
}

export interface FlowResult {
  storeId: string;
  orderId: string;
  job: Awaited<ReturnType<PartnerClient['waitForJob']>>;
  products: number;
  click: Awaited<ReturnType<PartnerClient['sandboxClick']>>;
  paid: Awaited<ReturnType<PartnerClient['postConversion']>>;
  refunded: Awaited<ReturnType<PartnerClient['postConversion']>>;
  order: Awaited<ReturnType<PartnerClient['getConversion']>>;
  clicks: number;
  report: Awaited<ReturnType<PartnerClient['commissionReport']>>;
}

/** A CNPJ with valid check digits (modulo 11), from 8 random digits and branch 0001. */
export function randomCnpj(random: () => number = Math.random): string {
  const digits = [...Array.from({ length: 8 }, () => Math.floor(random() * 10)), 0, 0, 0, 1];
  for (const weights of [
    [5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2],
    [6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2],
  ]) {
    const r = weights.reduce((sum, w, i) => sum + w * digits[i]!, 0) % 11;
    digits.push(r < 2 ? 0 : 11 - r);
  }
  return digits.join('');
}

const plusSeconds = (at: string, s: number): string => new Date(Date.parse(at) + s * 1000).toISOString();

export async function partnerFlow(api: PartnerClient, options: FlowOptions = {}): Promise<FlowResult> {
  const log = options.log ?? (() => undefined);
  const domain = options.domain ?? 'loja.example';
  const run = options.run ?? Date.now().toString(36);
  const storeId = `loja-${run}`;
  const orderId = `pedido-${run}`;
  const sku = (n: number): string => `camiseta-${run}-${n}`; // a SKU is unique across the partner's stores

  const me = await api.me();
  log(`key of ${me.partner_id} (${me.partner_type}, ${me.environment})`);
  if (me.environment !== 'test') throw new Error('the example needs a test key (ik_test_…): it makes a sandbox click');

  const store = await api.putStore(storeId, {
    name: 'Loja Azul',
    cnpj: randomCnpj(),
    website_url: `https://${domain}`,
    domains: [domain],
    default_commission: { type: 'percentage', rate: 5 },
  });
  log(`store ${store.store_id}: ${store.status}`);

  const sentAt = new Date().toISOString();
  const product = (sku: string, priceCents: number): RequestBody<'putProduct'> => ({
    store_id: storeId,
    title: `Camiseta ${sku}`,
    product_url: `https://${domain}/p/${sku}`,
    image_urls: [`https://${domain}/img/${sku}.jpg`],
    price_cents: priceCents,
    available: true,
    shipping: { type: 'fixed', cost_cents: 1500, delivery_days_min: 2, delivery_days_max: 5 },
    commission: { type: 'percentage', rate: 12.5 },
    updated_at: sentAt,
  });
  const put = await api.putProduct(sku(1), product(sku(1), 2999));
  log(`product ${put.sku}: ${put.state}`);
  const patched = await api.patchProduct(sku(1), { price_cents: 2799, updated_at: plusSeconds(sentAt, 1) });
  log(`product ${patched.sku}: price changed, ${patched.state}`);

  const queued = await api.submitBatch({
    items: [
      { op: 'upsert', sku: sku(2), product: product(sku(2), 4990) },
      { op: 'upsert', sku: sku(3), product: { ...product(sku(3), 8990), shipping: { type: 'free' } } },
      { op: 'delete', sku: sku(0) }, // removed, or already absent
    ],
  });
  const job = await api.waitForJob(queued.job_id, { intervalMs: 200 });
  log(`batch ${job.job_id}: ${job.state} ${JSON.stringify(job.totals)}`);

  let products = 0;
  for await (const page of api.pages.products({ store_id: storeId, limit: 2 })) products += page.data.length;
  log(`${products} products in the store`);

  const click = await api.sandboxClick({ store_id: storeId, sku: sku(1) });
  log(`sandbox click ${click.click_id} at ${click.occurred_at}`);

  const paidEvent: RequestBody<'postConversion'> = {
    event_id: `${orderId}-paid`,
    order_id: orderId,
    store_id: storeId,
    click_id: click.click_id,
    status: 'paid',
    currency: 'BRL',
    paid_at: click.occurred_at, // a payment at or after its click
    occurred_at: click.occurred_at,
    items: [{ sku: sku(1), quantity: 2, unit_price_cents: 2799, refunded_cents: 0 }],
  };
  const paid = await api.postConversion(paidEvent);
  log(`order ${paid.order_id}: ${paid.status}, net ${paid.net_cents}, commission ${paid.expected_commission_cents}`);
  // A refund repeats every original item and paid_at; refunded_cents is the cumulative refund of the whole line.
  const refunded = await api.postConversion({
    ...paidEvent,
    event_id: `${orderId}-refund-1`,
    status: 'refunded',
    occurred_at: plusSeconds(click.occurred_at, 1),
    items: [{ sku: sku(1), quantity: 2, unit_price_cents: 2799, refunded_cents: 2799 }],
  });
  log(
    `order ${refunded.order_id}: ${refunded.status}, net ${refunded.net_cents}, commission ${refunded.expected_commission_cents}`,
  );
  const order = await api.getConversion(orderId, { store_id: storeId });

  // Windows are UTC half-open [since, until) (default: the 30 days up to now); here the day up to the order, and an
  // hour after it. Clicks count by occurred_at, orders by paid_at with their current state.
  const window = {
    since: plusSeconds(click.occurred_at, -86_400),
    until: plusSeconds(click.occurred_at, 3600),
    store_id: storeId,
  };
  let clicks = 0;
  for await (const page of api.pages.clicks(window)) clicks += page.data.length;
  const report = await api.commissionReport(window);
  log(`report ${report.since} – ${report.until}: ${JSON.stringify(report.totals)}`);

  return { storeId, orderId, job, products, click, paid, refunded, order, clicks, report };
}

/**
 * `$SERVICE_URL/v1`, or `http://127.0.0.1:$PORT/v1`: infra/ops/cli/service-address.ts's rule, restated here because the
 * client package imports nothing from the service.
 */
export function partnerApi(env: NodeJS.ProcessEnv): string {
  const service = env.SERVICE_URL?.trim() || `http://127.0.0.1:${env.PORT?.trim() || 8080}`;
  return `${service.replace(/\/+$/, '').replace(/\/v1$/, '')}/v1`;
}

async function main(): Promise<void> {
  const apiKey = process.env.API_KEY;
  if (!apiKey) throw new Error('API_KEY is required (a test key, ik_test_…)');
  const api = createClient({ baseUrl: partnerApi(process.env), apiKey });
  const domain = process.env.STORE_DOMAIN;
  await partnerFlow(api, { log: (line) => console.log(line), ...(domain ? { domain } : {}) });
  console.log('partner flow done');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err: unknown) => {
    if (err instanceof ProblemError) {
      console.error(`${err.message}\nrequest id: ${err.requestId ?? '-'}`);
      for (const e of err.errors) console.error(`  ${e.field}: ${e.code} — ${e.message}`);
    } else console.error(err);
    process.exit(1);
  });
}
