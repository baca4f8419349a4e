/**
 * `ops backup` and `ops restore`: the embedded default's files, on the service's own host (they read and write
 * DATA_DIR directly, not through the admin API: a backup is bytes on a disk, and the admin port must not be a way to
 * write files anywhere on the host).
 *
 * `ops backup --to DIR` takes a consistent snapshot of each SQLite database while the service runs: `VACUUM INTO`
 * on a read-only connection copies the database as one read transaction sees it (writers go on; unlike the page by
 * page backup API it is never restarted by their commits). The read models are taken before the log they follow,
 * so a restored read model is never ahead of the restored log: the projections catch up from their checkpoints.
 * The secrets the service generated into DATA_DIR (admin-token, cursor-secret, webhook-key: without it every
 * partner's webhook signing secret would change) are copied too. Every file written, database or secret, is mode
 * 0600: the databases hold partners' data and key hashes, as in DATA_DIR (infra/adapters/sqlite/private-file.ts).
 *
 * `ops restore --from DIR --to DATA_DIR` copies a backup into a DATA_DIR that is new or empty (never over a service's
 * files); start the service on it.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { UsageError, parseArgs } from './commands.js';
import { printed } from './tables.js';
import type { Output } from './admin-requests.js';
import { makePrivate, PRIVATE_FILE_MODE } from '../../adapters/sqlite/private-file.js';
import { SECRET_FILES } from '../../wiring/data-dir-secret.js';

/** Read models and history first, the log last (see the file's comment). */
const DATABASES = ['read.db', 'history.db', 'events.db'] as const;
const SECRETS = Object.values(SECRET_FILES);

class BackupError extends Error {}

/** The directories the command line names, each option required and resolved; anything else is a usage error. */
function directories<N extends string>(args: readonly string[], names: readonly N[]): Record<N, string> {
  const { words, flags } = parseArgs(args);
  if (words.length > 0) throw new UsageError(`unexpected argument: ${words[0]}`);
  const unknown = [...flags.keys()].filter((f) => !(names as readonly string[]).includes(f));
  if (unknown.length > 0) throw new UsageError(`unknown option(s): ${unknown.map((f) => `--${f}`).join(', ')}`);
  const missing = names.filter((n) => !flags.get(n));
  if (missing.length > 0) throw new UsageError(`${missing.map((n) => `--${n}`).join(', ')} required`);
  return Object.fromEntries(names.map((n) => [n, path.resolve(flags.get(n)!)])) as Record<N, string>;
}

/** A directory to fill: absent (made, mode 0700) or empty. */
function freshDirectory(dir: string): void {
  if (fs.existsSync(dir) && fs.readdirSync(dir).length > 0) throw new BackupError(`${dir} is not empty`);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
}

const sizeOf = (file: string) => fs.statSync(file).size;

function backup(dataDir: string, to: string): { file: string; bytes: number }[] {
  if (!fs.existsSync(path.join(dataDir, 'events.db')))
    throw new BackupError(
      `no events.db in ${dataDir}: set DATA_DIR to the service's; a service on EventStoreDB/MongoDB is backed up with their tools`,
    );
  freshDirectory(to);
  const done: { file: string; bytes: number }[] = [];
  for (const name of DATABASES) {
    const source = path.join(dataDir, name);
    if (!fs.existsSync(source)) continue;
    const db = new Database(source, { readonly: true, fileMustExist: true });
    try {
      db.pragma('busy_timeout = 10000');
      makePrivate(path.join(to, name)); // an empty file of mode 0600, which VACUUM INTO fills
      db.prepare('VACUUM INTO ?').run(path.join(to, name));
    } finally {
      db.close();
    }
    done.push({ file: name, bytes: sizeOf(path.join(to, name)) });
  }
  for (const name of SECRETS) {
    const source = path.join(dataDir, name);
    if (!fs.existsSync(source)) continue;
    fs.copyFileSync(source, path.join(to, name));
    fs.chmodSync(path.join(to, name), PRIVATE_FILE_MODE);
    done.push({ file: name, bytes: sizeOf(path.join(to, name)) });
  }
  return done;
}

function restore(from: string, dataDir: string): { file: string; bytes: number }[] {
  if (!fs.existsSync(path.join(from, 'events.db'))) throw new BackupError(`no events.db in ${from}: not a backup`);
  freshDirectory(dataDir);
  const done: { file: string; bytes: number }[] = [];
  for (const name of [...DATABASES, ...SECRETS]) {
    const source = path.join(from, name);
    if (!fs.existsSync(source)) continue;
    fs.copyFileSync(source, path.join(dataDir, name), fs.constants.COPYFILE_EXCL);
    fs.chmodSync(path.join(dataDir, name), PRIVATE_FILE_MODE); // whatever the backup's files became since
    done.push({ file: name, bytes: sizeOf(path.join(dataDir, name)) });
  }
  return done;
}

export const isFilesCommand = (argv: readonly string[]): boolean => argv[0] === 'backup' || argv[0] === 'restore';

/** Runs `ops backup` / `ops restore`; resolves to the exit status (UsageError is the caller's to print). */
export function runFilesCommand(argv: readonly string[], env: NodeJS.ProcessEnv, io: Output, json: boolean): number {
  const [command, ...rest] = argv;
  try {
    if (command === 'backup') {
      const dataDir = path.resolve(env.DATA_DIR || 'data');
      const { to } = directories(rest, ['to']);
      io.out(printed({ backup: to, data_dir: dataDir, files: backup(dataDir, to) }, json));
      return 0;
    }
    const { from, to } = directories(rest, ['from', 'to']);
    io.out(printed({ restored: to, from, files: restore(from, to) }, json));
    return 0;
  } catch (err) {
    // A refusal of ours, or the file system's (no room, no permission, a path that is a file): exit 1 with why.
    if (err instanceof UsageError || !(err instanceof BackupError || (err instanceof Error && 'code' in err)))
      throw err;
    io.err(`ops: ${err.message}\n`);
    return 1;
  }
}
