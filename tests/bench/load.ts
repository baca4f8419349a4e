/**
 * The benchmark's load generator, run as a child process (fork, IPC) so that it does not share an event loop with
 * the service it measures. It receives one `LoadJob` per message and answers with a `LoadResult`. Loopback only:
 * every request goes through `send`, which refuses any other address.
 *
 * Closed loop (no `ratePerSec`): `concurrency` connections each send the next request as soon as the last answer
 * came. Open loop (`ratePerSec`): requests are started on a fixed schedule, whatever the answers' latency.
 */
import { keepAliveAgent, send } from '../support/keep-alive.js';
import { paid } from '../support/order-fixtures.js';

export interface LoadJob {
  /** Base URL: the service's (ending in /v1) or the bare server's (which answers any path). */
  base: string;
  /**
   * `put`: PUT {base}/products/{sku} over many SKUs; `patch-pair`: sequential PATCHes alternating between `skus`;
   * `conversion`: POST {base}/conversions, a `paid` event of a new order each (`conversion` says the click).
   */
  mode: 'put' | 'patch-pair' | 'conversion';
  key: string;
  storeId: string;
  /** SKUs are `${prefix}-${connection}-${n % 16}` in `put` mode. */
  prefix: string;
  skus?: string[];
  concurrency: number;
  maxCount: number;
  durationMs: number;
  ratePerSec?: number;
  /** Epoch ms of the first `updated_at`; each request adds 1 ms, so a SKU's writes are never stale. */
  baseUpdatedAtMs: number;
  /** `conversion` mode: the click every order is attributed to, and when it occurred (the orders' `paid_at`). */
  conversion?: { clickId: string; paidAt: string };
}

export interface LoadResult {
  count: number;
  elapsedMs: number;
  /** Latency in ms of each 2xx answer, in completion order (for `patch-pair`, tagged by SKU index). */
  latencies: number[];
  bySku?: number[][];
  statuses: Record<string, number>;
  errors: number;
  /** CPU time the load generator itself spent per answer, µs (it shares the machine with what it measures). */
  cpuUs: number;
}

const PRODUCT = {
  title: 'Camiseta azul de algodão, tamanho M',
  description: 'Camiseta de algodão penteado, gola careca, manga curta.',
  brand: 'Marca',
  image_urls: ['https://cdn.shop.test/1.jpg', 'https://cdn.shop.test/2.jpg'],
  available: true,
  stock_quantity: 12,
};

export function productPut(storeId: string, sku: string, n: number, updatedAtMs: number): string {
  return JSON.stringify({
    store_id: storeId,
    ...PRODUCT,
    product_url: `https://shop.test/p/${sku}`,
    price_cents: 10_000 + (n % 5000),
    updated_at: new Date(updatedAtMs).toISOString(),
  });
}

/** A `paid` event of a new order of two lines, attributed to the job's click. */
function conversionPost(job: LoadJob, orderId: string): string {
  const { clickId, paidAt } = job.conversion!;
  return JSON.stringify(
    paid({
      event_id: `e-${orderId}`,
      order_id: orderId,
      store_id: job.storeId,
      click_id: clickId,
      paid_at: paidAt,
      occurred_at: paidAt,
      items: [
        { sku: 'a', quantity: 1, unit_price_cents: 1990, refunded_cents: 0 },
        { sku: 'b', quantity: 2, unit_price_cents: 4990, refunded_cents: 0 },
      ],
    }),
  );
}

async function run(job: LoadJob): Promise<LoadResult> {
  const agent = keepAliveAgent(job.concurrency);
  const headers = { Authorization: `Bearer ${job.key}` };
  const latencies: number[] = [];
  const bySku: number[][] = (job.skus ?? []).map(() => []);
  const statuses: Record<string, number> = {};
  let errors = 0;
  let issued = 0;
  let stamp = job.baseUpdatedAtMs;
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const deadline = started + job.durationMs;
  const interval = job.ratePerSec ? 1000 / job.ratePerSec : 0;

  const one = async (connection: number): Promise<void> => {
    const n = issued++;
    if (interval > 0) {
      const due = started + n * interval;
      const wait = due - performance.now();
      if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    }
    let url: URL;
    let method: string;
    let body: string;
    let skuIndex = -1;
    if (job.mode === 'conversion') {
      url = new URL(`${job.base}/conversions`);
      method = 'POST';
      body = conversionPost(job, `${job.prefix}-${n}`);
    } else if (job.mode === 'put') {
      const sku = `${job.prefix}-${connection}-${n % 16}`;
      url = new URL(`${job.base}/products/${sku}`);
      method = 'PUT';
      body = productPut(job.storeId, sku, n, stamp++);
    } else {
      skuIndex = n % job.skus!.length;
      url = new URL(`${job.base}/products/${job.skus![skuIndex]}`);
      method = 'PATCH';
      body = JSON.stringify({ price_cents: 10_000 + (n % 5000), updated_at: new Date(stamp++).toISOString() });
    }
    const t0 = performance.now();
    try {
      const reply = await send(agent, url, method, body, headers);
      const ms = performance.now() - t0;
      statuses[reply.status] = (statuses[reply.status] ?? 0) + 1;
      if (reply.status >= 200 && reply.status < 300) {
        latencies.push(ms);
        if (skuIndex >= 0) bySku[skuIndex].push(ms);
      }
    } catch {
      errors++;
    }
  };
  const connection = async (c: number) => {
    while (issued < job.maxCount && performance.now() < deadline) await one(c);
  };
  await Promise.all(Array.from({ length: job.concurrency }, (_, c) => connection(c)));
  const elapsedMs = performance.now() - started;
  agent.destroy();
  const cpu = process.cpuUsage(cpuBefore);
  const result: LoadResult = {
    count: latencies.length,
    elapsedMs,
    latencies,
    statuses,
    errors,
    cpuUs: (cpu.user + cpu.system) / Math.max(1, latencies.length),
  };
  if (job.skus) result.bySku = bySku;
  return result;
}

/** Serves jobs only when forked as the generator (run.ts imports this module too, for `productPut`). */
export const WORKER_FLAG = '--bench-load-worker';
if (process.send && process.argv.includes(WORKER_FLAG)) {
  process.on('message', (job: LoadJob) => {
    void run(job).then(
      (result) => process.send!({ ok: true, result }),
      (err: unknown) => process.send!({ ok: false, error: String(err) }),
    );
  });
  process.on('disconnect', () => process.exit(0));
}
