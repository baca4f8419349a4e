import { expect } from 'chai';
import { productBody, startTestService, storeBody, type Partner, type TestService } from '../support/service.js';
import { until } from '../support/deadline.js';
import { streams } from '../../shared-schema/domain/streams.js';
import type { RecordedEvent } from '../../shared-schema/ports/event-store.js';
import { bodyValidator } from '../../shared-schema/contract/validation.js';
import { Job } from '../../shared-schema/contract/schemas/batch.js';

const jobSchema = bodyValidator(Job);

type Item = Record<string, unknown>;
const upsert = (sku: string, product: Record<string, unknown>): Item => ({ op: 'upsert', sku, product });
const del = (sku: string): Item => ({ op: 'delete', sku });
const MiB = 1024 * 1024;

describe('batch jobs over HTTP (POST /products/batch, GET /jobs/{job_id})', function () {
  this.timeout(30_000);
  let t: TestService;
  let a: Partner;
  let b: Partner;

  const done = async (p: Partner, jobId: string) => {
    let job: any;
    await until(
      async () => {
        job = (await p.api.get(`/jobs/${jobId}`)).body;
        return job.state === 'done' || job.state === 'failed';
      },
      20_000,
      `job ${jobId} finished`,
    );
    return job;
  };
  const post = (p: Partner, items: unknown, headers: Record<string, string> = {}) =>
    p.api.post('/products/batch', { items }, headers);
  const events = (stream: string): Promise<RecordedEvent[]> => t.service.events.readStream(stream);
  const coverChecked = (p: Partner, sku: string, url: string, ok: boolean, reasons: unknown[] = []) =>
    t.service.events.appendToStream(streams.product({ partnerId: p.partnerId, env: 'live' }, sku), [
      {
        type: 'CoverChecked',
        data: { sku, url, ok, reasons, checked_at: t.clock.now().toISOString() },
        metadata: { recorded_at: t.clock.now().toISOString() },
      },
    ]);

  before(async () => {
    t = await startTestService();
    t.clock.set(new Date('2026-01-02T00:00:00Z'));
    a = await t.partner({ type: 'hub', name: 'Hub A' });
    b = await t.partner({ type: 'hub', name: 'Hub B' });
    for (const [p, id] of [
      [a, 'loja-a'],
      [a, 'loja-a2'],
      [b, 'loja-b'],
    ] as const) {
      expect((await p.api.put(`/stores/${id}`, storeBody())).status).to.equal(200);
    }
    expect((await t.approveStore(a, 'loja-a')).status).to.equal(200);
  });
  after(async () => t.close());

  describe('limits', () => {
    it('takes 1000 items (202, queued) and refuses 1001 with 413, writing nothing', async () => {
      const items = Array.from({ length: 1001 }, (_, i) => upsert(`lim-${i}`, productBody('loja-a')));
      const head = await t.service.events.headPosition();
      const over = await post(a, items);
      expect(over.status).to.equal(413);
      expect(over.headers.get('content-type')).to.contain('application/problem+json');
      expect(await t.service.events.headPosition()).to.equal(head);

      const ok = await post(a, items.slice(0, 1000));
      expect(ok.status, JSON.stringify(ok.body)).to.equal(202);
      expect(ok.body).to.deep.include({
        state: 'queued',
        totals: { received: 1000, accepted: 0, rejected: 0, pending: 0, removed: 0 },
        finished_at: null,
      });
      expect(ok.body.job_id).to.match(/^job_[0-9A-HJKMNP-TV-Z]{26}$/);
      expect(ok.headers.get('location')).to.equal(`/v1/jobs/${ok.body.job_id}`);
      expect(jobSchema(ok.body)).to.deep.equal([]);
      const job = await done(a, ok.body.job_id);
      expect(jobSchema(job)).to.deep.equal([]);
      expect(job.totals).to.deep.equal({ received: 1000, accepted: 0, rejected: 0, pending: 1000, removed: 0 });
      expect((await a.api.get('/products/lim-999')).body.state).to.equal('pending');
      expect((await a.api.get('/products/lim-1000')).status).to.equal(404);
    });

    it('takes a body of exactly 5 MiB and refuses one byte more with 413, writing nothing', async () => {
      // 480 items of ~10 KB of real product data, then JSON whitespace to the exact size.
      const items = Array.from({ length: 480 }, (_, i) =>
        upsert(
          `big-${i}`,
          productBody('loja-a', {
            description: 'd'.repeat(5000),
            attributes: Object.fromEntries(Array.from({ length: 25 }, (_, k) => [`k${k}`, 'v'.repeat(200)])),
          }),
        ),
      );
      const json = JSON.stringify({ items });
      expect(json.length).to.be.within(4 * MiB, 5 * MiB);
      const send = (size: number) =>
        a.api.request('POST', '/products/batch', {
          body: json + ' '.repeat(size - json.length),
          headers: { 'Content-Type': 'application/json' },
        });
      const head = await t.service.events.headPosition();
      const over = await send(5 * MiB + 1);
      expect(over.status).to.equal(413);
      expect(await t.service.events.headPosition()).to.equal(head);
      const under = await send(5 * MiB);
      expect(under.status, JSON.stringify(under.body)).to.equal(202);
      const job = await done(a, under.body.job_id);
      expect(job.totals).to.deep.equal({ received: 480, accepted: 0, rejected: 0, pending: 480, removed: 0 });
      // Stored as several events, each far below EventStoreDB's 1 MiB append limit, BatchQueued last.
      const stored = await events(streams.job({ partnerId: a.partnerId, env: 'live' }, under.body.job_id));
      const parts = stored.filter((e) => e.type === 'BatchPartStored');
      expect(parts.length).to.be.greaterThan(4);
      for (const p of parts) expect(Buffer.byteLength(JSON.stringify(p.data))).to.be.below(600 * 1024);
      expect(stored[parts.length].type).to.equal('BatchQueued');
    });
  });

  describe('validation', () => {
    it('answers 422 listing every invalid field of the batch and its items, and writes nothing', async () => {
      const head = await t.service.events.headPosition();
      const r = await post(a, [
        upsert('ok-1', productBody('loja-a')),
        { op: 'upsert', sku: 'no-product' },
        { op: 'delete', sku: 'bad sku!' },
        upsert('bad-price', productBody('loja-a', { price_cents: 0, title: 'abc' })),
        { op: 'delete', sku: 'del-with-product', product: productBody('loja-a') },
        { op: 'upsert', sku: 'extra', product: productBody('loja-a'), extra: true },
        'not-an-object',
        { op: 'replace', sku: 'x' },
        upsert(
          'future',
          productBody('loja-a', { updated_at: '2026-01-05T00:00:00Z', original_price_cents: 100, price_cents: 200 }),
        ),
        upsert(
          'control',
          productBody('loja-a', {
            title: 'Camiseta \u202eazul',
            description: 'Linha 1\n\tLinha 2\r',
            attributes: { cor: 'azul\u0000' },
          }),
        ),
      ]);
      expect(r.status).to.equal(422);
      const got = r.body.errors.map((e: { field: string; code: string }) => `${e.field}:${e.code}`).sort();
      expect(got).to.deep.equal(
        [
          'items[1].product:required',
          'items[2].sku:pattern',
          'items[3].product.price_cents:minimum',
          'items[3].product.title:min_length',
          'items[4].product:unknown_field',
          'items[5].extra:unknown_field',
          'items[6]:object',
          'items[7].op:enum',
          'items[8].product.updated_at:future',
          'items[8].product.original_price_cents:not_higher',
          'items[9].product.title:control_character',
          'items[9].product.description:control_character',
          'items[9].product.attributes.cor:control_character',
        ].sort(),
      );
      expect(await t.service.events.headPosition()).to.equal(head);
      expect((await a.api.get('/products/ok-1')).status).to.equal(404);
    });

    it('answers 422 for a body that is not a batch', async () => {
      for (const body of [{}, { items: [] }, { items: 'x' }, { items: [del('a')], more: 1 }, []]) {
        const r = await a.api.post('/products/batch', body);
        expect(r.status, JSON.stringify(body)).to.equal(422);
      }
      expect((await a.api.post('/products/batch', { items: [] })).body.errors).to.deep.equal([
        { field: 'items', code: 'min_items', message: 'items takes at least 1 item.' },
      ]);
    });
  });

  describe('processing', () => {
    it('applies upserts and deletes with the rules of single writes; every item lands in one bucket', async () => {
      // Facts before the batch: products with a passed cover and a rejected cover, one of store loja-a to delete.
      expect((await a.api.put('/products/acc-1', productBody('loja-a'))).status).to.equal(200);
      await coverChecked(a, 'acc-1', 'https://cdn.shop.test/1.jpg', true);
      expect((await a.api.put('/products/rej-1', productBody('loja-a'))).status).to.equal(200);
      await coverChecked(a, 'rej-1', 'https://cdn.shop.test/1.jpg', false, [
        { code: 'image_too_small', field: 'image_urls[0]', message: 'small' },
      ]);
      expect((await a.api.put('/products/old-1', productBody('loja-a'))).status).to.equal(200);
      expect((await a.api.put('/products/moved-1', productBody('loja-a'))).status).to.equal(200);
      expect(
        (await a.api.put('/products/newer-1', productBody('loja-a', { updated_at: '2026-01-01T12:00:00Z' }))).status,
      ).to.equal(200);

      const later = { updated_at: '2026-01-01T06:00:00Z' };
      const items = [
        upsert('new-1', productBody('loja-a', later)), // 0 pending
        upsert('acc-1', productBody('loja-a', later)), // 1 accepted: update of a product that stays accepted
        upsert('rej-1', productBody('loja-a', later)), // 2 rejected: written, its cover stands rejected
        upsert('nostore-1', productBody('loja-nope')), // 3 store_not_found
        upsert('dom-1', productBody('loja-a', { product_url: 'https://evil.test/p' })), // 4 domain_not_declared
        upsert('img-1', productBody('loja-a', { image_urls: ['https://img.evil.test/1.jpg'] })), // 5 image_host_not_declared
        upsert('moved-1', productBody('loja-a2')), // 6 sku_store_conflict
        del('old-1'), // 7 removed
        del('never-1'), // 8 removed, although absent
        upsert('newer-1', productBody('loja-a', later)), // 9 older than the last received: ignored, state pending
        upsert('pend-2', productBody('loja-a2')), // 10 pending: store not approved
      ];
      t.clock.advance(60_000);
      const r = await post(a, items);
      expect(r.status).to.equal(202);
      const seen = await a.api.get(`/jobs/${r.body.job_id}`); // read-your-writes: found right after the 202
      expect(seen.status).to.equal(200);
      expect(seen.body.job_id).to.equal(r.body.job_id);
      const job = await done(a, r.body.job_id);
      expect(job.totals).to.deep.equal({ received: 11, accepted: 1, rejected: 5, pending: 3, removed: 2 });
      expect(jobSchema(job)).to.deep.equal([]);
      const t_ = job.totals;
      expect(t_.received).to.equal(t_.accepted + t_.rejected + t_.pending + t_.removed);
      expect(
        job.errors.map((e: any) => [e.index, e.sku, e.reasons.map((x: any) => `${x.field}:${x.code}`)]),
      ).to.deep.equal([
        [2, 'rej-1', ['image_urls[0]:image_too_small']],
        [3, 'nostore-1', ['store_id:store_not_found']],
        [4, 'dom-1', ['product_url:domain_not_declared']],
        [5, 'img-1', ['image_urls[0]:image_host_not_declared']],
        [6, 'moved-1', ['store_id:sku_store_conflict']],
      ]);
      for (const e of job.errors)
        for (const reason of e.reasons) expect(reason.message).to.be.a('string').and.not.equal('');
      expect(job.created_at).to.equal(t.clock.now().toISOString());
      expect(job.finished_at).to.be.a('string');
      expect((await a.api.get('/products/new-1')).body.state).to.equal('pending');
      expect((await a.api.get('/products/old-1')).body.state).to.equal('removed');
      expect((await a.api.get('/products/never-1')).status).to.equal(404);
      expect((await a.api.get('/products/nostore-1')).status).to.equal(404);
      expect((await a.api.get('/products/newer-1')).body.received_at).to.equal('2026-01-02T00:00:00.000Z');
      expect((await a.api.get('/products/new-1')).body.received_at).to.equal(job.finished_at);
      // Nothing written for refused or ignored items.
      expect(await events(streams.product({ partnerId: a.partnerId, env: 'live' }, 'moved-1'))).to.have.length(1);
      expect(await events(streams.product({ partnerId: a.partnerId, env: 'live' }, 'newer-1'))).to.have.length(1);
    });

    it('applies a SKU repeated inside one batch in array order, across chunk boundaries too', async () => {
      const items: Item[] = [
        upsert('rep-1', productBody('loja-a', { price_cents: 100 })),
        upsert('rep-1', productBody('loja-a', { price_cents: 200 })),
        del('rep-1'),
        upsert('rep-2', productBody('loja-a', { price_cents: 10 })),
        upsert('rep-1', productBody('loja-a', { price_cents: 300 })),
      ];
      for (let i = items.length; i < 60; i++) items.push(upsert(`fill-${i}`, productBody('loja-a')));
      items.push(upsert('rep-2', productBody('loja-a', { price_cents: 20 }))); // index 60: second chunk
      items.push(del('rep-2')); // 61
      const r = await post(a, items);
      const job = await done(a, r.body.job_id);
      expect(job.totals).to.deep.equal({ received: 62, accepted: 0, rejected: 0, pending: 60, removed: 2 });
      const rep1 = await events(streams.product({ partnerId: a.partnerId, env: 'live' }, 'rep-1'));
      expect(rep1.map((e) => [e.type, (e.data as any).product?.price_cents, e.metadata.job_item])).to.deep.equal([
        ['ProductUpserted', 100, 0],
        ['ProductUpserted', 200, 1],
        ['ProductRemoved', undefined, 2],
        ['ProductUpserted', 300, 4],
      ]);
      expect((await a.api.get('/products/rep-1')).body).to.include({ state: 'pending' });
      const rep2 = await events(streams.product({ partnerId: a.partnerId, env: 'live' }, 'rep-2'));
      expect(rep2.map((e) => e.metadata.job_item)).to.deep.equal([3, 60, 61]);
      expect((await a.api.get('/products/rep-2')).body.state).to.equal('removed');
      // running before the first chunk, then chunks in order (one pass more per repeat of a SKU), done last.
      const log = await events(streams.job({ partnerId: a.partnerId, env: 'live' }, r.body.job_id));
      expect(log.map((e) => e.type).filter((x) => x !== 'BatchPartStored')).to.deep.equal([
        'BatchQueued',
        'BatchStarted',
        ...Array(6).fill('BatchChunkProcessed'),
        'BatchDone',
      ]);
      expect(log.filter((e) => e.type === 'BatchChunkProcessed').map((e) => (e.data as any).chunk)).to.deep.equal([
        0, 0, 0, 0, 1, 1,
      ]);
    });

    it('shows a job only to its partner and environment (404 otherwise)', async () => {
      const r = await post(a, [del('iso-1')]);
      await done(a, r.body.job_id);
      expect((await b.api.get(`/jobs/${r.body.job_id}`)).status).to.equal(404);
      const aTest = await t.key(a.partnerId, 'test');
      expect((await aTest.api.get(`/jobs/${r.body.job_id}`)).status).to.equal(404);
      expect((await a.api.get('/jobs/job_01J00000000000000000000000')).status).to.equal(404);
      const noScope = await t.key(a.partnerId, 'live', ['reports']);
      expect((await noScope.api.get(`/jobs/${r.body.job_id}`)).status).to.equal(403);
    });

    it('replays a repeated Idempotency-Key with the same job, without a second job', async () => {
      const items = [upsert('idem-1', productBody('loja-a'))];
      const first = await post(a, items, { 'Idempotency-Key': 'batch-idem-1' });
      const again = await post(a, items, { 'Idempotency-Key': 'batch-idem-1' });
      expect(first.status).to.equal(202);
      expect(again.status).to.equal(202);
      expect(again.body).to.deep.equal(first.body);
      await done(a, first.body.job_id);
      expect(await events(streams.product({ partnerId: a.partnerId, env: 'live' }, 'idem-1'))).to.have.length(1);
      expect((await post(a, [del('idem-1')], { 'Idempotency-Key': 'batch-idem-1' })).status).to.equal(422);
    });

    it('is fair: a single item of partner B sent after a 1000-item batch of A finishes first', async () => {
      const big = await post(
        a,
        Array.from({ length: 1000 }, (_, i) => upsert(`fair-${i}`, productBody('loja-a'))),
      );
      const small = await post(b, [upsert('fair-b', productBody('loja-b'))]);
      expect(big.status).to.equal(202);
      expect(small.status).to.equal(202);
      const smallJob = await done(b, small.body.job_id);
      const bigNow = (await a.api.get(`/jobs/${big.body.job_id}`)).body;
      expect(smallJob.totals).to.deep.equal({ received: 1, accepted: 0, rejected: 0, pending: 1, removed: 0 });
      expect(bigNow.state).to.not.equal('done');
      await done(a, big.body.job_id);
      // In log order: B's job was done after at most two of A's chunks had been recorded since B was queued.
      const aLog = await events(streams.job({ partnerId: a.partnerId, env: 'live' }, big.body.job_id));
      const bLog = await events(streams.job({ partnerId: b.partnerId, env: 'live' }, small.body.job_id));
      const bQueued = bLog.find((e) => e.type === 'BatchQueued')!.position;
      const bDone = bLog.find((e) => e.type === 'BatchDone')!.position;
      const between = aLog.filter(
        (e) => e.type === 'BatchChunkProcessed' && e.position > bQueued && e.position < bDone,
      );
      expect(between.length).to.be.at.most(2);
      expect(aLog.find((e) => e.type === 'BatchDone')!.position).to.be.greaterThan(bDone);
    });
  });
});
