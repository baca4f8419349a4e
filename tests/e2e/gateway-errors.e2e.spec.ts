/**
 * The answers written before any route runs, the same in both shapes of the service: the embedded door (Node's
 * http server) and, with `TOPOLOGY=multi`, nginx in front of the services. A long query string, a request line or
 * headers above 16 KB, a malformed request, a 6 MB body and (distributed topology only) a service that is down all
 * get the same status either way, as an RFC 9457 problem+json whose `request_id` is the `X-Request-Id` header.
 */
import net from 'node:net';
import { expect } from 'chai';
import { startTestService, type Partner, type TestService } from '../support/service.js';
import type { Topology } from '../support/topology.js';
import { upload } from '../support/upload.js';
import { SECURITY_HEADERS } from '../../infra/http/gateway.js';

type RawAnswer = { status: number; headers: Record<string, string>; body: string };

/** Sends `head` (request line and headers, as written) on a connection of its own and reads the answer to the end. */
function exchange(base: string, head: string): Promise<RawAnswer> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(url.port), url.hostname);
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      if (split < 0) return reject(new Error(`no answer: ${JSON.stringify(text.slice(0, 200))}`));
      const [statusLine, ...lines] = text.slice(0, split).split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      let body = text.slice(split + 4);
      if (headers['transfer-encoding'] === 'chunked') body = unchunk(body);
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body });
    });
    socket.write(head);
  });
}

function unchunk(text: string): string {
  let out = '';
  let at = 0;
  for (;;) {
    const eol = text.indexOf('\r\n', at);
    const size = parseInt(text.slice(at, eol), 16);
    if (!(size > 0)) return out;
    out += text.slice(eol + 2, eol + 2 + size);
    at = eol + 2 + size + 2;
  }
}

const get = (target: string, headers: Record<string, string> = {}): string =>
  `GET ${target} HTTP/1.1\r\nHost: localhost\r\n${Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('')}Connection: close\r\n\r\n`;

/** A problem+json of `status`, with `request_id` the answer's `X-Request-Id` and the security headers; its body. */
function expectProblem(answer: RawAnswer, status: number, what: string): Record<string, unknown> {
  expect(answer.status, `${what}: ${answer.body.slice(0, 300)}`).to.equal(status);
  expect(answer.headers['content-type'], what).to.match(/^application\/problem\+json/);
  const body = JSON.parse(answer.body) as Record<string, unknown>;
  const requestId = answer.headers['x-request-id'];
  expect(requestId, what).to.match(/^req_[A-Za-z0-9]+$/);
  expect(body, what).to.include({ status, request_id: requestId });
  expect(body.type, what).to.match(new RegExp(`/v1/problemas/${status}$`));
  expect(body.title, what).to.be.a('string').and.not.equal('');
  expect(body.detail, what).to.be.a('string').and.not.equal('');
  for (const [name, value] of Object.entries(SECURITY_HEADERS))
    expect(answer.headers[name.toLowerCase()], `${what}: ${name}`).to.equal(value);
  return body;
}

describe('answers written before any route: the same status and problem in the embedded and distributed shapes', function () {
  let t: TestService;
  let p: Partner;
  let root: string;

  before(async () => {
    t = await startTestService();
    t.clock.set(new Date('2026-06-01T10:00:00.000Z'));
    p = await t.partner();
    root = t.api.replace(/\/v1$/, '');
  });
  after(async () => t.close());

  it('a 10,000-character query string reaches the service: 422 listing the field, not a 414 page', async () => {
    const search = await exchange(root, get(`/api/search?q=${'a'.repeat(10_000)}`));
    const body = expectProblem(search, 422, 'long q');
    expect(body.errors).to.deep.include({
      field: 'q',
      code: 'too_long',
      message: '`q` takes at most 200 characters.',
    });
    const partnerApi = await exchange(
      root,
      get(`/v1/stores?unknown=${'b'.repeat(10_000)}`, { Authorization: `Bearer ${p.key}` }),
    );
    expectProblem(partnerApi, 422, 'long unknown parameter');
  });

  it('a request line or headers above 16 KB: 431', async () => {
    expectProblem(await exchange(root, get(`/api/search?q=${'a'.repeat(20_000)}`)), 431, '20 KB query string');
    expectProblem(await exchange(root, get('/v1/me', { 'X-Big': 'x'.repeat(20_000) })), 431, 'a 20 KB header');
    const many = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`X-Part-${i}`, 'x'.repeat(2_000)]));
    expectProblem(await exchange(root, get('/v1/me', many)), 431, 'ten 2 KB headers');
    // Under the bound, the same request goes through (401: no key).
    expectProblem(await exchange(root, get('/v1/me', { 'X-Big': 'x'.repeat(8_000) })), 401, 'an 8 KB header');
  });

  it('a request that is not HTTP: 400', async () => {
    const answer = await exchange(root, 'GET /v1/me HTTP/1.1\r\nHost: localhost\r\nNot a header\r\n\r\n');
    expectProblem(answer, 400, 'a header line without a colon');
    expectProblem(await exchange(root, 'GET /v1/me HTTP/1.1\r\nConnection: close\r\n\r\n'), 400, 'no Host header');
  });

  it('a 6 MB batch: 413, the same problem whether the client reads while it uploads or after', async () => {
    for (const readAfterUpload of [false, true]) {
      const result = await upload({
        method: 'POST',
        url: `${t.api}/products/batch`,
        headers: { Authorization: `Bearer ${p.key}`, 'Content-Type': 'application/json' },
        bytes: 6 * 1024 * 1024,
        readAfterUpload,
      });
      expect(result.answer, `readAfterUpload=${readAfterUpload}: ${result.error}`).to.not.equal(undefined);
      const { status, headers, body } = result.answer!;
      expectProblem({ status, headers, body }, 413, `readAfterUpload=${readAfterUpload}`);
    }
  });

  it('a service that is down: 503 with Retry-After (distributed topology only; last: it stops the query API)', async function () {
    const topology = (t as TestService & { topology?: Topology }).topology;
    if (!topology) return this.skip(); // the embedded service has no upstream to lose
    for (const replica of topology.replicas('query-api')) await topology.kill(replica);
    const answer = await exchange(root, get('/v1/me', { Authorization: `Bearer ${p.key}` }));
    expectProblem(answer, 503, 'query API down');
    expect(answer.headers['retry-after']).to.equal('1');
  });
});
