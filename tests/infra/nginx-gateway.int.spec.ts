/**
 * The gateway's nginx configuration, rendered from infra/topology/deploy/nginx.conf.template with loopback upstreams and
 * run for real: reads go to the query API, writes to the command API, bodies stream to the service as they arrive,
 * bodies above the route's limit get a problem+json 413 without reaching a service whole, X-Request-Id passes both
 * ways, upstream connections are reused.
 */
import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import YAML from 'yaml';
import { renderNginxConf, templatePath } from '../../infra/topology/deploy/render-nginx.js';
import { freePort } from '../../infra/topology/ports.js';
import { holdUpload, upload } from '../support/upload.js';
import { until, within } from '../support/deadline.js';

interface Seen {
  side: 'command' | 'query';
  method: string;
  url: string;
  requestId: string | undefined;
  bytes: number;
}

function findNginx(): string | undefined {
  const which = spawnSync('sh', ['-c', 'command -v nginx'], { encoding: 'utf8' });
  if (which.status === 0 && which.stdout.trim()) return which.stdout.trim();
  return ['/usr/sbin/nginx', '/usr/local/sbin/nginx'].find((p) => existsSync(p));
}

/** The URLs of the requests a service has started to receive, their bodies still arriving or not. */
const arriving: string[] = [];

function upstream(side: Seen['side'], seen: Seen[], connections: { count: number }): Promise<Server> {
  const server = createServer((req, res) => {
    arriving.push(req.url ?? '');
    let bytes = 0;
    req.on('data', (chunk: Buffer) => (bytes += chunk.length));
    req.on('end', () => {
      const requestId = req.headers['x-request-id'];
      seen.push({
        side,
        method: req.method ?? '',
        url: req.url ?? '',
        requestId: typeof requestId === 'string' ? requestId : undefined,
        bytes,
      });
      res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': `req_from_${side}` });
      res.end(JSON.stringify({ side }));
    });
  });
  server.keepAliveTimeout = 30_000;
  server.on('connection', () => connections.count++);
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

async function waitForPort(port: number, deadlineMs: number): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`nginx did not listen on ${port}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const address = (s: Server): string => `127.0.0.1:${(s.address() as AddressInfo).port}`;
const nginx = findNginx();

if (!nginx) {
  const line = 'nginx gateway tests NOT RUN: nginx is not installed (make deps-system installs it)';
  process.stderr.write(`${line}\n`);
  describe('nginx gateway', () => {
    it(line);
  });
} else {
  describe('nginx gateway (infra/topology/deploy/nginx.conf.template)', function () {
    this.timeout(20_000);
    const seen: Seen[] = [];
    const commandConnections = { count: 0 };
    const queryConnections = { count: 0 };
    let dir: string;
    let conf: string;
    let command: Server;
    let query: Server;
    let proc: ChildProcess | undefined;
    let base: string;

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'gateway-'));
      chmodSync(dir, 0o755); // nginx workers may run as another user than the master
      command = await upstream('command', seen, commandConnections);
      query = await upstream('query', seen, queryConnections);
      const port = await freePort();
      base = `http://127.0.0.1:${port}`;
      conf = join(dir, 'nginx.conf');
      writeFileSync(
        conf,
        renderNginxConf({
          LISTEN: `127.0.0.1:${port}`,
          COMMAND_UPSTREAMS: [address(command)],
          QUERY_UPSTREAMS: [address(query)],
          RUN_DIR: dir,
          PUBLIC_BASE_URL: 'https://api.test',
        }),
      );
      proc = spawn(nginx, ['-e', 'stderr', '-p', dir, '-c', conf, '-g', 'daemon off;'], {
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      proc.stderr?.resume();
      await waitForPort(port, 5000);
    });

    after(async () => {
      if (proc && proc.exitCode === null) {
        const exited = new Promise((r) => proc?.once('exit', r));
        proc.kill('SIGTERM');
        await exited;
      }
      await Promise.all([command, query].map((s) => new Promise((r) => s?.close(r))));
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    beforeEach(() => {
      seen.length = 0;
    });

    it('passes `nginx -t`', () => {
      const test = spawnSync(nginx, ['-e', 'stderr', '-p', dir, '-t', '-c', conf], { encoding: 'utf8' });
      expect(test.status, test.stderr).to.equal(0);
      expect(test.stderr).to.match(/test is successful/);
    });

    it("renders the same config through the compose file's envsubst command as through render-nginx", function () {
      if (spawnSync('sh', ['-c', 'command -v envsubst']).status !== 0) this.skip();
      const compose = YAML.parse(readFileSync(join(templatePath(), '..', 'compose.yaml'), 'utf8'), { merge: true }) as {
        services: { gateway: { command: string[]; environment: Record<string, string> } };
      };
      const script = compose.services.gateway.command[2].replace(/\$\$/g, '$');
      const names = /envsubst '([^']+)'/.exec(script)?.[1];
      expect(names, script).to.be.a('string');
      const env: Record<string, string> = {
        ...compose.services.gateway.environment,
        PUBLIC_BASE_URL: 'http://localhost:8080',
      };
      const viaEnvsubst = spawnSync('envsubst', [names as string], {
        input: readFileSync(templatePath(), 'utf8'),
        env: { PATH: process.env.PATH, ...env },
        encoding: 'utf8',
      });
      expect(viaEnvsubst.status).to.equal(0);
      const viaRender = renderNginxConf({
        LISTEN: env.LISTEN,
        COMMAND_UPSTREAMS: ['command-api:8080'],
        QUERY_UPSTREAMS: ['query-api:8080'],
        RUN_DIR: env.RUN_DIR,
        PUBLIC_BASE_URL: env.PUBLIC_BASE_URL,
      });
      expect(viaEnvsubst.stdout).to.equal(viaRender);
      expect(viaRender).to.include('req_$request_id').and.include('map $request_method $api_upstream');
    });

    it('sends GET and HEAD to the query API and every other method to the command API', async () => {
      for (const method of ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE']) {
        const res = await fetch(`${base}/v1/products/sku-1?x=1`, {
          method,
          body: ['GET', 'HEAD'].includes(method) ? undefined : '{}',
        });
        expect(res.status, method).to.equal(200);
        await res.arrayBuffer();
      }
      expect(seen.map((s) => `${s.method} ${s.side} ${s.url}`)).to.deep.equal([
        'GET query /v1/products/sku-1?x=1',
        'HEAD query /v1/products/sku-1?x=1',
        'POST command /v1/products/sku-1?x=1',
        'PUT command /v1/products/sku-1?x=1',
        'PATCH command /v1/products/sku-1?x=1',
        'DELETE command /v1/products/sku-1?x=1',
      ]);
    });

    it('sends the click redirector to the command API and the shopper pages, search and offer pages to the query API, whatever the method', async () => {
      const targets = [
        '/r/pt_a/loja-a/sku-1?x=1',
        '/test/r/pt_a/loja-a/sku-1',
        '/',
        '/busca?q=cafe',
        '/api/search?q=cafe',
        '/p/pt_a/loja-a/sku-1',
        '/test/p/pt_a/loja-a/sku-1',
        '/favicon.ico',
      ];
      for (const path of targets) {
        for (const method of ['GET', 'POST']) {
          const res = await fetch(`${base}${path}`, { method, body: method === 'GET' ? undefined : '{}' });
          expect(res.status, `${method} ${path}`).to.equal(200);
          await res.arrayBuffer();
        }
      }
      const side = (path: string) => (path.includes('/r/') ? 'command' : 'query');
      expect(seen.map((s) => `${s.method} ${s.url} ${s.side}`)).to.deep.equal(
        targets.flatMap((p) => [`GET ${p} ${side(p)}`, `POST ${p} ${side(p)}`]),
      );
      // Any other path keeps the rule of the partner API: reads to the query API, writes to the command API.
      seen.length = 0;
      await (await fetch(`${base}/rr/x`, { method: 'POST', body: '{}' })).arrayBuffer();
      await (await fetch(`${base}/buscar`, { method: 'POST', body: '{}' })).arrayBuffer();
      expect(seen.map((s) => s.side)).to.deep.equal(['command', 'command']);
    });

    it('serves the published contract, the guide and the documentation pages from the query API', async () => {
      const paths = ['/v1/openapi.json', '/v1/openapi.yaml', '/v1/guia.md', '/v1/docs/guia.html', '/v1/docs/api.html'];
      for (const path of paths) {
        const res = await fetch(`${base}${path}`);
        expect(await res.json()).to.deep.equal({ side: 'query' });
      }
      expect(seen.map((s) => s.side)).to.deep.equal(paths.map(() => 'query'));
    });

    it('passes X-Request-Id through, to the service and back', async () => {
      const res = await fetch(`${base}/v1/me`, { headers: { 'x-request-id': 'req_client_1' } });
      expect(res.headers.get('x-request-id')).to.equal('req_from_query');
      await res.arrayBuffer();
      expect(seen[0].requestId).to.equal('req_client_1');
    });

    it('refuses a body above 1 MB outside the batch route with a problem+json 413 that reaches no service', async () => {
      const res = await fetch(`${base}/v1/products/sku-1`, { method: 'PUT', body: 'x'.repeat(1024 * 1024 + 1) });
      expect(res.status).to.equal(413);
      expect(res.headers.get('content-type')).to.match(/^application\/problem\+json/);
      const requestId = res.headers.get('x-request-id');
      expect(requestId).to.match(/^req_[0-9a-f]{32}$/);
      expect(await res.json()).to.include({
        type: 'https://api.test/v1/problemas/413',
        title: 'Content Too Large',
        status: 413,
        request_id: requestId,
      });
      expect(seen).to.deep.equal([]);
    });

    it('lets the batch route carry up to 5 MB and refuses more', async () => {
      const ok = await fetch(`${base}/v1/products/batch`, { method: 'POST', body: 'x'.repeat(5 * 1024 * 1024) });
      expect(ok.status).to.equal(200);
      await ok.arrayBuffer();
      expect(seen).to.have.length(1);
      expect(seen[0]).to.include({ side: 'command', bytes: 5 * 1024 * 1024 });
      const tooBig = await fetch(`${base}/v1/products/batch`, {
        method: 'POST',
        body: 'x'.repeat(5 * 1024 * 1024 + 1),
      });
      expect(tooBig.status).to.equal(413);
      await tooBig.arrayBuffer();
      expect(seen).to.have.length(1);
    });

    it('lets a client still uploading read the 413: fetch streamed, and a client that writes the whole body first', async () => {
      const MiB = 1024 * 1024;
      const expectProblem = (status: number, contentType: string | null | undefined, text: string) => {
        expect(status).to.equal(413);
        expect(contentType).to.match(/^application\/problem\+json/);
        expect(JSON.parse(text)).to.include({ type: 'https://api.test/v1/problemas/413', status: 413 });
      };
      for (const [route, method, bytes] of [
        ['/v1/products/batch', 'POST', 6 * MiB],
        ['/v1/products/sku-1', 'PUT', 1.5 * MiB],
      ] as const) {
        let sent = 0;
        const chunk = new Uint8Array(64 * 1024).fill(0x20);
        const body = new ReadableStream<Uint8Array<ArrayBuffer>>({
          pull(controller) {
            if (sent >= bytes) return controller.close();
            sent += chunk.length;
            controller.enqueue(chunk);
          },
        });
        const init: RequestInit & { duplex: 'half' } = { method, body, duplex: 'half' };
        const res = await fetch(`${base}${route}`, init);
        expectProblem(res.status, res.headers.get('content-type'), await res.text());
        for (const chunked of [false, true]) {
          const result = await upload({
            method,
            url: `${base}${route}`,
            headers: { 'Content-Type': 'application/json' },
            bytes,
            chunked,
            readAfterUpload: true,
          });
          expect(result.error, `${method} ${route} chunked=${chunked}`).to.equal(undefined);
          expectProblem(result.answer!.status, result.answer!.headers['content-type'], result.answer!.body);
        }
      }
      expect(seen).to.deep.equal([]);
    });

    it('streams a body to the service as it arrives, so the service times a slow body itself', async () => {
      const body = JSON.stringify({ store_id: 'loja', title: 'slow' });
      const held = holdUpload({ method: 'PUT', url: `${base}/v1/products/sku-slow`, headers: {}, body, sent: 1 });
      await until(async () => arriving.includes('/v1/products/sku-slow'), 10_000, 'the request at the service', 20);
      expect(seen, 'the body has not ended').to.deep.equal([]);
      held.finish();
      expect((await within(held.answer, 10_000, 'the answer'))?.status).to.equal(200);
      expect(seen).to.have.length(1);
      expect(seen[0]).to.include({ side: 'command', bytes: body.length });
    });

    it('keeps connections to the services open between requests', async () => {
      const before = commandConnections.count;
      for (let i = 0; i < 10; i++) {
        const res = await fetch(`${base}/v1/conversions`, { method: 'POST', body: '{}' });
        await res.arrayBuffer();
      }
      expect(seen).to.have.length(10);
      expect(commandConnections.count - before).to.be.lessThan(10);
    });

    it('answers a problem+json 503 when a service is down (last: it stops the query API)', async () => {
      await new Promise((r) => {
        query.close(r);
        query.closeAllConnections();
      });
      const res = await fetch(`${base}/v1/products`);
      expect(res.status).to.equal(503);
      expect(res.headers.get('content-type')).to.match(/^application\/problem\+json/);
      expect(res.headers.get('retry-after')).to.equal('1');
      expect(await res.json()).to.include({ status: 503, type: 'https://api.test/v1/problemas/503' });
    });
  });
}
