/**
 * CPU per search of two builds in one process (not part of make test): each build's own `rankedPage` on its
 * own `read.db`, the two alternating query by query (the order swapped every query), so that the drift of a shared
 * machine falls on both alike. The figure to compare two builds' search code with; search-cpu.ts gives one build's.
 *
 * `node dist/tests/bench/search-ab.js <build root>:<dir holding read.db> <build root>:<dir holding read.db>`, e.g.
 * `/work/base:/tmp/tpl /work/main:/tmp/tpl2` (dirs seeded by search-bench.ts, `SEARCH_DATA_DIR`; a build that adds a
 * column or an index wants a copy of the data opened once by its own code). A build with
 * `query-api/public/store-facts.js` searches with a `StoreFactsCopy`, as its search reader threads do.
 * `SEARCH_AB_SEARCHES` (default 1000) searches each after 100 not counted. Prints one JSON line.
 */
import os from 'node:os';
import path from 'node:path';
import type { ReadStore } from '../../shared-schema/ports/read-store.js';
import type * as SearchModule from '../../query-api/public/product-search.js';
import type * as ReadStoreModule from '../../infra/adapters/sqlite/read-store.js';
import type * as StoreFactsModule from '../../query-api/public/store-facts.js';
import { textWords } from '../../shared-schema/ports/text-search.js';
import { benchQueries, rng } from './search-bench.js';

type Build = {
  label: string;
  store: ReadStore & { close(): Promise<void> };
  search: (words: readonly string[], now: Date) => Promise<unknown>;
  wallMs: number;
  cpuMs: number;
};

async function load(arg: string): Promise<Build> {
  const [root, dir] = arg.split(':');
  if (!root || !dir) throw new Error('usage: search-ab.js <build root>:<data dir> <build root>:<data dir>');
  // A build from before the adapters moved to infra/adapters/ has its read store in infra/sqlite/.
  const { SqliteReadStore } = (await import(path.join(root, 'dist/infra/adapters/sqlite/read-store.js')).catch(
    () => import(path.join(root, 'dist/infra/sqlite/read-store.js')),
  )) as typeof ReadStoreModule;
  // A build from before the documents path left the search's HTTP door has `rankedPage` in search.js.
  const { rankedPage } = (await import(path.join(root, 'dist/query-api/public/product-search.js')).catch(
    () => import(path.join(root, 'dist/query-api/public/search.js')),
  )) as typeof SearchModule;
  let facts: StoreFactsModule.StoreFacts | undefined;
  try {
    const m = (await import(path.join(root, 'dist/query-api/public/store-facts.js'))) as typeof StoreFactsModule;
    facts = new m.StoreFactsCopy().facts;
  } catch {
    facts = undefined; // an older build: its rankedPage reads the stores itself
  }
  // Opened as a search reader thread opens it.
  const store = SqliteReadStore.open({ path: path.join(dir, 'read.db'), readOnly: true, sweepIntervalMs: 0 });
  return {
    label: arg,
    store,
    search: (words, now) =>
      facts ? rankedPage(store, words, now, 0, 20, facts) : rankedPage(store, words, now, 0, 20),
    wallMs: 0,
    cpuMs: 0,
  };
}

const builds = [await load(process.argv[2] ?? ''), await load(process.argv[3] ?? '')];
const queries = benchQueries(rng(99)).map((q) => textWords(q));
const SEARCHES = Number(process.env.SEARCH_AB_SEARCHES ?? 1000);
const WARMUP = 100;
// Judged at the clock of this run (a template is reseeded by search-bench.ts when a day old: inside the 48 hours).
const now = new Date();
for (let i = 0; i < WARMUP + SEARCHES; i++) {
  for (const b of i % 2 === 0 ? builds : [...builds].reverse()) {
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await b.search(queries[i % queries.length], now);
    const cpu = process.cpuUsage(cpu0);
    if (i < WARMUP) continue;
    b.wallMs += performance.now() - t0;
    b.cpuMs += (cpu.user + cpu.system) / 1000;
  }
}
const round = (x: number) => Math.round(x * 1000) / 1000;
console.log(
  JSON.stringify({
    searches: SEARCHES,
    builds: builds.map((b) => ({
      build: b.label,
      cpu_ms_per_search: round(b.cpuMs / SEARCHES),
      wall_ms_per_search: round(b.wallMs / SEARCHES),
    })),
    cpu_ratio_second_to_first: round(builds[1].cpuMs / builds[0].cpuMs),
    loadavg_1m: os.loadavg()[0],
  }),
);
for (const b of builds) await b.store.close();
