/**
 * The service as its own process (`node dist/infra/main.js`): a full flow at LOG_LEVEL=debug, then SIGTERM with a
 * request in flight. Its logs are read afterwards: one JSON line per request with the fields, and no key, admin
 * token or body anywhere.
 */
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SqliteEventStore } from '../../infra/adapters/sqlite/event-store.js';
import { SqliteReadStore } from '../../infra/adapters/sqlite/read-store.js';
import { client, productBody, storeBody, type Client } from '../support/service.js';
import { until, within } from '../support/deadline.js';

const MAIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../infra/main.js');
const ADMIN_TOKEN = 'process-test-admin-token-0123456789';
/**
 * The process's own shutdown bound (SHUTDOWN_TIMEOUT_MS): it exits 1 when the graceful stop has not finished by then,
 * so exit code 0 is the proof that it stopped in time. Generous, so that a busy machine does not make it exit 1.
 */
const SHUTDOWN_BOUND_MS = 20_000;

describe('the service process: logs and graceful shutdown', function () {
  this.timeout(90_000);
  let dir: string;
  let child: ChildProcess;
  let stdout = '';
  let stderr = '';
  let exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  let api: string;
  let admin: Client;
  let adminOrigin: string;
  const secrets: string[] = [ADMIN_TOKEN];
  const markers: string[] = [];
  let apiKey = '';
  let productRequestId = '';

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-process-'));
    child = spawn(process.execPath, [MAIN], {
      env: {
        PATH: process.env.PATH ?? '',
        PORT: '0',
        ADMIN_PORT: '0',
        DATA_DIR: dir,
        ADMIN_TOKEN,
        LOG_LEVEL: 'debug',
        SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_BOUND_MS),
        COVER_CHECK: 'off', // test host names must never reach DNS
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
    exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
    await until(() => /"msg":"partner commerce service started"/.test(stdout), 20_000, 'service started');
    const started = JSON.parse(stdout.split('\n').find((l) => l.includes('partner commerce service started'))!) as {
      api: string;
      admin: string;
    };
    api = started.api;
    admin = client(started.admin, ADMIN_TOKEN);
    adminOrigin = new URL(started.admin).origin;
  });

  after(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('serves a full flow', async () => {
    const partner = await admin.post('/partners', { name: 'Parceiro Processo', partner_type: 'hub' });
    expect(partner.status).to.equal(201);
    const partnerId = partner.body.partner_id as string;
    const live = await admin.post(`/partners/${partnerId}/keys`, { environment: 'live' });
    const test = await admin.post(`/partners/${partnerId}/keys`, { environment: 'test' });
    apiKey = live.body.api_key;
    secrets.push(live.body.api_key, test.body.api_key);
    const hub = client(api, apiKey);
    const store = storeBody({ name: 'Loja Marcador Processo' });
    markers.push('Loja Marcador Processo', store.cnpj, 'Titulo Marcador Processo');
    expect((await hub.put('/stores/loja-p', store)).status).to.equal(200);
    expect((await admin.post(`/partners/${partnerId}/live/stores/loja-p/approve`, {})).status).to.equal(200);
    const put = await hub.put('/products/sku-p1', productBody('loja-p', { title: 'Titulo Marcador Processo' }));
    expect(put.status).to.equal(200);
    productRequestId = put.headers.get('x-request-id')!;
    expect(
      (await hub.patch('/products/sku-p1', { price_cents: 100, updated_at: '2026-01-01T00:00:00Z' })).status,
    ).to.equal(200);
    expect((await hub.get('/products/sku-p1')).status).to.equal(200);
    expect((await hub.get('/products?limit=1')).status).to.equal(200);
    expect((await client(api, test.body.api_key).get('/me')).status).to.equal(200);
    const wrongKey = 'ik_live_' + 'Z'.repeat(32);
    secrets.push(wrongKey);
    expect((await client(api, wrongKey).get('/me')).status).to.equal(401);
    expect((await hub.put('/products/sku-bad', { segredo: 'Valor Marcador Processo' })).status).to.equal(422);
    markers.push('Valor Marcador Processo');
    expect((await admin.get(`/partners/${partnerId}/history`)).status).to.equal(200);
    expect((await admin.post('/audit/verify', {})).body.ok).to.equal(true);
    expect((await fetch(`${adminOrigin}/metrics`)).status).to.equal(200);
    expect((await fetch(`${adminOrigin}/admin/v1/health/ready`)).status).to.equal(200);
  });

  it('on SIGTERM finishes the request in flight (200), saves checkpoints and exits 0 within the bound', async () => {
    const body = JSON.stringify(productBody('loja-p', { title: 'Em voo' }));
    const url = new URL(`${api}/products/sku-inflight`);
    const answer = new Promise<{ status: number; body: string; connection: string | undefined }>((resolve, reject) => {
      const req = http.request(
        {
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          method: 'PUT',
          headers: {
            Authorization: `Bearer ${apiKey}`,
            'Content-Type': 'application/json',
            'Content-Length': Buffer.byteLength(body),
            Expect: '100-continue',
          },
        },
        (res) => {
          let text = '';
          res.on('data', (d: Buffer) => (text += d.toString('utf8')));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text, connection: res.headers.connection }));
        },
      );
      req.on('error', reject);
      // The server has the request (headers read, handler waiting for the body): now stop it, then send the body.
      req.on('continue', () => {
        child.kill('SIGTERM');
        until(() => stdout.includes('"msg":"shutting down"'), SHUTDOWN_BOUND_MS, 'shutdown began').then(
          () => req.end(body),
          (err: unknown) => reject(err),
        );
      });
      req.flushHeaders();
    });
    const r = await within(answer, SHUTDOWN_BOUND_MS, 'the request in flight');
    expect(r.status, r.body).to.equal(200);
    expect(JSON.parse(r.body)).to.include({ sku: 'sku-inflight' });
    const exit = await within(exited, SHUTDOWN_BOUND_MS + 1000, 'process exit');
    // 0: the graceful stop ended within SHUTDOWN_TIMEOUT_MS (the process measures it; past it, it exits 1).
    expect(exit).to.deep.equal({ code: 0, signal: null });
    // The work is on disk: every projection's checkpoint reached the head of the log, the product is in the model.
    const events = SqliteEventStore.open({ path: path.join(dir, 'events.db') });
    const reads = SqliteReadStore.open({ path: path.join(dir, 'read.db'), sweepIntervalMs: 0 });
    try {
      const head = await events.headPosition();
      for (const name of ['partners', 'stores', 'products'])
        expect(await reads.getCheckpoint(name), name).to.equal(head);
      const product = await reads.get<{ _id: string; sku: string }>(
        'products',
        (await reads.find<{ _id: string; sku: string }>('products', { where: { sku: 'sku-inflight' } }))[0]?._id ??
          'none',
      );
      expect(product?.sku).to.equal('sku-inflight');
    } finally {
      await events.close();
      await reads.close();
    }
  });

  it('logged one JSON line per request with its fields, and never a key, the admin token or a body', () => {
    const lines = stdout.split('\n').filter((l) => l.trim() !== '');
    const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    const line = parsed.find((l) => l.msg === 'request' && l.request_id === productRequestId);
    expect(line, 'request line of the product PUT').to.not.equal(undefined);
    expect(line).to.include({ method: 'PUT', route: '/products/:sku', status: 200, environment: 'live' });
    expect(line!.partner_id).to.match(/^pt_/);
    expect(line!.key_id).to.match(/^key_/);
    expect(line!.ms).to.be.a('number');
    expect(line!.time).to.be.a('number');
    expect(parsed.filter((l) => l.msg === 'request').length).to.be.at.least(9);
    const all = stdout + stderr;
    for (const secret of secrets) expect(all.includes(secret), 'a credential reached the logs').to.equal(false);
    for (const marker of markers)
      expect(all.includes(marker), `a body value (${marker}) reached the logs`).to.equal(false);
    expect(all).not.to.match(/ik_(live|test)_[A-Za-z0-9]{32}/);
  });
});
