/**
 * Runs HTTP end-to-end files unchanged against the distributed topology: a separate mocha process with
 * `TOPOLOGY=multi`, where `startTestService()` starts two command-api replicas, two query-api replicas, one
 * projections process, a nats-server and nginx (tests/support/topology-service.ts).
 *
 * By default the foundation suite; `TOPOLOGY_E2E=all` runs every `*.e2e.spec.js` of this folder but the topology
 * ones; `TOPOLOGY_E2E=a.e2e.spec.js,b.e2e.spec.js` runs those.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { topologyAvailable } from '../support/topology.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '../../..');
const MOCHA = path.join(ROOT, 'node_modules', 'mocha', 'bin', 'mocha.js');
const OWN = ['e2e-in-topology.e2e.spec.js', 'topology.e2e.spec.js'];
const RUN_DEADLINE_MS = 120_000;

function files(): string[] {
  const choice = process.env.TOPOLOGY_E2E;
  if (!choice) return ['foundation.e2e.spec.js'];
  if (choice === 'all') return fs.readdirSync(HERE).filter((f) => f.endsWith('.e2e.spec.js') && !OWN.includes(f)).sort();
  return choice.split(',').map((f) => f.trim()).filter(Boolean);
}

/** Runs one spec file in its own process group, so that a stuck run is killed with everything it started. */
function runInTopology(file: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [MOCHA, '--no-config', '--timeout', '30000', '--exit', '--reporter', 'dot', path.join(HERE, file)], {
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
    child.once('exit', (code) => {
      clearTimeout(timer);
      process.removeListener('exit', killGroup);
      killGroup(); // anything the run left behind
      resolve({ code, output });
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
    for (const file of files()) {
      it(`passes ${file}`, async () => {
        const { code, output } = await runInTopology(file);
        expect(code, output).to.equal(0);
        const passing = Number(/(\d+) passing/.exec(output)?.[1] ?? 0);
        expect(passing, output).to.be.greaterThan(0);
        expect(output).not.to.match(/\d+ failing/);
      });
    }
  });
}
