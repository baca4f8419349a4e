import http from 'node:http';
import { expect } from 'chai';
import {
  productBody,
  startTestService,
  storeBody,
  type Answer,
  type Partner,
  type TestService,
} from '../support/service.js';
import {
  answerOfFetch,
  expectInvalid,
  expectProblem,
  expectProblemLike,
  fieldCodes,
  inChunks,
  productEvents,
} from '../support/e2e.js';

const BASE = 'https://api.parceiros.test/v1';
const MB = 1024 * 1024;

/** A PUT whose body is streamed in chunks with no Content-Length (what a proxy or a streaming client sends). */
function chunkedPut(t: TestService, key: string, path: string, body: Buffer): Promise<Answer> {
  const url = new URL(t.api + path);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'PUT',
        headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => {
          const headers = new Headers();
          for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') headers.set(k, v);
          resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : text, headers });
        });
      },
    );
    req.on('error', reject);
    for (let i = 0; i < body.length; i += 64 * 1024) req.write(body.subarray(i, i + 64 * 1024));
    req.end();
  });
}

describe('conventions of every route (HTTP)', function () {
  let t: TestService;
  let hub: Partner;

  before(async () => {
    t = await startTestService({ API_BASE_URL: BASE });
    t.clock.set(new Date('2026-01-02T00:00:00Z'));
    hub = await t.partner({ type: 'hub' });
    expect((await hub.api.put('/stores/loja', storeBody())).status).to.equal(200);
  });
  after(async () => t.close());

  describe('problems (RFC 9457)', () => {
    it('gives every error type {base_url}/problemas/<status>, title, status, request_id = X-Request-Id, errors[]', async () => {
      const answers: [Answer, number][] = [
        [await t.as('ik_live_nope').get('/me'), 401],
        [await hub.api.get('/stores/none'), 404],
        [await hub.api.get('/promotions/x'), 404],
        [await hub.api.delete('/stores/loja'), 405],
        [await hub.api.put('/products/x', productBody('loja', { price_cents: -1 })), 422],
        [await hub.api.put('/products/x', productBody('nope')), 422],
        [await hub.api.patch('/products/none', { price_cents: 5, updated_at: '2026-01-01T00:00:00Z' }), 404],
      ];
      for (const [a, status] of answers) expectProblem(a, status, BASE);
      const limited = await t.key(hub.partnerId, 'live', ['reports']);
      expectProblem(await limited.api.get('/stores'), 403, BASE);
      const big = await hub.api.request('PUT', '/products/x', {
        body: Buffer.alloc(MB + 1, 32),
        headers: { 'Content-Type': 'application/json' },
      });
      expectProblem(big, 413, BASE);
    });

    it('answers the 404 and 405 of the redirector with the problem a partner door answers (status, headers, body, type)', async () => {
      const root = t.api.replace(/\/v1$/, '');
      const asJson = { Accept: 'application/json' };
      const notFound = await answerOfFetch(await fetch(`${root}/r/nope/nope`, { headers: asJson }));
      expectProblemLike(notFound, await hub.api.get('/stores/none'), BASE);
      expect(notFound.body.detail).to.equal('No offer can be shown at this address.');
      expect(notFound.headers.get('vary')).to.equal('Accept');
      const head = await fetch(`${root}/r/nope/nope`, { method: 'HEAD', headers: asJson });
      expect(head.status).to.equal(404);
      expect(head.headers.get('content-type')).to.equal(notFound.headers.get('content-type'));
      expect(await head.text()).to.equal('');
      // A method the redirector does not serve is a problem whatever the client accepts, as at the doors.
      const door405 = await hub.api.delete('/stores/loja');
      for (const headers of [asJson, {}]) {
        const refused = await answerOfFetch(await fetch(`${root}/r/nope/nope`, { method: 'POST', headers }));
        expectProblemLike(refused, door405, BASE);
        expect(refused.headers.get('allow')).to.equal('GET, HEAD');
        expect(refused.body.detail).to.equal('POST is not allowed here; allowed: GET, HEAD.');
      }
      expect(door405.body.detail).to.equal(`DELETE is not allowed here; allowed: ${door405.headers.get('allow')}.`);
    });

    it('opens every problem type without a key: an HTML page by default, JSON on Accept: application/json', async () => {
      const anon = t.as('');
      for (const status of [401, 403, 404, 405, 408, 409, 413, 422, 429, 500, 503]) {
        const html = await anon.get(`/problemas/${status}`, { Authorization: '' });
        expect(html.status, String(status)).to.equal(200);
        expect(html.headers.get('content-type')).to.match(/^text\/html/);
        expect(html.body).to.include(`<h1>${status} `).and.to.include('What to do');
        const json = await anon.get(`/problemas/${status}`, { Accept: 'application/json', Authorization: '' });
        expect(json.body).to.include({ type: `${BASE}/problemas/${status}`, status });
        expect(json.body.what_to_do).to.be.a('string');
      }
      expectProblem(await anon.get('/problemas/418', { Authorization: '' }), 401, BASE); // not a page: an API path
    });

    it('asks for the bearer scheme on every 401 (WWW-Authenticate), partner and admin APIs alike', async () => {
      for (const a of [await t.as('ik_live_nope').get('/me'), await t.as('').get('/stores', { Authorization: '' })]) {
        expect(a.status).to.equal(401);
        expect(a.headers.get('www-authenticate')).to.match(/^Bearer realm="partner-commerce"$/);
      }
      const admin = await t.admin.get('/projections', { Authorization: 'Bearer wrong' });
      expect(admin.status).to.equal(401);
      expect(admin.headers.get('www-authenticate')).to.match(/^Bearer /);
      expect(admin.body.type).to.equal(`${BASE}/problemas/401`); // absolute, and it opens (above)
    });

    it('sets X-Request-Id on every answer, successes and 204 included, a new one each time', async () => {
      const answers = [
        await hub.api.get('/me'),
        await hub.api.get('/stores'),
        await hub.api.delete('/products/none'),
        await hub.api.put('/stores/req-id', storeBody()),
        await t.as('').get('/me'),
      ];
      expect(answers.map((a) => a.status)).to.deep.equal([200, 200, 204, 200, 401]);
      const ids = answers.map((a) => a.headers.get('x-request-id'));
      for (const id of ids) expect(id).to.match(/^req_[0-9A-Z]+$/);
      expect(new Set(ids).size).to.equal(ids.length);
    });

    it('names fields by JSON path: image_urls[1], installments.count, shipping.cost_cents, commission.rate, attributes.<key>', async () => {
      const r = await hub.api.put(
        '/products/paths',
        productBody('loja', {
          image_urls: ['https://cdn.shop.test/a.jpg', 'http://cdn.shop.test/b.jpg'],
          installments: { count: 1, value_cents: 100, interest_free: true },
          shipping: { type: 'fixed' },
          commission: { type: 'percentage', rate: 12.345 },
          attributes: { cor: 'x'.repeat(201) },
        }),
      );
      expectInvalid(r, [
        'image_urls[1]:https',
        'installments.count:minimum',
        'shipping.cost_cents:required',
        'commission.rate:multiple_of',
        'attributes.cor:max_length',
      ]);
    });

    it('answers 405 with Allow for a known path and 404 for Phase 3 paths whatever the method', async () => {
      const r = await hub.api.delete('/stores/loja');
      expect(r.headers.get('allow')?.split(', ').sort()).to.deep.equal(['GET', 'HEAD', 'PUT']);
      for (const method of ['GET', 'PUT', 'DELETE', 'POST', 'PATCH']) {
        for (const path of ['/promotions/p1', '/coupons/C1', '/campaigns/c1']) {
          const a = await hub.api.request(
            method,
            path,
            method === 'GET' || method === 'DELETE'
              ? {}
              : { body: '{}', headers: { 'Content-Type': 'application/json' } },
          );
          expect(a.status, `${method} ${path}`).to.equal(404);
        }
      }
    });
  });

  describe('security headers (every door, and nginx in front of them)', () => {
    type Seen = { what: string; status: number; headers: Headers; body: string };
    const fetchAll = async (urls: [string, string, RequestInit?][]): Promise<Seen[]> =>
      Promise.all(
        urls.map(async ([what, url, init]) => {
          const r = await fetch(url, { redirect: 'manual', ...init });
          return { what, status: r.status, headers: r.headers, body: await r.text() };
        }),
      );
    const root = () => t.api.replace(/\/v1$/, '');

    it('sends X-Content-Type-Options: nosniff on every answer: partner API, shopper pages, redirector, admin API', async () => {
      const seen = await fetchAll([
        ['partner 200', `${t.api}/openapi.json`],
        ['partner 401', `${t.api}/stores`],
        ['partner 200 with a key', `${t.api}/me`, { headers: { Authorization: `Bearer ${hub.key}` } }],
        ['partner 422', `${t.api}/products/x`, { method: 'PUT', headers: { Authorization: `Bearer ${hub.key}` } }],
        [
          'partner 413 (nginx answers it in the multi-process topology)',
          `${t.api}/products/batch`,
          {
            method: 'POST',
            headers: { Authorization: `Bearer ${hub.key}`, 'Content-Type': 'application/json' },
            body: ' '.repeat(6 * MB),
          },
        ],
        ['shopper search JSON', `${root()}/api/search?q=tenis`],
        ['redirector 404', `${root()}/r/nope/nope`],
      ]);
      for (const s of seen) {
        expect(s.headers.get('x-content-type-options'), `${s.what} (${s.status})`).to.equal('nosniff');
      }
      expect(seen.map((s) => s.status)).to.deep.equal([200, 401, 200, 422, 413, 200, 404]);
      for (const admin of [
        await t.admin.get('/projections'),
        await t.admin.get('/projections', { Authorization: '' }),
      ]) {
        expect(admin.headers.get('x-content-type-options'), `admin ${admin.status}`).to.equal('nosniff');
      }
    });

    it('sends every HTML page with a Content-Security-Policy (no inline script, no framing) and a Referrer-Policy', async () => {
      const pages = await fetchAll([
        ['home', `${root()}/`],
        ['search page', `${root()}/busca?q=tenis`],
        ['offer page not found', `${root()}/p/nope/nope`],
        ['problem page', `${t.api}/problemas/422`],
        ['redirector 404 page', `${root()}/r/nope/nope`, { headers: { Accept: 'text/html' } }],
      ]);
      for (const page of pages) {
        const what = `${page.what} (${page.status})`;
        expect(page.headers.get('content-type'), what).to.match(/^text\/html/);
        const csp = page.headers.get('content-security-policy') ?? '';
        const directives = new Map(
          csp
            .split(';')
            .map((d) => d.trim().split(/\s+/))
            .map(([name, ...values]) => [name, values] as const),
        );
        expect(directives.get('frame-ancestors'), what).to.deep.equal(["'none'"]);
        // Scripts fall back to default-src: none may run, inline or not.
        expect(directives.has('script-src'), what).to.equal(false);
        expect(directives.get('default-src'), what).to.deep.equal(["'none'"]);
        expect(page.headers.get('referrer-policy'), what).to.equal('strict-origin-when-cross-origin');
        expect(page.headers.get('x-content-type-options'), what).to.equal('nosniff');
        // The pages work under it: no script of any kind, styles inline (style-src allows them).
        expect(page.body, what).to.not.match(/<script|\son[a-z]+=|javascript:/i);
        expect(directives.get('style-src'), what).to.include("'unsafe-inline'");
      }
    });
  });

  describe('order of checks: 401 → 429 → 404/405 → 403 → 413 → 422 → business rules', () => {
    it('404 and 405 come before 403 (scope)', async () => {
      const limited = await t.key(hub.partnerId, 'live', ['reports']);
      expect((await limited.api.get('/promotions/x')).status).to.equal(404);
      expect((await limited.api.post('/stores', {})).status).to.equal(405);
      expect((await limited.api.delete('/stores/loja')).status).to.equal(405);
      expect((await limited.api.put('/stores/loja', storeBody())).status).to.equal(403);
    });

    it('403 comes before 413, and 413 before 422 (nothing is read or written)', async () => {
      const limited = await t.key(hub.partnerId, 'live', ['reports']);
      const huge = Buffer.alloc(2 * MB, 'x');
      // Behind nginx (TOPOLOGY=multi) the gateway refuses an oversized body before any service sees it (docs/topology.md).
      const tooLargeFirst = process.env.TOPOLOGY === 'multi';
      expect(
        (
          await limited.api.request('PUT', '/products/a', {
            body: huge,
            headers: { 'Content-Type': 'application/json' },
          })
        ).status,
      ).to.equal(tooLargeFirst ? 413 : 403);
      expect(
        (await hub.api.request('PUT', '/products/a', { body: huge, headers: { 'Content-Type': 'text/plain' } })).status,
      ).to.equal(413);
      expect(
        (await hub.api.request('PUT', '/products/a', { body: huge, headers: { 'Content-Type': 'application/json' } }))
          .status,
      ).to.equal(413);
    });

    it('422 (every invalid field) comes before business rules (store_not_found, 404 of PATCH, already_registered)', async () => {
      const r = await hub.api.put('/products/b', productBody('no-such-store', { price_cents: 0, title: 'abc' }));
      expectInvalid(r, ['price_cents:minimum', 'title:min_length']);
      const p = await hub.api.patch('/products/no-such-sku', { price_cents: 0, updated_at: '2026-01-01T00:00:00Z' });
      expectInvalid(p, ['price_cents:minimum']);
      const taken = (await hub.api.get('/stores/loja')).body.cnpj;
      const s = await hub.api.put('/stores/other', storeBody({ cnpj: taken, name: 'X' }));
      expectInvalid(s, ['name:min_length']);
    });

    it('test-only routes answer 403 test_key_required to a live key', async () => {
      const r = await hub.api.post('/sandbox/clicks', { store_id: 'loja', sku: 'x' });
      expectProblem(r, 403);
      expect(r.body.errors[0]).to.include({ code: 'test_key_required' });
    });
  });

  describe('bodies', () => {
    it('words every 422 for partners: the allowed values, the offset a date needs, cents, the fields a PATCH needs', async () => {
      const message = (a: Answer, field: string) =>
        (a.body.errors as { field: string; message: string }[]).find((e) => e.field === field)?.message;
      const put = await hub.api.put(
        '/products/x',
        productBody('loja', { price_cents: 29.99, updated_at: '2026-01-01T10:00:00', condition: 'novo', title: 'abc' }),
      );
      expect(message(put, 'price_cents')).to.equal('price_cents must be an integer of cents: 29.99 is 2999.');
      expect(message(put, 'updated_at')).to.match(
        /offset, such as 2026-03-01T14:30:00Z or 2026-03-01T11:30:00-03:00 \(the offset is required\)/,
      );
      expect(message(put, 'condition')).to.equal('condition must be one of: "new", "used", "refurbished".');
      expect(message(put, 'title')).to.equal('title takes at least 5 characters.');
      expect(put.body.detail).to.match(/^4 problems in /);
      const patch = await hub.api.patch('/products/x', { updated_at: '2026-01-01T10:00:00Z' });
      expect(message(patch, '')).to.match(/^Send updated_at and at least one field to change/);
      const list = await hub.api.get('/products?state=vivo');
      expect(message(list, 'state')).to.equal(
        'state must be one of: "pending", "accepted", "rejected", "stale", "removed".',
      );
      for (const a of [put, patch, list])
        for (const e of a.body.errors as { message: string }[])
          expect(e.message).not.to.match(/must NOT|allowed values|must be a valid/);
    });

    it('refuses a body that is not JSON with 422 {field: "", code: "json"}', async () => {
      for (const body of ['{"store_id":', 'not json', '']) {
        const r = await hub.api.request('PUT', '/products/j', {
          body,
          headers: { 'Content-Type': 'application/json' },
        });
        expectInvalid(r, [':json']);
        expect(r.body.errors[0].field).to.equal('');
      }
    });

    it('refuses a wrong or missing Content-Type with 422 content_type; takes a charset parameter', async () => {
      const json = JSON.stringify(productBody('loja'));
      for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/jsonp']) {
        expectInvalid(await hub.api.request('PUT', '/products/ct', { body: json, headers: { 'Content-Type': type } }), [
          ':content_type',
        ]);
      }
      expectInvalid(await hub.api.request('PUT', '/products/ct', { body: new TextEncoder().encode(json) }), [
        ':content_type',
      ]);
      const ok = await hub.api.request('PUT', '/products/ct', {
        body: json,
        headers: { 'Content-Type': 'application/json; charset=utf-8' },
      });
      expect(ok.status).to.equal(200);
    });

    it('refuses a body that is JSON but not an object', async () => {
      for (const body of ['[]', 'null', '"x"', '42']) {
        const r = await hub.api.request('PUT', '/stores/arr', {
          body,
          headers: { 'Content-Type': 'application/json' },
        });
        expectProblem(r, 422);
        expect(r.body.errors[0].field).to.equal('');
      }
    });

    it('answers 413 for a body over 1 MB on PUT /products, with or without Content-Length, and writes nothing', async () => {
      const body = Buffer.from(JSON.stringify(productBody('loja', { description: 'd'.repeat(MB) })));
      const declared = await hub.api.request('PUT', '/products/huge', {
        body,
        headers: { 'Content-Type': 'application/json' },
      });
      expectProblem(declared, 413);
      const streamed = await chunkedPut(t, hub.key, '/products/huge2', body);
      expectProblem(streamed, 413);
      expect((await hub.api.get('/products/huge')).status).to.equal(404);
      expect((await hub.api.get('/products/huge2')).status).to.equal(404);
      expect(await productEvents(t, hub, 'huge')).to.deep.equal([]);
      // The connection stays usable afterwards.
      expect((await hub.api.get('/me')).status).to.equal(200);
    });

    it('takes a body of exactly 1 MB (the limit is on bytes, not on fields)', async () => {
      const base = JSON.stringify(productBody('loja'));
      const tail = ',"brand":"b"}';
      const body = base.slice(0, -1) + ' '.repeat(MB - Buffer.byteLength(base) + 1 - Buffer.byteLength(tail)) + tail;
      expect(Buffer.byteLength(body)).to.equal(MB);
      const r = await hub.api.request('PUT', '/products/near-limit', {
        body,
        headers: { 'Content-Type': 'application/json' },
      });
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
    });

    it('refuses unknown fields in bodies, nested ones included', async () => {
      const r = await hub.api.put(
        '/products/u',
        productBody('loja', {
          colour: 'blue',
          shipping: { type: 'free', speed: 1 },
          rating: { average: 4, count: 2, x: 1 },
        }),
      );
      expectInvalid(r, ['colour:unknown_field', 'shipping.speed:unknown_field', 'rating.x:unknown_field']);
    });
  });

  describe('query parameters', () => {
    it('refuses an unknown query parameter with 422 unknown_field, on reads and on writes', async () => {
      expectInvalid(await hub.api.get('/stores?foo=1'), ['foo:unknown_field']);
      expectInvalid(await hub.api.get('/me?x=1'), ['x:unknown_field']);
      expectInvalid(await hub.api.get('/stores/loja?verbose=true'), ['verbose:unknown_field']);
      expectInvalid(await hub.api.get('/products?store=loja'), ['store:unknown_field']);
      const w = await hub.api.put('/products/q?dry_run=1', productBody('loja'));
      expectInvalid(w, ['dry_run:unknown_field']);
      expect((await hub.api.get('/products/q')).status).to.equal(404);
      expectInvalid(await hub.api.delete('/products/q?force=1'), ['force:unknown_field']);
    });

    it('refuses an invalid limit (0, 201, text, fraction, negative) with 422 on limit', async () => {
      for (const limit of ['0', '201', 'abc', '1.5', '-1', '']) {
        const r = await hub.api.get(`/stores?limit=${limit}`);
        expectProblem(r, 422);
        expect(
          r.body.errors.map((e: { field: string }) => e.field),
          `limit=${limit}`,
        ).to.deep.equal(['limit']);
      }
      expect((await hub.api.get('/stores?limit=1')).status).to.equal(200);
      expect((await hub.api.get('/stores?limit=200')).status).to.equal(200);
    });

    it('refuses an invalid state or store_id filter on GET /products', async () => {
      expectInvalid(await hub.api.get('/products?state=live'), ['state:enum']);
      expectInvalid(await hub.api.get('/products?store_id=a%20b'), ['store_id:pattern']);
    });
  });

  describe('pagination', () => {
    let pager: Partner;
    const ids = ['A-1', 'B_2', 'a.3', 'b-4', '0', '9z', 'Zed', 'm', 'n.n', 'x_y'];
    const many = Array.from({ length: 45 }, (_, i) => `s-${String(i).padStart(3, '0')}`);
    const all = [...ids, ...many];
    const byteOrder = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

    before(async () => {
      pager = await t.partner();
      const r = await inChunks(all.length, 10, (i) => pager.api.put(`/stores/${all[i]}`, storeBody()));
      expect(
        r.map((a) => a.status).every((s) => s === 200),
        JSON.stringify(r.find((a) => a.status !== 200)?.body),
      ).to.equal(true);
      const products = await inChunks(60, 10, (i) =>
        pager.api.put(`/products/p${String(59 - i).padStart(2, '0')}`, productBody(i % 2 ? 'A-1' : 'm')),
      );
      expect(products.every((a) => a.status === 200)).to.equal(true);
    });

    async function walk(p: Partner, path: string, limit: number): Promise<{ items: any[]; pages: number }> {
      const items: any[] = [];
      let cursor: string | null = null;
      let pages = 0;
      const sep = path.includes('?') ? '&' : '?';
      do {
        const r: Answer = await p.api.get(
          `${path}${sep}limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        );
        expect(r.status, JSON.stringify(r.body)).to.equal(200);
        expect(r.body.data.length).to.be.at.most(limit);
        items.push(...r.body.data);
        cursor = r.body.next_cursor;
        pages += 1;
        expect(pages).to.be.below(200);
      } while (cursor);
      return { items, pages };
    }

    it('pages 50 by default, up to 200, and has next_cursor null on the last page', async () => {
      const first = await pager.api.get('/stores');
      expect(first.body.data).to.have.length(50);
      expect(first.body.next_cursor).to.be.a('string');
      const full = await pager.api.get('/stores?limit=200');
      expect(full.body.data).to.have.length(all.length);
      expect(full.body.next_cursor).to.equal(null);
      const exact = await pager.api.get(`/stores?limit=${all.length}`);
      expect(exact.body.next_cursor).to.equal(null);
    });

    it('walks every store exactly once in store_id order', async () => {
      for (const limit of [1, 7, 50]) {
        const { items } = await walk(pager, '/stores', limit);
        expect(items.map((s) => s.store_id)).to.deep.equal([...all].sort(byteOrder));
      }
    });

    it('walks every product exactly once in sku order, with and without filters', async () => {
      const { items } = await walk(pager, '/products', 7);
      const skus = items.map((p) => p.sku);
      expect(skus).to.deep.equal(Array.from({ length: 60 }, (_, i) => `p${String(i).padStart(2, '0')}`));
      const inM = await walk(pager, '/products?store_id=m', 4);
      expect(inM.items.every((p) => p.store_id === 'm')).to.equal(true);
      expect(inM.items.map((p) => p.sku)).to.deep.equal(skus.filter((_, i) => (59 - i) % 2 === 0));
    });

    it('refuses a cursor of another partner, another environment or another list (422 cursor invalid)', async () => {
      const cursor = (await pager.api.get('/stores?limit=2')).body.next_cursor as string;
      expect((await pager.api.get(`/stores?cursor=${encodeURIComponent(cursor)}`)).status).to.equal(200);
      const otherPartner = await hub.api.get(`/stores?cursor=${encodeURIComponent(cursor)}`);
      expectInvalid(otherPartner, ['cursor:invalid']);
      const test = await t.key(pager.partnerId, 'test');
      expectInvalid(await test.api.get(`/stores?cursor=${encodeURIComponent(cursor)}`), ['cursor:invalid']);
      expectInvalid(await pager.api.get(`/products?cursor=${encodeURIComponent(cursor)}`), ['cursor:invalid']);
      // Another key of the same partner and environment may go on.
      const sameTenant = await t.key(pager.partnerId, 'live');
      expect((await sameTenant.api.get(`/stores?cursor=${encodeURIComponent(cursor)}`)).status).to.equal(200);
    });

    it('refuses a tampered, garbage, empty or oversized cursor with 422 cursor invalid', async () => {
      const cursor = (await pager.api.get('/stores?limit=2')).body.next_cursor as string;
      const [payload, mac] = cursor.split('.') as [string, string];
      const values = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as string[];
      const edited = `${Buffer.from(JSON.stringify(['Zed', values[1]])).toString('base64url')}.${mac}`;
      const flipped = cursor.slice(0, 5) + (cursor[5] === 'A' ? 'B' : 'A') + cursor.slice(6);
      const macFlipped = cursor.slice(0, -3) + (cursor.at(-3) === 'A' ? 'B' : 'A') + cursor.slice(-2);
      for (const bad of [edited, flipped, macFlipped, payload, `${payload}.`, 'abc', '', '%%%', 'x'.repeat(2000)]) {
        const r = await pager.api.get(`/stores?cursor=${encodeURIComponent(bad)}`);
        expectInvalid(r, ['cursor:invalid']);
      }
    });
  });

  it('reports every invalid field of a store at once (fieldCodes helper sanity)', async () => {
    const r = await hub.api.put('/stores/x', { name: 'X', cnpj: '1', website_url: 'ftp://a', domains: ['UPPER.com'] });
    expect(fieldCodes(r)).to.deep.equal(['cnpj:pattern', 'domains[0]:pattern', 'name:min_length', 'website_url:https']);
  });
});
