/** The reactors of the service as `ReactorStart`s (see reactors.ts): the batch runner and the cover check. */
import { BatchRunner } from '../../command-api/reactors/batch-runner.js';
import { startCoverChecks } from '../cover/cover-checks.js';
import type { ReactorStart } from './reactors.js';

export const batchRunnerReactor: ReactorStart = async ({ deps, log }) => {
  const runner = new BatchRunner(deps, { log });
  await runner.start();
  return { stop: () => runner.stop() };
};

/** Off (null) with COVER_CHECK=off. */
export const coverCheckReactor: ReactorStart = async ({ config, deps, log, waitForPosition }) => {
  const covers = await startCoverChecks({ config, deps, log, waitForPosition });
  return covers && { stop: () => covers.stop(), clockMoved: () => covers.clockMoved() };
};
