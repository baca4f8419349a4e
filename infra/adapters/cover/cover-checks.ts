/**
 * Wires the cover check for one process: the fetcher (infra) behind the `CoverChecker` port, the pool, the reactor
 * that follows the log and queues one item per send on the messaging work queue, a consumer of that queue, and the
 * re-check scheduler. `COVER_CHECK=off` (never in production) starts none of them.
 *
 * `startCoverWorker` starts a consumer and its pool alone, for more processes sharing a durable queue (a
 * command-api process with `COVER_CHECK_WORKER=on`): the reactor and the scheduler stay single, in the projections
 * process.
 */
import type { Logger } from 'pino';
import type { CommandDeps } from '../../../command-api/services/context.js';
import { CoverWork } from '../../../command-api/reactors/cover-work.js';
import { CoverCheckReactor } from '../../../command-api/reactors/cover-check.js';
import { CoverQueueConsumer, type CoverItemOutcome } from '../../../command-api/reactors/cover-queue.js';
import { CoverRecheckScheduler } from '../../../command-api/reactors/cover-recheck.js';
import type { CoverChecker } from '../../../shared-schema/ports/cover-checker.js';
import type { Config } from '../../wiring/config.js';
import { coverFetcherThread } from './threaded-fetcher.js';

export interface CoverChecks {
  /** Scans for due re-checks now (the manual clock moved) and waits until their results are projected. */
  clockMoved(): Promise<void>;
  stop(): Promise<void>;
}

export interface CoverCheckOptions {
  config: Config;
  deps: CommandDeps;
  log: Logger;
  /** Replaces the HTTPS fetcher (tests of the wiring only). */
  checker?: CoverChecker;
  /** Told the outcome of every check (`ok`, or the first reason's code), for the metrics. */
  onOutcome?: (outcome: string) => void;
}

/** The pool and a consumer of the queue feeding it. */
function coverConsumer(
  options: CoverCheckOptions,
  onSettled?: (id: string, outcome: CoverItemOutcome) => void,
): { work: CoverWork; consumer: CoverQueueConsumer; closeFetcher: () => Promise<void> } {
  const { config, deps, log } = options;
  // The fetch runs on a thread of its own: its TLS handshakes and certificate checks answer no request, and on the
  // event loop they take about a tenth of it under a PUT load (docs/adr/0018-cover-fetch.md).
  const thread = options.checker ? null : coverFetcherThread(config.coverFetch);
  const fetcher: CoverChecker = options.checker ?? thread!.check;
  const checker: CoverChecker = async (url, hosts) => {
    const verdict = await fetcher(url, hosts);
    options.onOutcome?.(verdict.ok ? 'ok' : (verdict.reasons[0]?.code ?? 'failed'));
    return verdict;
  };
  const work = new CoverWork({
    repo: deps.repo,
    clock: deps.clock,
    checker,
    concurrency: config.coverCheckConcurrency,
    onError: (err, stream) => log.error({ err, stream }, 'cover check failed'),
  });
  const consumer = new CoverQueueConsumer({
    messaging: deps.messaging,
    work,
    concurrency: config.coverCheckConcurrency,
    maxDeliveries: config.coverCheckMaxDeliveries,
    retryDelayMs: config.coverCheckRetryMs,
    ...(onSettled ? { onSettled } : {}),
  });
  return { work, consumer, closeFetcher: async () => thread?.close() };
}

export async function startCoverChecks(
  options: CoverCheckOptions & {
    waitForPosition: (position: number, timeoutMs: number) => Promise<boolean>;
    /** The reactor's subscription to the log ended on an error retrying cannot cure (default: logged). */
    onStopped?: (err: unknown) => void;
  },
): Promise<CoverChecks | null> {
  const { config, deps, log } = options;
  if (!config.coverCheck) return null;
  let reactor: CoverCheckReactor | undefined;
  const { work, consumer, closeFetcher } = coverConsumer(options, (id, outcome) => reactor?.settled(id, outcome));
  reactor = new CoverCheckReactor({
    events: deps.events,
    reads: deps.reads,
    messaging: deps.messaging,
    onError: (err) => log.error({ err }, 'cover reactor error; trying again'),
    onStopped: options.onStopped ?? ((err) => log.error({ err }, 'cover reactor stopped')),
  });
  const scheduler = new CoverRecheckScheduler({
    reads: deps.reads,
    clock: deps.clock,
    work,
    intervalMs: config.coverRecheckScanMs,
    onError: (err) => log.error({ err }, 'cover re-check scan failed'),
  });
  await consumer.start();
  await reactor.start();
  scheduler.start();
  const started = reactor;
  return {
    async clockMoved() {
      const position = await scheduler.scan();
      if (position > 0) await options.waitForPosition(position, 10_000);
    },
    async stop() {
      await scheduler.stop();
      await started.stop(); // no more items queued
      await consumer.stop(); // the checks in hand finish and settle
      await work.stop();
      await closeFetcher();
      await started.flush();
    },
  };
}

/** A consumer of the cover-check queue and its pool, without reactor nor scheduler. Null with COVER_CHECK=off. */
export async function startCoverWorker(options: CoverCheckOptions): Promise<{ stop(): Promise<void> } | null> {
  if (!options.config.coverCheck) return null;
  const { work, consumer, closeFetcher } = coverConsumer(options);
  await consumer.start();
  return {
    async stop() {
      await consumer.stop();
      await work.stop();
      await closeFetcher();
    },
  };
}
