// A 1000-item batch from POST to `done` (as the partner sees it: polling GET /jobs), beside the same 1000 products
// sent as single PUTs by one client, in the same run on the embedded default. Target: the batch >= 5x faster per item.
// Run: node dist/tests/bench/batch-bench.js [items=1000]
import { pathToFileURL } from 'node:url';
import { productBody, startTestService, storeBody, type Partner, type TestService } from '../support/service.js';

export interface BatchBenchReport {
  items: number;
  batchMs: number;
  batchItemsPerSecond: number;
  singleMs: number;
  singleItemsPerSecond: number;
  /** Batch items/s ÷ single-PUT items/s (target >= 5). */
  speedup: number;
}

/** The rate brake allows 600 writes per key and minute; the bench moves the manual clock to the next window. */
const WINDOW_WRITES = 500;

async function singles(t: TestService, p: Partner, prefix: string, n: number): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < n; i++) {
    if (i % WINDOW_WRITES === 0) t.clock.advance(60_000);
    const r = await p.api.put(`/products/${prefix}-${i}`, productBody('loja-bench', { price_cents: 1000 + i }));
    if (r.status !== 200) throw new Error(`PUT answered ${r.status}: ${JSON.stringify(r.body)}`);
  }
  return performance.now() - started;
}

async function batch(t: TestService, p: Partner, prefix: string, n: number): Promise<number> {
  t.clock.advance(60_000);
  const items = Array.from({ length: n }, (_, i) => ({
    op: 'upsert',
    sku: `${prefix}-${i}`,
    product: productBody('loja-bench', { price_cents: 1000 + i }),
  }));
  const started = performance.now();
  const posted = await p.api.post('/products/batch', { items });
  if (posted.status !== 202) throw new Error(`batch answered ${posted.status}: ${JSON.stringify(posted.body)}`);
  for (;;) {
    const job = (await p.api.get(`/jobs/${posted.body.job_id}`)).body;
    if (job.state === 'done') {
      if (job.totals.pending + job.totals.accepted !== n)
        throw new Error(`unexpected totals ${JSON.stringify(job.totals)}`);
      return performance.now() - started;
    }
    if (job.state === 'failed') throw new Error('the batch job failed');
    await new Promise((r) => setTimeout(r, 2));
  }
}

export async function benchBatch(items = 1000): Promise<BatchBenchReport> {
  const t = await startTestService();
  try {
    t.clock.set(new Date('2026-01-02T00:00:00Z'));
    const p = await t.partner({ type: 'hub', name: 'Bench Hub' });
    const store = await p.api.put('/stores/loja-bench', storeBody());
    if (store.status !== 200) throw new Error(`store answered ${store.status}`);
    await t.approveStore(p, 'loja-bench');
    // Warm-up: both paths once, on other SKUs.
    await singles(t, p, 'warm-single', 50);
    await batch(t, p, 'warm-batch', 50);

    const singleMs = await singles(t, p, 'single', items);
    const batchMs = await batch(t, p, 'batch', items);
    const batchItemsPerSecond = (items / batchMs) * 1000;
    const singleItemsPerSecond = (items / singleMs) * 1000;
    return {
      items,
      batchMs,
      batchItemsPerSecond,
      singleMs,
      singleItemsPerSecond,
      speedup: batchItemsPerSecond / singleItemsPerSecond,
    };
  } finally {
    await t.close();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const n = Number(process.argv[2] ?? 1000);
  const r = await benchBatch(n);
  console.log(
    `batch of ${r.items}: ${r.batchMs.toFixed(0)} ms from POST to done, ${r.batchItemsPerSecond.toFixed(0)} items/s`,
  );
  console.log(
    `${r.items} single PUTs (one client): ${r.singleMs.toFixed(0)} ms, ${r.singleItemsPerSecond.toFixed(0)} items/s`,
  );
  console.log(`speedup per item: ${r.speedup.toFixed(1)}x (target >= 5x)`);
}
