/**
 * The `ops` command table (infra/ops/cli/commands.ts) and its two runners cannot drift: every command of this file's
 * planners is in the table and the other way round, every example of the table runs, and the stream names of
 * `streams read` are those of shared-schema/domain/streams.ts.
 */
import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { OPS_COMMANDS, OPS_USAGE, isOperationsCommand } from '../../infra/ops/cli/commands.js';
import { PLANNERS, planRequest } from '../../infra/ops/cli/admin-requests.js';
import { runOperationsCommand } from '../../infra/ops/cli/operations-commands.js';
import { isFilesCommand } from '../../infra/ops/cli/backup-commands.js';
import { streams } from '../../shared-schema/domain/streams.js';

class Sink extends Writable {
  text = '';
  override _write(chunk: Buffer, _enc: BufferEncoding, done: () => void): void {
    this.text += chunk.toString('utf8');
    done();
  }
}

describe('ops command table', () => {
  it('names exactly the commands admin-requests.ts plans (help aside)', () => {
    const listed = new Set(OPS_COMMANDS.filter((c) => c.module === 'request' && c.name !== 'help').map((c) => c.name));
    expect(new Set(Object.keys(PLANNERS))).to.deep.equal(listed);
  });

  it('plans every example of admin-requests.ts, and routes every command to the module the table names', () => {
    for (const c of OPS_COMMANDS) {
      expect(isOperationsCommand(c.example), c.name).to.equal(c.module === 'operations');
      expect(isFilesCommand(c.example), c.name).to.equal(c.module === 'files');
      if (c.module === 'request' && c.name !== 'help') expect(() => planRequest(c.example), c.name).not.to.throw();
    }
  });

  it('runs every example of operations-commands.ts (a stub on loopback answers 503: exit 1, never null nor 2)', async () => {
    const server = http.createServer((_req, res) => {
      res.writeHead(503, { 'Content-Type': 'application/json' });
      res.end('{}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const adminUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      for (const c of OPS_COMMANDS.filter((x) => x.module === 'operations')) {
        const err = new Sink();
        const code = await runOperationsCommand(c.example, { adminUrl, token: 't', out: new Sink(), err });
        expect(code, `${c.name}: ${err.text}`).to.equal(1);
      }
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('is the usage: one line per command', () => {
    for (const c of OPS_COMMANDS) expect(OPS_USAGE).to.contain(`ops ${c.name}${c.args ? ` ${c.args}` : ''}`);
  });
});

describe('ops streams read names', () => {
  const t = { partnerId: 'pt_A', env: 'test' as const };
  const path = (...args: string[]) =>
    decodeURIComponent(planRequest(['streams', 'read', ...args]).path.slice('/streams/'.length));

  it('builds each stream name with shared-schema/domain/streams.ts', () => {
    const p = ['--partner', 'pt_A', '--env', 'test'];
    expect(path(...p, '--store', 'loja-1')).to.equal(streams.store(t, 'loja-1'));
    expect(path(...p, '--product', 'sku.1')).to.equal(streams.product(t, 'sku.1'));
    expect(path(...p, '--order', 'loja-1:ord-9')).to.equal(streams.order(t, 'loja-1', 'ord-9'));
    expect(path(...p, '--job', 'job_1')).to.equal(streams.job(t, 'job_1'));
    expect(path(...p, '--click', 'ic_1')).to.equal(streams.click(t, 'ic_1'));
    expect(path('--partner', 'pt_A')).to.equal(streams.partner('pt_A'));
    expect(path('store-live:pt_A:loja-1')).to.equal('store-live:pt_A:loja-1');
  });

  it('refuses an ambiguous or incomplete name', () => {
    for (const args of [
      ['--partner', 'pt_A', '--store', 's'],
      ['--partner', 'pt_A', '--env', 'test'],
      ['--partner', 'pt_A', '--env', 'test', '--store', 's', '--job', 'j'],
      ['--partner', 'pt_A', '--env', 'prod', '--store', 's'],
      ['--partner', 'pt_A', '--env', 'test', '--order', 'no-colon'],
      ['--partner', 'pt_A', '--env', 'test', '--order', ':o'],
      ['--env', 'test', '--store', 's'],
      ['a', 'b'],
      ['store-live:pt_A:s', '--partner', 'pt_A'],
    ]) {
      expect(() => planRequest(['streams', 'read', ...args]), args.join(' ')).to.throw(/./);
    }
  });
});
