/**
 * `make run-topology` as an operator runs it: `node dist/infra/wiring/entry/topology.js` as a child process, on free
 * loopback ports and a temp DATA_DIR. It prints its ready lines; a partner flow goes through the gateway (PORT) with a
 * key the admin API (ADMIN_PORT) issued; a service process killed behind its back is started again on its port;
 * SIGTERM stops every process it started (nats-server, nginx and its workers, the five service processes: every
 * descendant, read from /proc) and it exits 0.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { client, partnerHelpers, productBody, storeBody } from '../support/service.js';
import { topologyAvailable } from '../support/topology.js';
import { until, within } from '../support/deadline.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url)); // dist/tests/e2e → repository root
const LAUNCHER = path.join(ROOT, 'dist', 'infra', 'wiring', 'entry', 'topology.js');
const TOKEN = 'run-topology-admin-token-0123';

interface ReadyLine {
  ready: 'topology';
  port: number;
  admin_port: number;
  data_dir: string;
  pids: { launcher: number; nats: number | null; nginx: number | null; services: Record<string, number | null> };
}

/** The process's parent and state, from /proc (undefined once it is gone). */
function stat(pid: number): { ppid: number; state: string } | undefined {
  try {
    const text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { state: fields[0], ppid: Number(fields[1]) };
  } catch {
    return undefined;
  }
}

/** Every process below `root` (children, their children…). */
function descendants(root: number): number[] {
  const parents = new Map<number, number>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const s = stat(Number(entry));
    if (s) parents.set(Number(entry), s.ppid);
  }
  const found: number[] = [];
  let frontier = [root];
  while (frontier.length > 0) {
    const next = [...parents].filter(([, ppid]) => frontier.includes(ppid)).map(([pid]) => pid);
    found.push(...next);
    frontier = next;
  }
  return found;
}

const alive = (pid: number) => {
  const s = stat(pid);
  return s !== undefined && s.state !== 'Z';
};

const available = topologyAvailable();
const onLinux = fs.existsSync('/proc/self/stat');

if (!available.ok || !onLinux) {
  const line = `make run-topology e2e NOT RUN: ${available.ok ? 'no /proc to read the process tree from' : available.why}`;
  process.stderr.write(`${line}\n`);
  describe('make run-topology', () => it(line));
} else {
  describe('make run-topology (node dist/infra/wiring/entry/topology.js as a child process)', function () {
    this.timeout(120_000);
    let dataDir: string;
    let launcher: ChildProcess | undefined;
    let stdout = '';
    let stderr = '';

    before(() => {
      dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-run-topology-'));
    });
    after(async () => {
      if (launcher && launcher.exitCode === null && launcher.signalCode === null) {
        const pids = descendants(launcher.pid!);
        launcher.kill('SIGKILL');
        for (const pid of pids) {
          try {
            process.kill(pid, 'SIGKILL');
          } catch {
            /* gone */
          }
        }
      }
      fs.rmSync(dataDir, { recursive: true, force: true });
    });

    it('starts everything, serves a partner flow through PORT, restarts a crashed process, and SIGTERM leaves nothing running', async () => {
      const proc = spawn(process.execPath, [LAUNCHER], {
        cwd: ROOT,
        env: {
          PATH: process.env.PATH ?? '',
          PORT: '0',
          ADMIN_PORT: '0',
          DATA_DIR: dataDir,
          ADMIN_TOKEN: TOKEN,
          COVER_CHECK: 'off', // no DNS: tests never leave loopback
          COVER_FETCH_ALLOW_PRIVATE: '1', // a test-only setting: warned about once, by the process that checks covers
          LOG_LEVEL: 'warn',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      launcher = proc;
      proc.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      proc.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
        proc.once('exit', (code, signal) => resolve({ code, signal })),
      );
      const output = () => `stdout:\n${stdout.slice(-4000)}\nstderr:\n${stderr.slice(-4000)}`;

      await until(
        () => stdout.includes('{"ready":"topology"') || proc.exitCode !== null,
        60_000,
        'the ready line',
        50,
      ).catch((err: Error) => {
        throw new Error(`${err.message}\n${output()}`);
      });
      const jsonLine = stdout.split('\n').find((l) => l.startsWith('{"ready":"topology"'));
      expect(jsonLine, output()).not.to.equal(undefined);
      const ready = JSON.parse(jsonLine!) as ReadyLine;
      const api = `http://127.0.0.1:${ready.port}/v1`;
      const adminUrl = `http://127.0.0.1:${ready.admin_port}/admin/v1`;
      expect(stderr).to.include(`ready: partner API ${api} · admin API ${adminUrl} · admin token in ADMIN_TOKEN`);
      expect(ready.data_dir).to.equal(dataDir);
      const warnings = stdout.split('\n').filter((l) => l.includes('"test_only_settings"'));
      expect(warnings, output()).to.have.length(1);
      expect(warnings[0]).to.match(/^\[projections\.1\] /);
      expect(Object.keys(ready.pids.services).sort()).to.deep.equal([
        'command-api.1',
        'command-api.2',
        'projections.1',
        'query-api.1',
        'query-api.2',
      ]);

      // Every process it said it started is its child, and running.
      const started = [ready.pids.nats, ready.pids.nginx, ...Object.values(ready.pids.services)].filter(
        (p): p is number => p !== null,
      );
      expect(started).to.have.length(7);
      for (const pid of started) {
        expect(stat(pid)?.ppid, `pid ${pid}`).to.equal(proc.pid);
        expect(alive(pid), `pid ${pid}`).to.equal(true);
      }

      // A partner flow through the gateway, with a key from the admin API on ADMIN_PORT.
      const helpers = partnerHelpers(() => ({ admin: client(adminUrl, TOKEN), api }));
      const hub = await helpers.partner({ type: 'hub' });
      expect((await hub.api.get('/me')).body.partner_id).to.equal(hub.partnerId);
      const store = await hub.api.put('/stores/loja-rt', storeBody());
      expect(store.status, JSON.stringify(store.body)).to.equal(200);
      expect((await helpers.approveStore(hub, 'loja-rt')).body.status).to.equal('active');
      const put = await hub.api.put('/products/rt-1', productBody('loja-rt'));
      expect(put.status, JSON.stringify(put.body)).to.equal(200);
      const got = await hub.api.get('/products/rt-1');
      expect(got.status).to.equal(200);
      expect(got.body).to.include({ sku: 'rt-1', store_id: 'loja-rt' });

      // A command-api killed behind the launcher's back: logged, started again (on its port), writes go on.
      const victim = ready.pids.services['command-api.1']!;
      process.kill(victim, 'SIGKILL');
      await until(() => stderr.includes('restarting command-api.1'), 30_000, 'the restart of command-api.1', 50);
      await until(
        () => descendants(proc.pid!).filter((pid) => stat(pid)?.ppid === proc.pid).length === 7,
        30_000,
        'seven children again',
        50,
      );
      for (let i = 0; i < 6; i++) {
        const again = await hub.api.put(`/products/rt-${i + 2}`, productBody('loja-rt'));
        expect(again.status, JSON.stringify(again.body)).to.equal(200);
      }

      // SIGTERM: every process below the launcher (nginx's workers and nats-server's included) is gone, exit 0.
      const everything = descendants(proc.pid!);
      expect(everything.length).to.be.greaterThan(7); // at least nginx's worker besides the seven children
      proc.kill('SIGTERM');
      const { code, signal } = await within(exited, 60_000, 'the launcher to exit');
      expect({ code, signal }, output()).to.deep.equal({ code: 0, signal: null });
      await until(
        () => everything.every((pid) => !alive(pid)),
        10_000,
        'every process it started to be gone',
        50,
      ).catch((err: Error) => {
        throw new Error(`${err.message}: still running ${everything.filter(alive).join(', ')}\n${output()}`);
      });
      expect(stderr).to.include('[topology] stopped');
    });

    it('never says ready when another program listens on PORT: nginx cannot bind it, and the launcher exits 1', async () => {
      // Another program on the gateway's port answers a probe that only connects, while nginx retries its bind and
      // gives up; the launcher must see that nginx holds no socket there.
      const squatter = net.createServer((socket) => socket.destroy());
      await new Promise<void>((resolve) => squatter.listen(0, '127.0.0.1', resolve));
      const port = (squatter.address() as net.AddressInfo).port;
      const taken = path.join(dataDir, 'taken');
      let out = '';
      let err = '';
      try {
        const proc = spawn(process.execPath, [LAUNCHER], {
          cwd: ROOT,
          env: {
            PATH: process.env.PATH ?? '',
            PORT: String(port),
            HOST: '127.0.0.1',
            ADMIN_PORT: '0',
            DATA_DIR: taken,
            ADMIN_TOKEN: TOKEN,
            COVER_CHECK: 'off',
            LOG_LEVEL: 'warn',
          },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        launcher = proc;
        proc.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
        proc.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
        const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
        const code = await within(exited, 90_000, 'the launcher to give up');
        const output = `stdout:\n${out.slice(-4000)}\nstderr:\n${err.slice(-4000)}`;
        expect(code, output).to.equal(1);
        expect(out, output).not.to.include('"ready":"topology"');
        expect(err, output).not.to.include('ready: partner API');
        expect(err, output).to.include(`bind() to 127.0.0.1:${port} failed`);
        expect(err, output).to.include('nginx did not listen');
      } finally {
        await new Promise((resolve) => squatter.close(resolve));
      }
    });
  });
}
