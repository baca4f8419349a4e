// How fast is one cover check end to end (resolve from the host map, TLS to loopback, read, sharp metadata),
// next to sharp alone reading the same bytes from memory? And does memory settle over many checks?
// Run: node dist/tests/bench/cover-check-bench.js [n=10000]
import { pathToFileURL } from 'node:url';
import sharp from 'sharp';
import { createCoverFetcher } from '../../infra/adapters/cover/cover-fetcher.js';
import { startImageServers } from '../support/https-image-server.js';

export interface CoverBenchReport {
  checks: number;
  checksPerSecond: number;
  concurrentChecksPerSecond: number;
  sharpPerSecond: number;
  /** sharp-from-memory rate ÷ sequential check rate: what the network and TLS cost. */
  ratio: number;
  rssBeforeMb: number;
  rssAfterMb: number;
}

export async function benchCoverChecks(n: number, concurrency = 8): Promise<CoverBenchReport> {
  const servers = await startImageServers();
  try {
    const check = createCoverFetcher({
      hostMap: servers.hostMap,
      allowPrivate: true,
      ca: servers.ca,
      lookup: async (host) => {
        throw new Error(`benchmark tried DNS for ${host}`);
      },
    });
    const url = servers.url('shop.test', '/img/800x600.jpg');
    const bytes = servers.images['800x600.jpg'];
    const once = async () => {
      const result = await check(url, ['shop.test']);
      if (!result.ok || result.width !== 800) throw new Error(`unexpected result ${JSON.stringify(result)}`);
    };
    for (let i = 0; i < 50; i += 1) await once(); // warm-up

    const rssBefore = process.memoryUsage().rss;
    const sequential = await timed(n, once);
    const rssAfter = process.memoryUsage().rss;
    const concurrent = await timed(
      n,
      async () => {
        let next = 0;
        await Promise.all(
          Array.from({ length: concurrency }, async () => {
            while (next < n) {
              next += 1;
              await once();
            }
          }),
        );
      },
      true,
    );
    const fromMemory = await timed(n, async () => {
      const meta = await sharp(bytes, { limitInputPixels: 100_000_000 }).metadata();
      if (meta.width !== 800) throw new Error('sharp read the wrong size');
    });

    const report: CoverBenchReport = {
      checks: n,
      checksPerSecond: sequential,
      concurrentChecksPerSecond: concurrent,
      sharpPerSecond: fromMemory,
      ratio: fromMemory / sequential,
      rssBeforeMb: rssBefore / 2 ** 20,
      rssAfterMb: rssAfter / 2 ** 20,
    };
    const f = (x: number) => x.toFixed(0);
    console.log(`cover checks (HTTPS on loopback, 800×600 JPEG ${bytes.length} B):`);
    console.log(`  sequential:       ${f(sequential)} checks/s`);
    console.log(`  ${concurrency} in flight:      ${f(concurrent)} checks/s`);
    console.log(`  sharp.metadata() from memory: ${f(fromMemory)} reads/s`);
    console.log(`  ratio sharp-only / sequential check: ${report.ratio.toFixed(1)}×`);
    console.log(
      `  RSS before ${report.rssBeforeMb.toFixed(1)} MB, after ${n} sequential checks ${report.rssAfterMb.toFixed(1)} MB`,
    );
    return report;
  } finally {
    await servers.close();
  }
}

/** Operations per second: `n` sequential calls of `op`, or one call that does `n` operations itself. */
async function timed(n: number, op: () => Promise<void>, batch = false): Promise<number> {
  const started = performance.now();
  if (batch) await op();
  else for (let i = 0; i < n; i += 1) await op();
  return n / ((performance.now() - started) / 1000);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await benchCoverChecks(Number(process.argv[2] ?? 10_000));
}
