/**
 * Which b-trees a run's commits wrote to the read store's write-ahead log, frame by frame (not a test; a diagnosis):
 *
 *   strace -f -e trace=pwrite64,openat -xx -s 8 -o <trace> env SCALE_ONLY=A SCALE_SKUS=20000 SCALE_KEEP_DIR=1 \
 *     node dist/tests/bench/scale.js
 *   node dist/tests/bench/wal-frames.js <trace> <the kept data dir>/read.db [items]
 *
 * SQLite writes each frame of the log as a 24-byte header (the page number, then the database size after the commit
 * on a commit's last frame) and the page. The headers written to `read.db-wal` are read from the trace, each page
 * number is named by `dbstat` on the database after the run (pages freed and reused meanwhile are named by their last
 * owner), and the frames are counted per table and index, per commit and per item when `items` is given. A commit's
 * CPU follows its frames: each is two writes, and a checkpoint copies it again.
 */
import fs from 'node:fs';
import Database from 'better-sqlite3';

const [trace, dbPath, itemsArg] = process.argv.slice(2);
if (!trace || !dbPath) {
  process.stderr.write('usage: node dist/tests/bench/wal-frames.js <strace output> <read.db> [items]\n');
  process.exit(2);
}
const bytesOf = (hex: string): number[] =>
  hex
    .split('\\x')
    .slice(1)
    .map((h) => parseInt(h, 16));
const lines = fs.readFileSync(trace, 'utf8').split('\n');

// The descriptors the log was opened as, in any process of the trace (strace -xx prints paths in hex).
const logFds = new Set<string>();
for (const line of lines) {
  const open = /openat\(AT_FDCWD, "([^"]*)", [^)]*\) = (\d+)/.exec(line);
  if (open && Buffer.from(bytesOf(open[1])).toString().endsWith('/read.db-wal')) logFds.add(open[2]);
}

const db = new Database(dbPath, { readonly: true });
const owner = new Map<number, string>();
for (const row of db.prepare('SELECT name, pageno FROM dbstat').all() as { name: string; pageno: number }[])
  owner.set(row.pageno, row.name);
db.close();

const frames = new Map<string, number>();
let total = 0;
let commits = 0;
for (const line of lines) {
  const header = /pwrite64\((\d+), "((?:\\x[0-9a-f]{2}){8})"\.\.\., 24,/.exec(line);
  if (!header || !logFds.has(header[1])) continue;
  const b = bytesOf(header[2]);
  const page = ((b[0] << 24) | (b[1] << 16) | (b[2] << 8) | b[3]) >>> 0;
  if (((b[4] << 24) | (b[5] << 16) | (b[6] << 8) | b[7]) >>> 0 !== 0) commits++;
  const name = owner.get(page) ?? '(free or gone)';
  frames.set(name, (frames.get(name) ?? 0) + 1);
  total++;
}
const items = Number(itemsArg ?? 0);
const per = (n: number) => (items > 0 ? (n / items).toFixed(2) : (n / Math.max(commits, 1)).toFixed(2));
const out = [
  `${total} frames in ${commits} commits (${(total / Math.max(commits, 1)).toFixed(1)} a commit${items > 0 ? `, ${(total / items).toFixed(2)} an item` : ''}); by b-tree, ${items > 0 ? 'an item' : 'a commit'}:`,
  ...[...frames]
    .sort((a, b) => b[1] - a[1])
    .map(([name, n]) => `${String(n).padStart(9)} ${per(n).padStart(7)}  ${name}`),
];
process.stdout.write(`${out.join('\n')}\n`);
