/**
 * Wires the cover check for one process: the fetcher (infra) behind the `CoverChecker` port, the pool, the reactor
 * that follows the log, and the re-check scheduler. `COVER_CHECK=off` (never in production) starts none of them.
 */
import type { Logger } from 'pino';
import type { CommandDeps } from '../../command-api/services/context.js';
import { CoverWork } from '../../command-api/reactors/cover-work.js';
import { CoverCheckReactor } from '../../command-api/reactors/cover-check.js';
import { CoverRecheckScheduler } from '../../command-api/reactors/cover-recheck.js';
import type { CoverChecker } from '../../shared-schema/ports/cover-checker.js';
import type { Config } from '../config.js';
import { createCoverFetcher } from './cover-fetcher.js';

export interface CoverChecks {
  /** Scans for due re-checks now (the manual clock moved) and waits until their results are projected. */
  clockMoved(): Promise<void>;
  stop(): Promise<void>;
}

export async function startCoverChecks(options: {
  config: Config;
  deps: CommandDeps;
  log: Logger;
  waitForPosition: (position: number, timeoutMs: number) => Promise<boolean>;
  /** Replaces the HTTPS fetcher (tests of the wiring only). */
  checker?: CoverChecker;
  /** Told the outcome of every check (`ok`, or the first reason's code), for the metrics. */
  onOutcome?: (outcome: string) => void;
  /** Given the depth of the check queue once, for the metrics. */
  registerQueue?: (depth: () => number) => void;
}): Promise<CoverChecks | null> {
  const { config, deps, log } = options;
  if (!config.coverCheck) return null;
  const fetcher: CoverChecker = options.checker ?? createCoverFetcher(config.coverFetch);
  const checker: CoverChecker = async (url, hosts) => {
    const verdict = await fetcher(url, hosts);
    options.onOutcome?.(verdict.ok ? 'ok' : (verdict.reasons[0]?.code ?? 'failed'));
    return verdict;
  };
  const work = new CoverWork({
    events: deps.events,
    repo: deps.repo,
    clock: deps.clock,
    checker,
    concurrency: config.coverCheckConcurrency,
    onError: (err, stream) => log.error({ err, stream }, 'cover check failed'),
  });
  options.registerQueue?.(() => work.depth);
  const reactor = new CoverCheckReactor({ events: deps.events, reads: deps.reads, work, onError: (err) => log.error({ err }, 'cover reactor stopped') });
  const scheduler = new CoverRecheckScheduler({
    reads: deps.reads,
    clock: deps.clock,
    work,
    intervalMs: config.coverRecheckScanMs,
    onError: (err) => log.error({ err }, 'cover re-check scan failed'),
  });
  await reactor.start();
  scheduler.start();
  return {
    async clockMoved() {
      const position = await scheduler.scan();
      if (position > 0) await options.waitForPosition(position, 10_000);
    },
    async stop() {
      await scheduler.stop();
      await reactor.stop();
    },
  };
}
