import { expect } from 'chai';
import http from 'node:http';
import { productBody, startTestService, storeBody, type Partner, type TestService } from '../support/service.js';

/** A body sent in chunks without Content-Length, so only the count of bytes read can refuse it. */
function chunked(url: string, key: string, bytes: number): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'PUT', headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' } }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
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
    const declared = await p.api.request('PUT', '/products/sku-big', { body: big, headers: { 'Content-Type': 'application/json' } });
    expect(declared.status).to.equal(413);
    const counted = await chunked(`${t.api}/products/sku-big`, p.key, 2 * 1024 * 1024);
    expect(counted.status).to.equal(413);
    expect((await p.api.get('/products/sku-big')).status).to.equal(404);
  });

  it('answers 422 json for an empty or broken body, and takes a body sent in many chunks', async () => {
    const empty = await p.api.request('PUT', '/products/sku-e', { body: '', headers: { 'Content-Type': 'application/json' } });
    expect(empty.status).to.equal(422);
    expect(empty.body.errors[0]).to.include({ code: 'json' });
    const broken = await p.api.request('PUT', '/products/sku-e', { body: '{"store_id":', headers: { 'Content-Type': 'application/json' } });
    expect(broken.body.errors[0]).to.include({ code: 'json' });
    const spaced = JSON.stringify(productBody('loja-b')) + ' '.repeat(200_000);
    const ok = await p.api.request('PUT', '/products/sku-e', { body: spaced, headers: { 'Content-Type': 'application/json' } });
    expect(ok.status, JSON.stringify(ok.body)).to.equal(200);
  });
});
