/**
 * What pauses the service's event loop during the search bench (not part of make test): loaded into the
 * service with `--import` by search-bench.ts when `SEARCH_MONITOR=1`. On the event loop's thread only (`--import`
 * runs in the service's other threads too), it records, in epoch milliseconds, each gap above GAP_MS between the
 * turns of a timer due every TICK_MS (the event loop did not run it on time: busy, paused for a collection, or not
 * scheduled), and each garbage collection of the event loop's heap with its kind
 * (perf_hooks: 1 minor, 4 major, 8 incremental marking, 16 weak callbacks). Written as JSON to
 * `SERVICE_MONITOR_FILE` when the process exits.
 */
import fs from 'node:fs';
import { PerformanceObserver, constants } from 'node:perf_hooks';
import { isMainThread } from 'node:worker_threads';

export type MonitorRecord = {
  /** [start, duration ms, kind] of each collection. */
  gcs: [number, number, number][];
  /** [start, duration ms] of each late turn of the timer. */
  gaps: [number, number][];
};

const TICK_MS = 5;
const GAP_MS = 25;
const file = process.env.SERVICE_MONITOR_FILE;
if (file && isMainThread) {
  const record: MonitorRecord = { gcs: [], gaps: [] };
  const epoch = (t: number) => performance.timeOrigin + t;
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const kind = (e as { detail?: { kind?: number } }).detail?.kind ?? constants.NODE_PERFORMANCE_GC_MINOR;
      record.gcs.push([epoch(e.startTime), e.duration, kind]);
    }
  }).observe({ entryTypes: ['gc'] });
  let last = performance.now();
  setInterval(() => {
    const now = performance.now();
    if (now - last > GAP_MS) record.gaps.push([epoch(last), now - last]);
    last = now;
  }, TICK_MS).unref();
  process.on('exit', () => fs.writeFileSync(file, JSON.stringify(record)));
}
