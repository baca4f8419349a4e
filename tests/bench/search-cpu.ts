/**
 * CPU per search in this process (not part of make test): the search's reads, rules, ranking, views and
 * their JSON (`resultsPage`, what a search reader thread does) over the bench's queries on a `read.db` seeded by
 * search-bench.ts, with no HTTP and nobody writing. The figure the search's code changes move, less noisy on a shared
 * machine than a latency.
 *
 * `node dist/tests/bench/search-cpu.js <dir holding read.db>` (e.g. the `SEARCH_DATA_DIR` of search-bench.ts);
 * `SEARCH_CPU_SEARCHES` (default 300) searches per round after 50 not counted, `SEARCH_CPU_ROUNDS` (default 3).
 * Prints one JSON line per round.
 */
import os from 'node:os';
import path from 'node:path';
import { SqliteReadStore } from '../../infra/adapters/sqlite/read-store.js';
import { resultsPage } from '../../query-api/public/product-search.js';
import { StoreFactsCopy } from '../../query-api/public/store-facts.js';
import { textWords } from '../../shared-schema/ports/text-search.js';
import { benchQueries, rng } from './search-bench.js';

const dir = process.argv[2];
if (!dir) throw new Error('usage: search-cpu.js <dir holding read.db>');
const SEARCHES = Number(process.env.SEARCH_CPU_SEARCHES ?? 300);
const ROUNDS = Number(process.env.SEARCH_CPU_ROUNDS ?? 3);

// Opened as a search reader thread opens it.
const store = SqliteReadStore.open({ path: path.join(dir, 'read.db'), readOnly: true, sweepIntervalMs: 0 });
const queries = benchQueries(rng(99)).map((q) => textWords(q));
// Judged at the clock of this run (a template is reseeded by search-bench.ts when a day old: inside the 48 hours).
const now = new Date();
let i = 0;
// The stores' facts as a search reader thread keeps them (a copy brought up to date at each search).
const storeFacts = new StoreFactsCopy();
async function one(): Promise<number> {
  const page = await resultsPage(
    store,
    queries[i++ % queries.length],
    now,
    0,
    20,
    'http://127.0.0.1',
    storeFacts.facts,
  );
  return page.count;
}
for (let w = 0; w < 50; w++) await one();
for (let round = 0; round < ROUNDS; round++) {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let results = 0;
  for (let s = 0; s < SEARCHES; s++) results += await one();
  const cpu = process.cpuUsage(cpu0);
  console.log(
    JSON.stringify({
      round,
      searches: SEARCHES,
      cpu_ms_per_search: Math.round(((cpu.user + cpu.system) / 1000 / SEARCHES) * 100) / 100,
      wall_ms_per_search: Math.round(((performance.now() - t0) / SEARCHES) * 100) / 100,
      results,
      loadavg_1m: os.loadavg()[0],
    }),
  );
}
await store.close();
