/**
 * Runs HTTP end-to-end files unchanged against the distributed topology: one separate mocha process with
 * `TOPOLOGY=multi`, where `startTestService()` starts two command-api replicas, two query-api replicas, one
 * projections process, a nats-server and nginx (tests/support/topology-service.ts).
 *
 * By default (and with `TOPOLOGY_E2E=all`) the whole HTTP end-to-end suite: every file of this folder that uses
 * `startTestService`. `TOPOLOGY_E2E=core` the shorter list of `CORE`, for a quick local run;
 * `TOPOLOGY_E2E=a.e2e.spec.js,b.e2e.spec.js` those files.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { topologyAvailable } from '../support/topology.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '../../..');
const MOCHA = path.join(ROOT, 'node_modules', 'mocha', 'bin', 'mocha.js');
const OWN = ['e2e-in-topology.e2e.spec.js', 'topology.e2e.spec.js'];
const RUN_DEADLINE_MS = 900_000; // a bound on a stuck run, not on a slow one: a busy machine takes minutes longer

/**
 * `TOPOLOGY_E2E=core`: the core of the contract, the redirector (a GET served by the command-api process), one file
 * of each reactor and the admin API (in the projections process), in about half the time of the whole suite.
 */
const CORE = [
  'foundation.e2e.spec.js',
  'conventions.e2e.spec.js',
  'stores.e2e.spec.js',
  'products.e2e.spec.js',
  'idempotency.e2e.spec.js',
  'batch.e2e.spec.js',
  'cover-lifecycle.e2e.spec.js',
  'commerce-clicks.e2e.spec.js',
  'commerce-conversions.e2e.spec.js',
  'ops.e2e.spec.js',
];

/** Every e2e file of this folder that starts its service with `startTestService`, but the topology ones. */
function allFiles(): string[] {
  return fs
    .readdirSync(HERE)
    .filter((f) => f.endsWith('.e2e.spec.js') && !OWN.includes(f))
    .filter((f) => fs.readFileSync(path.join(HERE, f), 'utf8').includes('startTestService('))
    .sort();
}

function files(): string[] {
  const choice = process.env.TOPOLOGY_E2E;
  if (choice === undefined || choice === '' || choice === 'all') return allFiles();
  if (choice === 'core') return CORE.filter((f) => fs.existsSync(path.join(HERE, f)));
  return choice
    .split(',')
    .map((f) => f.trim())
    .filter(Boolean);
}

interface MochaJson {
  stats: { passes: number; failures: number };
  passes: { fullTitle: string; file: string }[];
  failures: { fullTitle: string; file?: string; err: { message?: string; stack?: string } }[];
}

/**
 * Runs the files in one mocha process (each file still starts its own topology) in its own process group, so that
 * a stuck run is killed with everything it started. Resolves to mocha's JSON report, or undefined with the output.
 */
function runInTopology(list: string[]): Promise<{ report: MochaJson | undefined; output: string }> {
  const reportFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'pc-e2e-multi-')), 'report.json');
  return new Promise((resolve) => {
    const args = [
      MOCHA,
      '--no-config',
      '--timeout',
      '60000',
      '--exit',
      '--reporter',
      'json',
      '--reporter-option',
      `output=${reportFile}`,
    ];
    const child = spawn(process.execPath, [...args, ...list.map((f) => path.join(HERE, f))], {
      env: { ...process.env, TOPOLOGY: 'multi' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let output = '';
    const keep = (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-20_000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const killGroup = () => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        /* already gone */
      }
    };
    const timer = setTimeout(() => {
      output += `\n(killed after ${RUN_DEADLINE_MS} ms)`;
      killGroup();
    }, RUN_DEADLINE_MS);
    process.once('exit', killGroup);
    child.once('exit', () => {
      clearTimeout(timer);
      process.removeListener('exit', killGroup);
      killGroup(); // anything the run left behind
      let report: MochaJson | undefined;
      try {
        report = JSON.parse(fs.readFileSync(reportFile, 'utf8')) as MochaJson;
      } catch {
        report = undefined;
      }
      fs.rmSync(path.dirname(reportFile), { recursive: true, force: true });
      resolve({ report, output });
    });
  });
}

const available = topologyAvailable();

if (process.env.TOPOLOGY === 'multi') {
  // Already inside a topology run: nothing to nest.
} else if (!available.ok) {
  const line = `HTTP e2e suite in the multi-process topology NOT RUN: ${available.why}`;
  process.stderr.write(`${line}\n`);
  describe('HTTP e2e suite in the multi-process topology', () => it(line));
} else {
  describe('HTTP e2e suite in the multi-process topology (TOPOLOGY=multi: 2 command-api, 2 query-api, 1 projections, NATS, nginx)', function () {
    this.timeout(RUN_DEADLINE_MS + 10_000);
    const list = files();
    let run: { report: MochaJson | undefined; output: string };
    before(async () => {
      run = await runInTopology(list);
    });
    for (const file of list) {
      it(`passes ${file}`, () => {
        expect(run.report, `no report from the run:\n${run.output}`).not.to.equal(undefined);
        const full = path.join(HERE, file);
        const failures = run.report!.failures.filter(
          (f) => f.file === full || (f.file === undefined && run.report!.passes.every((p) => p.file !== full)),
        );
        const failed = failures.map((f) => `${f.fullTitle}\n${f.err.stack ?? f.err.message ?? ''}`).join('\n\n');
        expect(failures, `${failed}\n\nthe run's last output:\n${run.output.slice(-4000)}`).to.have.length(0);
        expect(
          run.report!.passes.filter((p) => p.file === full).length,
          `no test of ${file} passed:\n${run.output}`,
        ).to.be.greaterThan(0);
      });
    }
  });
}
