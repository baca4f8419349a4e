/**
 * `make demo` (infra/topology/demo/main.ts) as a newcomer runs it: it starts, seeds through the APIs, prints where to look, and
 * what it prints works (the search finds the offers, the offer page opens, the keys answer); Ctrl-C stops it with
 * status 0; a second run on the same data works too, with new keys and the last run's revoked.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { freePort } from '../../infra/topology/ports.js';
import { removeDir, within } from '../support/deadline.js';

const DEMO = fileURLToPath(new URL('../../infra/topology/demo/main.js', import.meta.url));

interface Printed {
  search: string;
  offer: string;
  testKey: string;
  liveKey: string;
  tokenFile: string;
}

interface RunningDemo {
  child: ChildProcess;
  printed: Printed;
  exited: Promise<number | null>;
  output(): string;
}

/** Starts the demo and resolves once it has printed its addresses (rejects with its output if it exits first). */
async function startDemo(env: Record<string, string>): Promise<RunningDemo> {
  const child = spawn(process.execPath, [DEMO], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const line = (label: string) => new RegExp(`^  ${label}\\s+(\\S+)`, 'm').exec(out)?.[1] ?? '';
  const ready = new Promise<Printed>((resolve, reject) => {
    const look = () => {
      if (!/\n {2}stop {8}Ctrl-C/.test(out)) return;
      child.stdout.off('data', look);
      resolve({
        search: line('search'),
        offer: line('offer page'),
        testKey: line('sandbox key'),
        liveKey: line('live key'),
        tokenFile: /admin token in (\S+)/.exec(out)?.[1] ?? '',
      });
    };
    child.stdout.on('data', look);
    void exited.then((code) => reject(new Error(`the demo exited (${code}) before it was ready:\n${out}`)));
  });
  try {
    return { child, printed: await within(ready, 170_000, 'the demo'), exited, output: () => out };
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
}

const get = async (url: string, key?: string) => {
  const res = await fetch(url, key ? { headers: { Authorization: `Bearer ${key}` } } : {});
  return { status: res.status, text: await res.text() };
};

describe('make demo (infra/topology/demo/main.ts)', function () {
  this.timeout(400_000);
  let dataDir: string;
  let otherDataDir: string;
  let env: Record<string, string>;
  let running: RunningDemo | undefined;

  before(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-demo-'));
    otherDataDir = path.join(dataDir, 'make-run-data');
    // DATA_DIR is `make run`'s: the demo must leave it alone.
    env = {
      DEMO_DATA_DIR: dataDir,
      DATA_DIR: otherDataDir,
      PORT: String(await freePort()),
      ADMIN_PORT: String(await freePort()),
    };
  });
  afterEach(async () => {
    if (!running) return;
    running.child.kill('SIGKILL');
    await running.exited;
    running = undefined;
  });
  after(async () => {
    await removeDir(dataDir);
  });

  const stop = async (demo: RunningDemo) => {
    demo.child.kill('SIGINT'); // Ctrl-C
    expect(await within(demo.exited, 60_000, 'the demo stopping'), demo.output()).to.equal(0);
    running = undefined;
  };

  const expectWorking = async (printed: Printed) => {
    expect(printed.search).to.equal(`http://127.0.0.1:${env.PORT}/busca?q=camiseta`);
    const search = await get(printed.search);
    expect(search.status).to.equal(200);
    expect(search.text).to.include('Camiseta azul de algodão').and.include('Camiseta verde de algodão');
    expect(search.text).to.include(new URL(printed.offer).pathname); // the page the demo printed is the one linked
    const offer = await get(printed.offer);
    expect(offer.status, printed.offer).to.equal(200);
    expect(offer.text).to.include('Camiseta');
    const me = (key: string) => get(`http://127.0.0.1:${env.PORT}/v1/me`, key);
    expect(JSON.parse((await me(printed.liveKey)).text)).to.include({ environment: 'live' });
    expect(JSON.parse((await me(printed.testKey)).text)).to.include({ environment: 'test' });
    expect(printed.tokenFile).to.equal(path.join(dataDir, 'admin-token'));
    expect(fs.readFileSync(printed.tokenFile, 'utf8').trim()).to.have.length.greaterThan(15);
  };

  it('prints a search that finds the offers, an offer page that opens and working keys; Ctrl-C stops it', async () => {
    running = await startDemo(env);
    await expectWorking(running.printed);
    expect(fs.existsSync(otherDataDir)).to.equal(false);
    await stop(running);
  });

  it('works again on the same data: the same offers, new keys, the last run’s keys revoked', async () => {
    const first = await startDemo(env);
    running = first;
    await stop(first);
    running = await startDemo(env);
    await expectWorking(running.printed);
    expect(running.printed.offer).to.equal(first.printed.offer);
    expect(running.printed.liveKey).not.to.equal(first.printed.liveKey);
    expect((await get(`http://127.0.0.1:${env.PORT}/v1/me`, first.printed.liveKey)).status).to.equal(401);
    await stop(running);
  });

  it('a taken port is one line and status 1, not a stack trace', async () => {
    const port = await freePort();
    const held = net.createServer();
    await new Promise<void>((resolve) => held.listen(port, '127.0.0.1', resolve));
    try {
      const demo = spawn(process.execPath, [DEMO], {
        env: { PATH: process.env.PATH ?? '', ...env, PORT: String(port) },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let err = '';
      demo.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
      const code = await within(
        new Promise<number | null>((resolve) => demo.once('exit', resolve)),
        60_000,
        'the demo',
      );
      expect(code).to.equal(1);
      expect(err).to.equal(`demo: cannot listen on 127.0.0.1:${port}: address in use (set PORT)\n`);
    } finally {
      await new Promise((resolve) => held.close(resolve));
    }
  });
});
