/**
 * Where the benchmarks and the crash soak leave their figures: `.bench/<name>.json` (machine-readable, the figures
 * with the command, commit, date and machine they were taken on) and `.bench/<name>.md` (the same as a table), in
 * the repository's `.bench/` folder (gitignored; `BENCH_RESULTS_DIR` moves it). Each run replaces the files of its
 * name. The reviewed figures, against their targets, are copied by hand into docs/performance.md: a run never
 * writes into docs/.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

export interface BenchRun {
  /** The command that reproduces the run, as a reader would type it. */
  command: string;
  /** The figures, as the benchmark names them. */
  figures: unknown;
  /** A Markdown rendering of the figures (a table and its notes), without a heading. */
  markdown: string;
}

function commitOf(): string {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    return dirty.trim() === '' ? head : `${head}+uncommitted`;
  } catch {
    return 'unknown';
  }
}

/** Writes `.bench/<name>.json` and `.bench/<name>.md`; answers the path of the JSON file. */
export function writeBenchResults(name: string, run: BenchRun): string {
  const dir = process.env.BENCH_RESULTS_DIR ? path.resolve(process.env.BENCH_RESULTS_DIR) : path.join(ROOT, '.bench');
  fs.mkdirSync(dir, { recursive: true });
  const cpus = os.cpus();
  const header = {
    name,
    command: run.command,
    commit: commitOf(),
    date: new Date().toISOString(),
    machine: {
      cpus: cpus.length,
      cpu_model: cpus[0]?.model ?? 'unknown',
      memory_gib: Math.round(os.totalmem() / 2 ** 30),
      platform: `${os.platform()} ${os.release()}`,
      node: process.version,
      loadavg_1m: Math.round(os.loadavg()[0] * 10) / 10,
    },
  };
  const json = path.join(dir, `${name}.json`);
  fs.writeFileSync(json, `${JSON.stringify({ ...header, figures: run.figures }, null, 2)}\n`);
  const md = [
    `# ${name}`,
    '',
    `Command: \`${header.command}\`. Commit ${header.commit}, ${header.date}.`,
    `Machine: ${header.machine.cpus} × ${header.machine.cpu_model}, ${header.machine.memory_gib} GiB, ${header.machine.platform}, Node ${header.machine.node}; load average (1 min) ${header.machine.loadavg_1m} at the end.`,
    '',
    run.markdown.trimEnd(),
    '',
  ].join('\n');
  fs.writeFileSync(path.join(dir, `${name}.md`), md);
  return json;
}
