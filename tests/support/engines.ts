/** Which servers the test services run on, each isolated on them (see `engineEnv`). */
import { createHash } from 'node:crypto';
import path from 'node:path';

/**
 * With EVENTSTORE_URL / MONGO_URL in the test process's environment (`make test-engines`), every test service runs
 * on those servers, isolated from every other one: its own stream namespace on EventStoreDB and its own database
 * on MongoDB, both named after its DATA_DIR (so a restart on the same DATA_DIR finds its data again). Without them:
 * {} (the SQLite files of DATA_DIR). NATS stays per service (in-process, or the test's own).
 */
export function engineEnv(processEnv: NodeJS.ProcessEnv, dataDir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const ns = namespaceOf(dataDir);
  if (processEnv.EVENTSTORE_URL) {
    out.EVENTSTORE_URL = processEnv.EVENTSTORE_URL;
    out.EVENTSTORE_STREAM_PREFIX = `${ns}_`;
  }
  if (processEnv.MONGO_URL) {
    out.MONGO_URL = processEnv.MONGO_URL;
    out.MONGO_DB = `pc_${ns}`;
  }
  return out;
}

/** `t` + 16 hex digits derived from the directory's path (letters and digits only: no `-`). */
export function namespaceOf(dataDir: string): string {
  return `t${createHash('sha256').update(path.resolve(dataDir)).digest('hex').slice(0, 16)}`;
}
