import { expect } from 'chai';
import { execFile, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { DISCARD_BYTES } from '../../command-api/json-body.js';
import { productBody, startTestService, storeBody, type Partner, type TestService } from '../support/service.js';
import { holdUpload, upload, type HeldUpload, type UploadAnswer } from '../support/upload.js';
import { within, until } from '../support/deadline.js';
import { portOf } from '../../infra/http/gateway.js';
import { parsePrometheus } from '../support/prometheus.js';
import pino from 'pino';

/** A body sent in chunks without Content-Length, so only the count of bytes read can refuse it. */
function chunked(url: string, key: string, bytes: number): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method: 'PUT', headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' } },
      (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    let sent = 0;
    const more = () => {
      while (sent < bytes) {
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once('drain', more);
      }
      req.end();
    };
    more();
  });
}

describe('request bodies at the command door', () => {
  let t: TestService;
  let p: Partner;
  before(async () => {
    t = await startTestService();
    p = await t.partner();
    await p.api.put('/stores/loja-b', storeBody());
  });
  after(async () => t.close());

  it('answers 413 above 1 MB, whether declared by Content-Length or only counted, and writes nothing', async () => {
    const big = JSON.stringify(productBody('loja-b', { description: 'x'.repeat(1024 * 1024) }));
    const declared = await p.api.request('PUT', '/products/sku-big', {
      body: big,
      headers: { 'Content-Type': 'application/json' },
    });
    expect(declared.status).to.equal(413);
    const counted = await chunked(`${t.api}/products/sku-big`, p.key, 2 * 1024 * 1024);
    expect(counted.status).to.equal(413);
    expect((await p.api.get('/products/sku-big')).status).to.equal(404);
  });

  it('answers 422 json for an empty or broken body, and takes a body sent in many chunks', async () => {
    const empty = await p.api.request('PUT', '/products/sku-e', {
      body: '',
      headers: { 'Content-Type': 'application/json' },
    });
    expect(empty.status).to.equal(422);
    expect(empty.body.errors[0]).to.include({ code: 'json' });
    const broken = await p.api.request('PUT', '/products/sku-e', {
      body: '{"store_id":',
      headers: { 'Content-Type': 'application/json' },
    });
    expect(broken.body.errors[0]).to.include({ code: 'json' });
    const spaced = JSON.stringify(productBody('loja-b')) + ' '.repeat(200_000);
    const ok = await p.api.request('PUT', '/products/sku-e', {
      body: spaced,
      headers: { 'Content-Type': 'application/json' },
    });
    expect(ok.status, JSON.stringify(ok.body)).to.equal(200);
  });
});

/**
 * A client still uploading a body above the limit reads the 413 problem, in the embedded service and
 * behind nginx (TOPOLOGY=multi). The service drains a refused body up to DISCARD_BYTES; nginx lingers on its own.
 */
describe('oversized bodies: a client still uploading reads the 413 problem', () => {
  const MiB = 1024 * 1024;
  let t: TestService;
  let p: Partner;
  let head: number;
  let dir: string;
  before(async () => {
    t = await startTestService();
    p = await t.partner();
    expect((await p.api.put('/stores/loja-c', storeBody())).status).to.equal(200);
    head = await t.service.events.headPosition();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-body-'));
  });
  after(async () => {
    await t.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  afterEach(async () => {
    expect(await t.service.events.headPosition(), 'nothing is written').to.equal(head);
  });

  const auth = () => ({ Authorization: `Bearer ${p.key}`, 'Content-Type': 'application/json' });
  const expectProblem = (status: number, contentType: string | null | undefined, text: string) => {
    expect(status, text.slice(0, 200)).to.equal(413);
    expect(contentType).to.match(/^application\/problem\+json/);
    const problem = JSON.parse(text) as { type: string; title: string; status: number; request_id: string };
    expect(problem).to.include({ title: 'Content Too Large', status: 413 });
    expect(problem.type).to.match(/\/v1\/problemas\/413$/);
    expect(problem.request_id).to.match(/^req_/);
  };
  const spaces = (bytes: number): Uint8Array<ArrayBuffer> => new Uint8Array(bytes).fill(0x20);
  /** A body of `bytes` spaces from a ReadableStream: fetch sends it chunked, its length unknown upfront. */
  const stream = (bytes: number) => {
    let sent = 0;
    const chunk = spaces(64 * 1024);
    return new ReadableStream<Uint8Array<ArrayBuffer>>({
      pull(controller) {
        if (sent >= bytes) return controller.close();
        sent += chunk.length;
        controller.enqueue(chunk);
      },
    });
  };
  const send = async (
    method: string,
    route: string,
    body: Uint8Array<ArrayBuffer> | ReadableStream<Uint8Array<ArrayBuffer>>,
  ) => {
    const init: RequestInit & { duplex?: 'half' } = {
      method,
      headers: auth(),
      body,
      ...(body instanceof ReadableStream ? { duplex: 'half' } : {}),
    };
    const res = await fetch(`${t.api}${route}`, init);
    expectProblem(res.status, res.headers.get('content-type'), await res.text());
  };

  it('fetch: 6 MB to POST /products/batch, with Content-Length or streamed', async () => {
    await send('POST', '/products/batch', spaces(6 * MiB));
    await send('POST', '/products/batch', stream(6 * MiB));
  });

  it('fetch: 1.5 MB to PUT /products/{sku}, with Content-Length or streamed', async () => {
    await send('PUT', '/products/sku-over', spaces(1.5 * MiB));
    await send('PUT', '/products/sku-over', stream(1.5 * MiB));
  });

  it('a client that writes the whole body before it reads the answer (declared, chunked, and with Connection: close)', async () => {
    const cases = [
      { method: 'POST', route: '/products/batch', bytes: 6 * MiB, chunked: false, close: false },
      { method: 'POST', route: '/products/batch', bytes: 6 * MiB, chunked: true, close: false },
      { method: 'PUT', route: '/products/sku-over', bytes: 1.5 * MiB, chunked: false, close: false },
      { method: 'POST', route: '/products/batch', bytes: 6 * MiB, chunked: false, close: true },
    ];
    for (const c of cases) {
      const headers = { ...auth(), ...(c.close ? { Connection: 'close' } : {}) };
      const result = await upload({
        method: c.method,
        url: `${t.api}${c.route}`,
        headers,
        bytes: c.bytes,
        chunked: c.chunked,
        readAfterUpload: true,
      });
      expect(result.error, JSON.stringify(c)).to.equal(undefined);
      expectProblem(result.answer!.status, result.answer!.headers['content-type'], result.answer!.body);
    }
  });

  it('curl --data-binary: 6 MB to POST /products/batch, with Content-Length or chunked', async function () {
    if (spawnSync('sh', ['-c', 'command -v curl']).status !== 0) this.skip();
    const file = path.join(dir, 'six-mb.json');
    fs.writeFileSync(file, spaces(6 * MiB));
    for (const extra of [[], ['-H', 'Transfer-Encoding: chunked']]) {
      const headers = Object.entries(auth()).flatMap(([k, v]) => ['-H', `${k}: ${v}`]);
      const args = [
        '-sS',
        '--max-time',
        '15',
        '-X',
        'POST',
        ...headers,
        ...extra,
        '--data-binary',
        `@${file}`,
        '-w',
        '\n%{http_code}\n%{content_type}',
        `${t.api}/products/batch`,
      ];
      const out = await new Promise<string>((resolve, reject) =>
        execFile('curl', args, (err, stdout, stderr) => (err ? reject(new Error(`curl: ${stderr}`)) : resolve(stdout))),
      );
      const lines = out.split('\n');
      const contentType = lines.pop();
      const status = Number(lines.pop());
      expectProblem(status, contentType, lines.join('\n'));
    }
  });

  it('reads a refused body up to DISCARD_BYTES, then cuts a client that goes on', async function () {
    // Behind nginx the gateway answers and lingers, bounded in time (lingering_time), not in bytes: embedded only.
    if (process.env.TOPOLOGY === 'multi') this.skip();
    const bytes = 5 * MiB + DISCARD_BYTES + 64 * MiB; // more than the socket buffers can hold past the bound
    const result = await upload({ method: 'POST', url: `${t.api}/products/batch`, headers: auth(), bytes });
    expectProblem(result.answer!.status, result.answer!.headers['content-type'], result.answer!.body);
    expect(result.error, 'the connection is cut').to.be.a('string');
    expect(result.written).to.be.above(DISCARD_BYTES).and.below(bytes);
  });
});

type Problem = {
  status: number;
  title: string;
  detail?: string;
  errors?: { field: string; code: string; message: string }[];
  errors_truncated?: boolean;
};

/** What a bad body may cost (DECISIONS.md, "Cost of a bad body"): the answer, the parse, the wait, the uploads. */
describe('the cost of a bad body', () => {
  let t: TestService;
  let p: Partner;
  let head: number;
  before(async () => {
    t = await startTestService({ BODY_DEADLINE_MS: '1000', UPLOADS_PER_KEY: '2', UPLOADS_PER_ADDRESS: '3' });
    p = await t.partner();
    expect((await p.api.put('/stores/loja-d', storeBody())).status).to.equal(200);
    head = await t.service.events.headPosition();
  });
  after(async () => t.close());
  afterEach(async () => {
    expect(await t.service.events.headPosition(), 'nothing is written').to.equal(head);
  });

  const json = { 'Content-Type': 'application/json' };
  const send = async (method: string, route: string, body: string) => {
    const r = await p.api.request(method, route, { body, headers: json });
    return { status: r.status, body: r.body as Problem, bytes: Buffer.byteLength(JSON.stringify(r.body)) };
  };
  /** `count` fields no contract has, as JSON members (`"extra_0001":1,…`). */
  const unknownFields = (count: number) =>
    Array.from({ length: count }, (_, i) => `"extra_${String(i).padStart(4, '0')}":${i}`).join(',');

  it('lists at most 100 errors, then says errors_truncated: a 2.8 MB batch of unknown fields gets a small 422', async () => {
    const product = JSON.stringify(productBody('loja-d')).slice(1, -1);
    const items = Array.from(
      { length: 1000 },
      (_, i) => `{"op":"upsert","sku":"s-${i}","product":{${product},${unknownFields(150)}},${unknownFields(10)}}`,
    );
    const body = `{"items":[${items.join(',')}]}`;
    expect(body.length)
      .to.be.above(2.5 * 1024 * 1024)
      .and.below(5 * 1024 * 1024);
    const r = await send('POST', '/products/batch', body);
    expect(r.status).to.equal(422);
    expect(r.bytes, 'the answer is small').to.be.below(64 * 1024);
    expect(r.body.errors_truncated).to.equal(true);
    expect(r.body.errors).to.have.length(100);
    const perItem = new Map<string, number>();
    for (const e of r.body.errors!) {
      expect(e.code).to.equal('unknown_field');
      const item = /^items\[(\d+)\]/.exec(e.field)![1];
      perItem.set(item, (perItem.get(item) ?? 0) + 1);
    }
    expect(Math.max(...perItem.values()), 'at most 20 a batch item').to.equal(20);
    expect([...perItem.keys()]).to.deep.equal(['0', '1', '2', '3', '4']);
    expect(r.body.errors![0]).to.include({ field: 'items[0].extra_0000', code: 'unknown_field' });
    expect(r.body.errors![0].message).to.match(/^items\[0\]\.extra_0000 is not a field/);
  });

  it('cuts the errors of one body at 100 too, and says so in its detail', async () => {
    const product = JSON.stringify(productBody('loja-d')).slice(1, -1);
    const r = await send('PUT', '/products/sku-many', `{${product},${unknownFields(3000)}}`);
    expect(r.status).to.equal(422);
    expect(r.body.errors).to.have.length(100);
    expect(r.body.errors_truncated).to.equal(true);
    expect(r.body.detail).to.match(/first 100/);
    const few = await send('PUT', '/products/sku-many', `{${product},${unknownFields(3)}}`);
    expect(few.body.errors).to.have.length(3);
    expect(few.body).to.not.have.property('errors_truncated');
  });

  it('refuses JSON nested deeper than 64 levels with 422 json, before parsing it', async () => {
    const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
    const deep = await send('POST', '/products/batch', `{"items":${nested(64)}}`);
    expect(deep.status).to.equal(422);
    expect(deep.body.errors).to.deep.equal([
      { field: '', code: 'json', message: 'The body nests arrays and objects more than 64 levels deep.' },
    ]);
    // 64 levels are read and validated as any other body; brackets inside strings do not count.
    const fine = await send('POST', '/products/batch', `{"items":${nested(63)},"x":"${'['.repeat(100)}"}`);
    expect(fine.status).to.equal(422);
    expect(fine.body.errors!.map((e) => e.code)).to.not.include('json');
    const brackets = await send('POST', '/products/batch', '['.repeat(4.8 * 1024 * 1024));
    expect(brackets.status).to.equal(422);
    expect(brackets.body.errors).to.deep.equal(deep.body.errors);
  });

  const auth = () => ({ Authorization: `Bearer ${p.key}`, 'Content-Type': 'application/json' });
  const expectProblem = (answer: UploadAnswer | undefined, status: number): Problem => {
    expect(answer, 'an answer').to.not.equal(undefined);
    expect(answer!.status, answer!.body).to.equal(status);
    expect(answer!.headers['content-type']).to.match(/^application\/problem\+json/);
    return JSON.parse(answer!.body) as Problem;
  };

  it('answers 408 to a body that has not arrived within the deadline after its headers (BODY_DEADLINE_MS)', async () => {
    // Behind nginx too: it streams the body to the door, whose deadline answers (TOPOLOGY=multi).
    const body = JSON.stringify(productBody('loja-d'));
    const stalled = holdUpload({
      method: 'PUT',
      url: `${t.api}/products/sku-slow`,
      headers: auth(),
      body,
      sent: body.length >> 1,
    });
    const problem = expectProblem(await within(stalled.answer, 30_000, 'the 408'), 408);
    expect(problem).to.include({ title: 'Request Timeout', status: 408 });
    expect(problem.detail).to.match(/within 1 s/);
    stalled.abort();
    // A batch has twice as long.
    const batch = holdUpload({
      method: 'POST',
      url: `${t.api}/products/batch`,
      headers: auth(),
      body: JSON.stringify({ items: [{ op: 'delete', sku: 'sku-slow' }] }),
      sent: 5,
    });
    expect(expectProblem(await within(batch.answer, 30_000, 'the 408 of a batch'), 408).detail).to.match(/within 2 s/);
    batch.abort();
  });
});

/**
 * Slow uploads held open (their headers and a first byte sent, the rest never): the places they take are counted in
 * the order the door reads them, so of several opened at once past the bound exactly the surplus is refused, whichever
 * it is. Nothing here depends on timing; BODY_DEADLINE_MS stays at 30 s, far beyond the test.
 */
describe('uploads in flight: at most 2 per key and 3 per address here', () => {
  let t: TestService;
  let p: Partner;
  let other: Partner;
  before(async () => {
    // Behind nginx too (it streams bodies to the doors), with one command door: the counts are per door process.
    t = await startTestService({ UPLOADS_PER_KEY: '2', UPLOADS_PER_ADDRESS: '3' }, undefined, { commandReplicas: 1 });
    p = await t.partner();
    other = await t.key(p.partnerId, 'live');
  });
  after(async () => t?.close());

  /** An invalid body (`{}`) held after its first byte: completed, it is a 422, nothing written. */
  const hold = (key: string) =>
    holdUpload({
      method: 'PUT',
      url: `${t.api}/products/sku-held`,
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: '{}',
      sent: 1,
    });
  /** Waits for the first answer among `uploads`: the refused one (the others are held, unanswered). */
  const firstAnswer = async (uploads: HeldUpload[]) =>
    within(Promise.race(uploads.map(async (u) => ({ upload: u, answer: await u.answer }))), 30_000, 'a refusal');

  it('answers 429 with Retry-After past the uploads in flight of a key, then of an address, and frees them', async () => {
    const byKey = [hold(p.key), hold(p.key), hold(p.key)];
    const first = await firstAnswer(byKey);
    expect(first.answer?.status, first.answer?.body).to.equal(429);
    expect(first.answer!.headers['retry-after']).to.equal('1');
    expect((JSON.parse(first.answer!.body) as Problem).detail).to.match(/at most 2 per key/);
    const held = byKey.filter((u) => u !== first.upload);
    // Another key from the same address has one place left (3 per address): of two, one is refused.
    const byAddress = [hold(other.key), hold(other.key)];
    const second = await firstAnswer(byAddress);
    expect(second.answer?.status, second.answer?.body).to.equal(429);
    expect((JSON.parse(second.answer!.body) as Problem).detail).to.match(/at most 3 per client address/);
    held.push(...byAddress.filter((u) => u !== second.upload));
    expect(held).to.have.length(3);
    // A held upload that ends gives its place back: its body completed, it is read (422), and the next is taken.
    const done = held.shift()!;
    done.finish();
    expect((await within(done.answer, 30_000, 'the 422'))?.status).to.equal(422);
    const next = [hold(p.key), hold(p.key)];
    const third = await firstAnswer(next);
    expect(third.answer?.status).to.equal(429);
    const taken = next.find((u) => u !== third.upload)!;
    taken.finish();
    expect((await within(taken.answer, 30_000, 'the 422'))?.status, 'the freed place was taken').to.equal(422);
    for (const u of held) u.abort();
  });

  it('never refuses a body that arrived whole with its headers, however many come at once', async () => {
    const answers = await Promise.all(
      Array.from({ length: 40 }, () =>
        fetch(`${t.api}/products/sku-whole`, {
          method: 'PUT',
          headers: { Authorization: `Bearer ${p.key}`, 'Content-Type': 'application/json' },
          body: '{}',
        }).then((r) => r.status),
      ),
    );
    expect(new Set(answers)).to.deep.equal(new Set([422]));
  });
});

describe('a client that goes away mid-request', () => {
  const lines: { level: number; msg: string; status?: number }[] = [];
  let t: TestService;
  let p: Partner;
  before(async function () {
    if (process.env.TOPOLOGY === 'multi') this.skip(); // the log and metrics of the embedded service
    const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    t = await startTestService({ UPLOADS_PER_KEY: '1' }, undefined, { log });
    p = await t.partner();
  });
  after(async () => t?.close());

  it('is logged at info, not as an error, and counted 499, never 500, in /metrics', async () => {
    const body = JSON.stringify(productBody('loja-x'));
    const upload = holdUpload({
      method: 'PUT',
      url: `${t.api}/products/sku-gone`,
      headers: { Authorization: `Bearer ${p.key}`, 'Content-Type': 'application/json' },
      body,
      sent: 20,
    });
    const metrics = async () => {
      const r = await fetch(`http://127.0.0.1:${portOf(t.service.admin)}/metrics`);
      return parsePrometheus(await r.text());
    };
    const counted = (status: string) =>
      metrics().then((m) =>
        m.value('pc_http_requests_total', { door: 'command', method: 'PUT', route: '/products/:sku', status }),
      );
    // The door is reading one of two uploads of the key once it refuses the other (one upload in flight per key here).
    const probe = holdUpload({
      method: 'PUT',
      url: `${t.api}/products/sku-gone`,
      headers: { Authorization: `Bearer ${p.key}`, 'Content-Type': 'application/json' },
      body,
      sent: 20,
    });
    const refused = await within(
      Promise.race([upload, probe].map(async (u) => ({ u, answer: await u.answer }))),
      30_000,
      'a refusal',
    );
    expect(refused.answer?.status).to.equal(429);
    (refused.u === upload ? probe : upload).abort();
    await until(async () => (await counted('499')) === 1, 30_000, 'the abort counted', 20);
    expect(await counted('500')).to.equal(undefined);
    expect(
      lines.filter((l) => l.level >= 50),
      JSON.stringify(lines.filter((l) => l.level >= 50)),
    ).to.deep.equal([]);
    expect(lines.some((l) => l.level === 30 && l.msg === 'client closed the request')).to.equal(true);
  });
});
