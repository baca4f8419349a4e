/**
 * The free port given to a server started later (nginx, nats-server): outside the kernel's ephemeral range, so no
 * `listen(0)` nor outgoing connection takes it before that server binds it.
 */
import fs from 'node:fs';
import net from 'node:net';
import { expect } from 'chai';
import { spawn } from 'node:child_process';
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
