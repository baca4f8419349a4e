/**
 * CPU per search of two builds (not part of make test), loaded in one process and alternating query by query (the
 * order swapped every query), so that the drift of a shared machine falls on both alike. The figure to compare two builds'
 * search code with; search-cpu.ts gives one build's.
 *
 * `node dist/tests/bench/search-ab.js <build root>:<dir holding read.db> <build root>:<dir holding read.db>`, e.g.
 * `/work/base:/tmp/tpl /work/main:/tmp/tpl2` (dirs seeded by search-bench.ts, `SEARCH_DATA_DIR`; a build that adds a
 * column or an index wants a copy of the data opened once by its own code).
 *
 * By default each build searches as its search threads do: on the offers it holds (`HeldOffersSearch`, with a
 * `StoreFactsCopy` brought up to date before each search), two passes over the bench's queries, reported apart:
 * `cold` (the first pass, which reads and holds the offers) and `warm` (the second, on offers held).
 * `SEARCH_AB_PATH=documents`: the documents path instead (`rankedPage`, query-api/public/product-search.ts), over
 * `SEARCH_AB_SEARCHES` (default 1000) searches after 100 not counted. Each order of the two builds runs in a process of
 * its own (`SEARCH_AB_ONE_ORDER=1`: one process, the order given); prints one JSON line with both runs and the
 * second build's CPU ÷ the first's, the geometric mean of the two orders.
 */
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ReadStore } from '../../shared-schema/ports/read-store.js';
import type * as SearchModule from '../../query-api/public/product-search.js';
import type * as ReadStoreModule from '../../infra/adapters/sqlite/read-store.js';
import type * as StoreFactsModule from '../../query-api/public/store-facts.js';
import type * as HeldModule from '../../infra/adapters/sqlite/held-offers.js';
import { textWords } from '../../shared-schema/ports/text-search.js';
import { OFFERS } from '../../shared-schema/read-models/offers.js';
import { benchQueries, rng } from './search-bench.js';

type Build = {
  label: string;
  store: ReadStore & { close(): Promise<void> };
  search: (words: readonly string[], now: Date) => Promise<unknown>;
  close?: () => void;
  /** CPU and wall time, ms, of the searches counted, by phase. */
  phases: Record<string, { wallMs: number; cpuMs: number; searches: number }>;
};

const PATH = process.env.SEARCH_AB_PATH ?? 'held';
if (PATH !== 'held' && PATH !== 'documents') throw new Error('SEARCH_AB_PATH: held or documents');
const HELD = PATH === 'held';
/** A build's module at the first of the paths it had over time (the adapters moved from infra/sqlite/). */
const importFirst = async <T>(root: string, paths: string[]): Promise<T> => {
  for (const p of paths.slice(0, -1)) {
    try {
      return (await import(path.join(root, p))) as T;
    } catch {
      // not at this path in that build
    }
  }
  return (await import(path.join(root, paths[paths.length - 1]))) as T;
};

async function load(arg: string): Promise<Build> {
  const [root, dir] = arg.split(':');
  if (!root || !dir) throw new Error('usage: search-ab.js <build root>:<data dir> <build root>:<data dir>');
  // A build from before the adapters moved to infra/adapters/ has its read store in infra/sqlite/.
  const { SqliteReadStore } = await importFirst<typeof ReadStoreModule>(root, [
    'dist/infra/adapters/sqlite/read-store.js',
    'dist/infra/sqlite/read-store.js',
  ]);
  // Opened as a search reader thread opens it.
  const file = path.join(dir, 'read.db');
  const store = SqliteReadStore.open({ path: file, readOnly: true, sweepIntervalMs: 0 });
  if (HELD) {
    const { HeldOffersSearch } = await importFirst<typeof HeldModule>(root, [
      'dist/infra/adapters/sqlite/held-offers.js',
      'dist/infra/sqlite/held-offers.js',
    ]);
    const { StoreFactsCopy } = (await import(
      path.join(root, 'dist/query-api/public/store-facts.js')
    )) as typeof StoreFactsModule;
    const held = new HeldOffersSearch(file);
    const copy = new StoreFactsCopy();
    return {
      label: arg,
      store,
      search: async (words, now) => {
        await copy.catchUp(store);
        const page = held.resultsPage(OFFERS, words, now, 0, 20, 'http://127.0.0.1', (key) => copy.get(key));
        if (!page) throw new Error(`${arg}: the held offers did not answer ${words.join(' ')}`);
        return page;
      },
      close: () => held.close(),
      phases: {},
    };
  }
  // A build from before the documents path left the search's HTTP door has `rankedPage` in search.js.
  const { rankedPage } = await importFirst<typeof SearchModule>(root, [
    'dist/query-api/public/product-search.js',
    'dist/query-api/public/search.js',
  ]);
  let facts: StoreFactsModule.StoreFacts | undefined;
  try {
    const m = (await import(path.join(root, 'dist/query-api/public/store-facts.js'))) as typeof StoreFactsModule;
    facts = new m.StoreFactsCopy().facts;
  } catch {
    facts = undefined; // an older build: its rankedPage reads the stores itself
  }
  return {
    label: arg,
    store,
    search: (words, now) =>
      facts ? rankedPage(store, words, now, 0, 20, facts) : rankedPage(store, words, now, 0, 20),
    phases: {},
  };
}

// The build opened second runs a few per cent faster in one process (two copies of one build: 0.96–1.00, second ÷
// first), so each order runs in a process of its own and the ratio given is the geometric mean of the two.
if (process.env.SEARCH_AB_ONE_ORDER !== '1') {
  const [a, b] = [process.argv[2] ?? '', process.argv[3] ?? ''];
  const once = (first: string, second: string): Record<string, unknown> => {
    const out = execFileSync(process.execPath, [fileURLToPath(import.meta.url), first, second], {
      env: { ...process.env, SEARCH_AB_ONE_ORDER: '1' },
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    return JSON.parse(out.trim().split('\n').pop()!) as Record<string, unknown>;
  };
  const ab = once(a, b);
  const ba = once(b, a);
  const ratios = (run: Record<string, unknown>) => run.cpu_ratio_second_to_first as Record<string, number>;
  console.log(
    JSON.stringify({
      runs: [ab, ba],
      cpu_ratio_second_to_first: Object.fromEntries(
        Object.entries(ratios(ab)).map(([name, r]) => [
          name,
          Math.round(Math.sqrt(r / ratios(ba)[name]) * 1000) / 1000,
        ]),
      ),
    }),
  );
  process.exit(0);
}

const builds = [await load(process.argv[2] ?? ''), await load(process.argv[3] ?? '')];
const queries = benchQueries(rng(99)).map((q) => textWords(q));
const SEARCHES = HELD ? 2 * queries.length : Number(process.env.SEARCH_AB_SEARCHES ?? 1000);
const WARMUP = HELD ? 0 : 100;
const phaseOf = (i: number): string => (!HELD ? 'all' : i < queries.length ? 'cold' : 'warm');
// Judged at the clock of this run (a template is reseeded by search-bench.ts when a day old: inside the 48 hours).
const now = new Date();
for (let i = 0; i < WARMUP + SEARCHES; i++) {
  for (const b of i % 2 === 0 ? builds : [...builds].reverse()) {
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await b.search(queries[i % queries.length], now);
    const cpu = process.cpuUsage(cpu0);
    if (i < WARMUP) continue;
    const phase = (b.phases[phaseOf(i - WARMUP)] ??= { wallMs: 0, cpuMs: 0, searches: 0 });
    phase.wallMs += performance.now() - t0;
    phase.cpuMs += (cpu.user + cpu.system) / 1000;
    phase.searches++;
  }
}
const round = (x: number) => Math.round(x * 1000) / 1000;
const phases = Object.keys(builds[0].phases);
console.log(
  JSON.stringify({
    path: HELD ? 'held' : 'documents',
    searches: SEARCHES,
    builds: builds.map((b) => ({
      build: b.label,
      ...Object.fromEntries(
        Object.entries(b.phases).map(([name, p]) => [
          name,
          { cpu_ms_per_search: round(p.cpuMs / p.searches), wall_ms_per_search: round(p.wallMs / p.searches) },
        ]),
      ),
    })),
    cpu_ratio_second_to_first: Object.fromEntries(
      phases.map((name) => [name, round(builds[1].phases[name].cpuMs / builds[0].phases[name].cpuMs)]),
    ),
    loadavg_1m: os.loadavg()[0],
  }),
);
for (const b of builds) {
  b.close?.();
  await b.store.close();
}
