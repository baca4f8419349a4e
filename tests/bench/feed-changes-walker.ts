/**
 * A channel following the changes feed during the search bench (search-bench.ts, SEARCH_FEED_CHANGES=1), from a
 * thread of its own for the same reason as the shoppers (search-shoppers.ts): the bench's own event loop is busy with
 * the writers and the image servers, and a page read late there would count the load generator's delay as the
 * service's.
 *
 * From `startAt` to `endAt` it walks `GET /feeds/changes?limit=…` as a channel does: without a cursor first (from the
 * first change kept), then from each page's `next_cursor`; a full page is followed at once by the next, a shorter one
 * (caught up) by a poll when about `limit` more changes should have come at the rate that page saw (the changes it
 * held over the time since the page before), never sooner than `pollMs` nor later than MAX_POLL_MS: the pages the
 * target names are full ones, and a channel polling on a fixed period would mostly read short ones. A channel is braked at 60 requests a minute (query-api/feeds/routes.ts): the
 * walker makes a fresh channel (POST /admin/v1/channels) every 50 pages, which the brake is not what is measured.
 * A page's time runs from its request to the end of its body (parsed after). Loopback only (`send` refuses any other
 * address).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { keepAliveAgent, send } from '../support/keep-alive.js';

export type ChangesPlan = {
  /** `http://127.0.0.1:<port>` */
  api: string;
  /** `http://127.0.0.1:<admin port>/admin/v1` */
  admin: string;
  adminToken: string;
  /** When to start and to stop, in ms of `performance.timeOrigin + performance.now()` (shared by the threads). */
  startAt: number;
  endAt: number;
  /** Changes a page asks for. */
  limit: number;
  /** The shortest wait after a page shorter than `limit` before asking again. */
  pollMs: number;
};

export type ChangesResult = {
  /** Each page: [its start in ms from `startAt`, ms to the end of its body, changes in it, bytes]. */
  pages: [number, number, number, number][];
  statuses: Record<string, number>;
};

const PAGES_PER_CHANNEL = 50;
const MAX_POLL_MS = 15_000;

async function run(plan: ChangesPlan): Promise<ChangesResult> {
  const agent = keepAliveAgent(2);
  const base = performance.timeOrigin;
  const now = () => base + performance.now();
  const sleep = (ms: number) => new Promise((res) => setTimeout(res, Math.max(0, ms)));
  // The admin API answers 503 when its write is not projected in time (a busy machine): asked again, a few times.
  const channel = async (n: number): Promise<string> => {
    for (let attempt = 1; ; attempt++) {
      const made = await send(
        agent,
        new URL(`${plan.admin}/channels`),
        'POST',
        JSON.stringify({ name: `Seguidor ${n}` }),
        {
          Authorization: `Bearer ${plan.adminToken}`,
        },
      );
      if (made.status === 201) return (JSON.parse(made.text) as { token: string }).token;
      if (attempt === 10) throw new Error(`channel: ${made.status} ${made.text}`);
      await sleep(500);
    }
  };
  const pages: ChangesResult['pages'] = [];
  const statuses: Record<string, number> = {};
  let token = await channel(0);
  let cursor: string | null = null;
  await sleep(plan.startAt - now());
  for (let n = 1; now() < plan.endAt; n++) {
    if (n % PAGES_PER_CHANNEL === 0) token = await channel(n);
    const url = `${plan.api}/feeds/changes?limit=${plan.limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const previous = pages.length > 0 ? plan.startAt + pages[pages.length - 1][0] : plan.startAt;
    const started = now();
    const reply = await send(agent, new URL(url), 'GET', undefined, { Authorization: `Bearer ${token}` }).catch(
      (e: unknown) => ({ status: `error ${(e as NodeJS.ErrnoException).code ?? String(e)}`, text: '' }),
    );
    const ms = now() - started;
    statuses[reply.status] = (statuses[reply.status] ?? 0) + 1;
    if (reply.status !== 200) {
      await sleep(plan.pollMs);
      continue;
    }
    const page = JSON.parse(reply.text) as { changes: unknown[]; next_cursor: string };
    pages.push([started - plan.startAt, ms, page.changes.length, Buffer.byteLength(reply.text)]);
    cursor = page.next_cursor;
    if (page.changes.length < plan.limit) {
      const perMs = page.changes.length / Math.max(1, started - previous);
      await sleep(Math.min(MAX_POLL_MS, Math.max(plan.pollMs, perMs > 0 ? plan.limit / perMs : MAX_POLL_MS)));
    }
  }
  agent.destroy();
  return { pages, statuses };
}

run(workerData as ChangesPlan).then(
  (result) => parentPort!.postMessage(result),
  (err: unknown) => {
    throw err;
  },
);
