/**
 * docs/architecture.md follows a write (`PUT /v1/products/{sku}`) and a read (`GET /v1/products/{sku}`) file by file.
 * This checks the claim against the code: V8's precise coverage records which of our files run a function while the
 * service answers one PUT (and, with the projections and the event store's writer on the event loop, a PUT and a
 * GET of it); every such file must be named in that section of the page. A new file on the path fails here until the
 * page names it. Worker threads are outside the coverage of the event loop: the second run puts their work on it.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import inspector from 'node:inspector/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTestService, type Partner, type TestService } from '../support/service.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const DIST = path.join(ROOT, 'dist') + path.sep;

/**
 * Files the service runs on its own timers whatever the requests (periodic scans of the clock-driven reactors): one
 * may fire while a request is being traced, without being on its path.
 */
const TIMER_DRIVEN = new Set([
  'command-api/reactors/periodic-scan.ts',
  'command-api/reactors/feed-retention.ts',
  'command-api/reactors/cover-recheck.ts',
]);

/** The repository's `.ts` paths named in backticks in the section of docs/architecture.md under `heading`. */
function namedIn(heading: string): Set<string> {
  const page = fs.readFileSync(path.join(ROOT, 'docs/architecture.md'), 'utf8');
  const start = page.indexOf(`\n## ${heading}`);
  expect(start, `section "${heading}" of docs/architecture.md`).to.be.greaterThan(-1);
  const end = page.indexOf('\n## ', start + 1);
  const section = page.slice(start, end === -1 ? undefined : end);
  return new Set([...section.matchAll(/`([a-z-]+\/[A-Za-z0-9_./-]+\.ts)`/g)].map((m) => m[1]));
}

interface FunctionCoverage {
  ranges: { count: number }[];
}
interface ScriptCoverage {
  url: string;
  functions: FunctionCoverage[];
}

/** Our source files (not tests) with at least one function called while `work` ran. */
async function filesRunBy(work: () => Promise<void>): Promise<string[]> {
  const session = new inspector.Session();
  session.connect();
  try {
    await session.post('Profiler.enable');
    await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
    await session.post('Profiler.takePreciseCoverage'); // resets the counts: only what `work` runs is counted
    await work();
    const { result } = (await session.post('Profiler.takePreciseCoverage')) as { result: ScriptCoverage[] };
    await session.post('Profiler.stopPreciseCoverage');
    const files = new Set<string>();
    for (const script of result) {
      if (!script.url.startsWith('file://')) continue;
      const file = fileURLToPath(script.url);
      if (!file.startsWith(DIST) || file.includes(`${path.sep}node_modules${path.sep}`)) continue;
      const source = file.slice(DIST.length).split(path.sep).join('/').replace(/\.js$/, '.ts');
      if (source.startsWith('tests/')) continue;
      if (script.functions.some((f) => f.ranges[0].count > 0)) files.add(source);
    }
    return [...files].sort();
  } finally {
    session.disconnect();
  }
}

const product = (t: TestService, sku: string) => ({
  store_id: 'loja-1',
  title: `Camiseta ${sku}`,
  product_url: 'https://loja.example/p/1',
  image_urls: ['https://loja.example/1.jpg'],
  price_cents: 2999,
  available: true,
  updated_at: t.clock.now().toISOString(),
  commission: { type: 'percentage', rate: 12.5 },
});

/** A partner with an approved store, and one write and read already done, so that first-call paths are behind. */
async function readyPartner(t: TestService): Promise<Partner> {
  const p = await t.partner({ type: 'hub' });
  const store = await p.api.put('/stores/loja-1', {
    name: 'Loja',
    cnpj: '11.222.333/0001-81',
    website_url: 'https://loja.example',
    domains: ['loja.example'],
  });
  expect(store.status).to.equal(200);
  expect((await t.approveStore(p, 'loja-1')).status).to.be.oneOf([200, 204]);
  expect((await p.api.put('/products/warm', product(t, 'warm'))).status).to.equal(200);
  expect((await p.api.get('/products/warm')).status).to.equal(200);
  return p;
}

function unnamed(run: string[], named: Set<string>): string[] {
  return run.filter((f) => !named.has(f) && !TIMER_DRIVEN.has(f));
}

describe('docs/architecture.md: the files a write and a read cross', function () {
  before(function () {
    // The page follows the embedded default: one process (the coverage sees this process only) on SQLite.
    if (process.env.TOPOLOGY === 'multi' || process.env.EVENTSTORE_URL || process.env.MONGO_URL) this.skip();
  });

  it('a PUT /v1/products/{sku} runs only files the write section names', async () => {
    const t = await startTestService();
    try {
      const p = await readyPartner(t);
      const run = await filesRunBy(async () => {
        expect((await p.api.put('/products/sku-1', product(t, 'sku-1'))).status).to.equal(200);
      });
      // The trace saw the path at all: the door, the route, the command and the append.
      expect(run).to.include.members([
        'command-api/app.ts',
        'command-api/routes/catalog.ts',
        'command-api/services/products.ts',
        'command-api/deciders/product.ts',
        'infra/adapters/sqlite/event-store.ts',
      ]);
      const missing = unnamed(run, namedIn('A write end to end'));
      expect(missing, 'files a PUT runs that the write section does not name').to.deep.equal([]);
    } finally {
      await t.close();
    }
  });

  it('with the projections and the writer on the event loop, a PUT and a GET of it run only files the write and the read name', async () => {
    const t = await startTestService({ PROJECTION_THREAD: 'off', SQLITE_WRITER_THREAD: 'off' });
    try {
      const p = await readyPartner(t);
      const run = await filesRunBy(async () => {
        expect((await p.api.put('/products/sku-1', product(t, 'sku-1'))).status).to.equal(200);
        // Read-your-writes: the GET waits until the projections have applied the PUT.
        expect((await p.api.get('/products/sku-1')).status).to.equal(200);
      });
      expect(run).to.include.members([
        'projections/runner.ts',
        'projections/projectors/products.ts',
        'query-api/routes/catalog.ts',
      ]);
      const named = new Set([...namedIn('A write end to end'), ...namedIn('A read end to end')]);
      const missing = unnamed(run, named);
      expect(missing, 'files a PUT and a GET run that the write and read sections do not name').to.deep.equal([]);
    } finally {
      await t.close();
    }
  });
});
