/** The reactors of the service as `ReactorStart`s (see reactors.ts): the batch runner and the cover check. */
import { BatchRunner } from '../../command-api/reactors/batch-runner.js';
import { startCoverChecks } from '../cover/cover-checks.js';
import type { ReactorStart } from './reactors.js';

export const batchRunnerReactor: ReactorStart = async ({ deps, log, recordHistory }) => {
  const runner = new BatchRunner(deps, {
    log,
    onFinished: (job) =>
      void recordHistory({ kind: 'batch_processed', partnerId: job.partnerId, env: job.env, refs: { job_id: job.jobId }, outcome: job.outcome }),
  });
  await runner.start();
  return { stop: () => runner.stop() };
};

/** Off (null) with COVER_CHECK=off. */
export const coverCheckReactor: ReactorStart = async ({ config, deps, log, waitForPosition }) => {
  const covers = await startCoverChecks({ config, deps, log, waitForPosition });
  return covers && { stop: () => covers.stop(), clockMoved: () => covers.clockMoved() };
};
