/**
 * The free port given to a server started later (nginx, nats-server): outside the kernel's ephemeral range, so no
 * `listen(0)` nor outgoing connection takes it before that server binds it.
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { execFile, spawn } from 'node:child_process';
import { spawnService, type ChildService } from '../support/child-service.js';
import { freePort, holdsListener, unassignedSpans } from '../../infra/topology/ports.js';

describe('free ports for servers started later (infra/topology/ports.ts)', () => {
  it('reads the spans the kernel does not hand out from ip_local_port_range', () => {
    expect(unassignedSpans('32768\t60999\n')).to.deep.equal([
      [10_000, 32_767],
      [61_000, 65_535],
    ]);
    // A span narrower than 1,000 ports is not used; a range covering everything leaves none (the kernel's choice).
    expect(unassignedSpans('10500 64999')).to.deep.equal([]);
    expect(unassignedSpans('1024 65535')).to.deep.equal([]);
    expect(unassignedSpans('')).to.deep.equal([]);
  });

  it('gives a port outside the ephemeral range that a server can then listen on', async function () {
    const range = fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    const ports = [await freePort(), await freePort(), await freePort()];
    for (const port of ports) {
      expect(port < range[0] || port > range[1], `${port} is inside ${range.join('–')}`).to.equal(true);
      const server = net.createServer();
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, '127.0.0.1', resolve);
      });
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("passes over a port that is taken, and takes the kernel's choice when every one is", async () => {
    const port = await freePort();
    const held = net.createServer();
    await new Promise<void>((resolve) => held.listen(port, '127.0.0.1', resolve));
    try {
      const other = await freePort(); // free, and not the held one
      for (let i = 0; i < 10; i++)
        expect(
          await freePort('127.0.0.1', [
            [port, port],
            [other, other],
          ]),
        ).to.equal(other);
      const fallback = await freePort('127.0.0.1', [[port, port]]);
      expect(fallback).not.to.equal(port);
      expect(fallback).to.be.greaterThan(0);
    } finally {
      await new Promise((resolve) => held.close(resolve));
    }
  });

  it('tells which process holds the socket listening on a port', async () => {
    const port = await freePort();
    expect(holdsListener(process.pid, port)).to.equal(false); // nobody listens
    const child = spawn(
      process.execPath,
      ['-e', `require('net').createServer().listen(${port}, '127.0.0.1', () => console.log('up'))`],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    try {
      await new Promise<void>((resolve, reject) => {
        child.stdout.once('data', () => resolve());
        child.once('exit', (code) => reject(new Error(`the listener exited (${code})`)));
      });
      expect(holdsListener(child.pid!, port)).to.equal(true);
      expect(holdsListener(process.pid, port)).to.equal(false); // it answers a connect, but this process holds nothing
    } finally {
      child.kill('SIGKILL');
    }
  });
});

describe('start-up lines of `make run` (infra/wiring/entry/main.ts, infra/wiring/startup-notices.ts)', function () {
  this.timeout(60_000);
  const MAIN = fileURLToPath(new URL('../../infra/main.js', import.meta.url));

  /** Runs the service's entry until it exits by itself; its stdout and stderr as they were written. */
  const runToExit = (env: Record<string, string>) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-ports-'));
      execFile(
        process.execPath,
        [MAIN],
        {
          env: { PATH: process.env.PATH ?? '', DATA_DIR: dataDir, COVER_CHECK: 'off', LOG_LEVEL: 'info', ...env },
          timeout: 50_000,
        },
        (err, stdout, stderr) => {
          fs.rmSync(dataDir, { recursive: true, force: true });
          resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : null, stdout, stderr });
        },
      );
    });

  const holding = async (fn: (port: number) => Promise<void>) => {
    const port = await freePort();
    const held = net.createServer();
    await new Promise<void>((resolve) => held.listen(port, '127.0.0.1', resolve));
    try {
      await fn(port);
    } finally {
      await new Promise((resolve) => held.close(resolve));
    }
  };

  it('a taken port prints one line naming the address and the variable, and exits 1', async () => {
    await holding(async (port) => {
      const r = await runToExit({ PORT: String(port), ADMIN_PORT: '0' });
      expect(r.code, r.stdout + r.stderr).to.equal(1);
      expect(r.stderr).to.equal(`cannot listen on 127.0.0.1:${port}: address in use (set PORT)\n`);
    });
    await holding(async (port) => {
      const free = await freePort();
      const r = await runToExit({ PORT: String(free), ADMIN_PORT: String(port) });
      expect(r.code, r.stdout + r.stderr).to.equal(1);
      expect(r.stderr).to.equal(`cannot listen on 127.0.0.1:${port}: address in use (set ADMIN_PORT)\n`);
    });
  });

  it('warns once, at start, that the test-only cover settings are on; says nothing without them', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-warn-'));
    const service = await spawnService({
      DATA_DIR: dir,
      COVER_CHECK: 'on',
      COVER_FETCH_HOSTS: 'shop.test=127.0.0.1',
      COVER_FETCH_ALLOW_PRIVATE: '1',
    });
    const plain = await spawnService({ DATA_DIR: path.join(dir, 'plain') });
    try {
      const warnings = (s: ChildService) =>
        s
          .tail()
          .split('\n')
          .filter((l) => l.startsWith('{'))
          .map((l) => JSON.parse(l) as { level: number; msg: string; test_only_settings?: string[] })
          .filter((l) => l.level === 40 && l.test_only_settings);
      const [warning, ...more] = warnings(service);
      expect(more).to.deep.equal([]);
      expect(warning.test_only_settings).to.deep.equal(['COVER_FETCH_HOSTS', 'COVER_FETCH_ALLOW_PRIVATE']);
      expect(warning.msg).to.match(/^COVER_FETCH_HOSTS, COVER_FETCH_ALLOW_PRIVATE are set: test-only/);
      expect(warnings(plain)).to.deep.equal([]);
    } finally {
      service.process.kill('SIGTERM');
      plain.process.kill('SIGTERM');
      await Promise.all([service.exited, plain.exited]);
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
