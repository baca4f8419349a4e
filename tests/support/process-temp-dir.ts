/** A temporary directory that lives as long as the test process: made at the first call, removed at exit. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const dirs = new Map<string, string>();

/** The process's directory for `prefix` (one per prefix), under the system's temporary directory. */
export function processTempDir(prefix: string): string {
  let dir = dirs.get(prefix);
  if (dir === undefined) {
    const made = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
    process.once('exit', () => fs.rmSync(made, { recursive: true, force: true }));
    dirs.set(prefix, (dir = made));
  }
  return dir;
}
