/**
 * The shoppers of the search bench (search-bench.ts): the searches on their schedule, open loop, from a thread of
 * their own. The writers and the image servers of the bench keep the bench's own event loop busy (~350 requests and
 * the cover fetches' TLS a second); a search sent or answered while that loop is busy would count the load
 * generator's delay as the service's. Here a search is sent at its due time and its answer read at once.
 *
 * Started by the bench with a `ShopperPlan`; posts one `ShopperResult` when every search has been answered.
 * Loopback only (`send` refuses any other address).
 */
import http from 'node:http';
import { parentPort, workerData } from 'node:worker_threads';
import { send } from '../support/keep-alive.js';

export type ShopperPlan = {
  /** `http://127.0.0.1:<port>` */
  api: string;
  queries: string[];
  /** Searches a second. */
  rate: number;
  warmupSeconds: number;
  seconds: number;
  /** When the first search is due, in ms of `performance.timeOrigin + performance.now()` (shared by the threads). */
  startAt: number;
  trace: boolean;
};

export type ShopperResult = {
  /** Latencies (ms, due time → whole answer read) of the measured searches, and of the warm-up's apart. */
  latencies: number[];
  warmupLatencies: number[];
  statuses: Record<string, number>;
  withResults: number;
  /** Each measured search's [due time from the end of the warm-up, latency] in ms, when asked. */
  trace: [number, number][] | null;
};

async function run(plan: ShopperPlan): Promise<ShopperResult> {
  // From 100 loopback addresses (under the per-address brake), a few connections each.
  const agents = Array.from(
    { length: 100 },
    (_, i) => new http.Agent({ keepAlive: true, maxSockets: 4, localAddress: `127.0.0.${i + 2}` }),
  );
  const result: ShopperResult = {
    latencies: [],
    warmupLatencies: [],
    statuses: {},
    withResults: 0,
    trace: plan.trace ? [] : null,
  };
  const start = plan.startAt - performance.timeOrigin; // this thread's performance.now() of the first due time
  const t0 = start + plan.warmupSeconds * 1000;
  const total = (plan.warmupSeconds + plan.seconds) * plan.rate;
  const warmup = plan.warmupSeconds * plan.rate;
  const inFlight: Promise<void>[] = [];
  const search = async (i: number, due: number): Promise<void> => {
    const q = plan.queries[i % plan.queries.length];
    const reply = await send(
      agents[i % agents.length],
      new URL(`${plan.api}/api/search?q=${encodeURIComponent(q)}`),
      'GET',
    );
    const latency = performance.now() - due;
    if (i < warmup) {
      result.warmupLatencies.push(latency);
      return;
    }
    result.latencies.push(latency);
    result.trace?.push([Math.round(due - t0), Math.round(latency)]);
    result.statuses[reply.status] = (result.statuses[reply.status] ?? 0) + 1;
    if (reply.status === 200)
      result.withResults += (JSON.parse(reply.text) as { results: unknown[] }).results.length > 0 ? 1 : 0;
  };
  // One timer at a time: each turn sends every search whose due time has come.
  await new Promise<void>((done) => {
    let next = 0;
    const turn = (): void => {
      const now = performance.now();
      while (next < total && start + (next * 1000) / plan.rate <= now) {
        inFlight.push(search(next, start + (next * 1000) / plan.rate));
        next++;
      }
      if (next === total) done();
      else setTimeout(turn, Math.max(0, start + (next * 1000) / plan.rate - performance.now()));
    };
    setTimeout(turn, Math.max(0, start - performance.now()));
  });
  await Promise.all(inFlight);
  for (const agent of agents) agent.destroy();
  return result;
}

// A failure is an unhandled rejection: it ends the thread, and the bench's `error` listener rejects the run.
const port = parentPort;
if (port) void run(workerData as ShopperPlan).then((result) => port.postMessage(result));
