/**
 * The reactors of the service as `ReactorStart`s (see reactors.ts): the batch runner, the cover check, the
 * freshness reactor, the feeds' retention and the webhook sender.
 */
import { BatchRunner } from '../../command-api/reactors/batch-runner.js';
import { FreshnessReactor } from '../../command-api/reactors/freshness.js';
import { FeedRetentionReactor } from '../../command-api/reactors/feed-retention.js';
import { WebhookSender } from '../../command-api/reactors/webhook-sender.js';
import { createWebhookPoster } from '../adapters/webhooks/poster.js';
import { startCoverChecks } from '../adapters/cover/cover-checks.js';
import { COVER_QUEUE } from '../../command-api/reactors/cover-queue.js';
import type { ReactorStart } from './reactors.js';
import type { QueueStats } from '../../shared-schema/ports/messaging.js';

export const batchRunnerReactor: ReactorStart = async ({
  config,
  deps,
  log,
  recordHistory,
  metrics,
  subscriptionStopped,
}) => {
  const runner = new BatchRunner(deps, {
    log,
    passes: config.batchPasses,
    onStopped: (err) => subscriptionStopped('batch-runner', err),
    onFinished: (job) =>
      void recordHistory({
        kind: 'batch_processed',
        partnerId: job.partnerId,
        env: job.env,
        refs: { job_id: job.jobId },
        outcome: job.outcome,
      }),
  });
  await runner.start();
  const unregister = metrics.registerQueue('batch_jobs', () => runner.depth);
  return {
    async stop() {
      unregister();
      await runner.stop();
    },
  };
};

/**
 * Off (null) with COVER_CHECK=off. The metrics read the work queue itself (`queueStats`): items waiting or being
 * checked, and dead letters, whichever process consumes them.
 */
export const coverCheckReactor: ReactorStart = async ({
  config,
  deps,
  log,
  waitForPosition,
  metrics,
  subscriptionStopped,
  coverChecker,
}) => {
  const covers = await startCoverChecks({
    config,
    deps,
    log,
    waitForPosition,
    onStopped: (err) => subscriptionStopped('cover-check', err),
    onOutcome: metrics.countCoverCheck,
    ...(coverChecker ? { checker: coverChecker } : {}),
  });
  if (!covers) return null;
  // The two gauges are collected together: they share one read of the queue's counts per scrape.
  let reading: Promise<QueueStats> | null = null;
  const stats = () => (reading ??= deps.messaging.queueStats(COVER_QUEUE).finally(() => (reading = null)));
  const unregister = metrics.registerQueue(
    COVER_QUEUE,
    async () => (await stats()).pending,
    async () => (await stats()).deadLetters,
  );
  return {
    async stop() {
      unregister();
      await covers.stop();
    },
    clockMoved: () => covers.clockMoved(),
  };
};

/** Records the 48 h lapses of accepted products by the service clock (command-api/reactors/freshness.ts). */
export const freshnessReactor: ReactorStart = async ({ config, deps, log, waitForPosition }) => {
  const reactor = new FreshnessReactor({
    deps,
    intervalMs: config.freshnessScanMs,
    wakeAtDue: config.clock === 'system',
    onError: (err, sku) => log.error({ err, sku }, 'freshness scan failed'),
  });
  return startScanning(reactor, waitForPosition);
};

/**
 * Starts a periodic scan; a move of the manual clock scans at once and waits until what the scan wrote is projected.
 */
function startScanning(
  reactor: { start(): void; stop(): Promise<void>; scan(): Promise<number> },
  waitForPosition: (position: number, timeoutMs: number) => Promise<unknown>,
) {
  reactor.start();
  return {
    stop: () => reactor.stop(),
    async clockMoved() {
      const position = await reactor.scan();
      if (position > 0) await waitForPosition(position, 10_000);
    },
  };
}

/** Drops the channel feeds' changes older than their retention (command-api/reactors/feed-retention.ts). */
export const feedRetentionReactor: ReactorStart = async ({ config, deps, log, waitForPosition }) => {
  const reactor = new FeedRetentionReactor({
    deps,
    retentionDays: config.feedChangesRetentionDays,
    intervalMs: config.freshnessScanMs,
    onError: (err) => log.error({ err }, 'feed retention scan failed'),
  });
  return startScanning(reactor, waitForPosition);
};

/** Pushes the notifications to the partners' webhooks (command-api/reactors/webhook-sender.ts). */
export const webhookSenderReactor: ReactorStart = async ({ config, deps, log }) => {
  if (!deps.webhookKey) return null;
  const sender = new WebhookSender({
    reads: deps.reads,
    clock: deps.clock,
    key: deps.webhookKey,
    poster: createWebhookPoster(config.coverFetch),
    intervalMs: config.webhookScanMs,
    onError: (err) => log.error({ err }, 'webhook delivery failed'),
  });
  sender.start();
  return { stop: () => sender.stop(), clockMoved: () => sender.scan() };
};
