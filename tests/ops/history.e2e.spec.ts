import { expect } from 'chai';
import { queuedJobView } from '../../shared-schema/contract/job-view.js';
import { commandDoor, type WriteRoute } from '../../command-api/app.js';
import { frontDoor } from '../../infra/http/front-door.js';
import { AggregateRepository } from '../../command-api/aggregate-repository.js';
import { CachedAggregateStates } from '../../infra/adapters/event-store/cached-state.js';
import { keyLookup } from '../../infra/wiring/service.js';
import { listen, portOf, closeServer } from '../../infra/http/gateway.js';
import type { HistoryEntry } from '../../infra/ops/history.js';
import pino from 'pino';
import {
  client,
  productBody,
  startTestService,
  storeBody,
  type Partner,
  type TestService,
} from '../support/service.js';
import { until } from '../support/deadline.js';

describe('operation history', function () {
  let t: TestService;
  let hub: Partner;

  before(async () => {
    t = await startTestService();
    t.clock.set(new Date('2026-01-02T00:00:00Z'));
    hub = await t.partner({ type: 'hub' });
  });
  after(async () => t.close());

  const history = async (partnerId: string, query = '') => {
    const r = await t.admin.get(`/partners/${partnerId}/history${query}`);
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    return r.body as { entries: HistoryEntry[]; next_cursor: string | null };
  };
  /** The entry of one request, once written (history is written in the background, after the answer). */
  const entryOf = async (partnerId: string, requestId: string | null): Promise<HistoryEntry> => {
    let found: HistoryEntry | undefined;
    await until(
      async () => {
        found = (await history(partnerId, '?limit=500')).entries.find((e) => e.request_id === requestId);
        return found !== undefined;
      },
      5000,
      `history entry of ${requestId}`,
    );
    return found!;
  };

  it('records an identified write with status, references, field names, route, key and time, and no value', async () => {
    const body = storeBody({ name: 'Loja Marcador Secreto' });
    const r = await hub.api.put('/stores/loja-h', body);
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    const e = await entryOf(hub.partnerId, r.headers.get('x-request-id'));
    expect(e).to.deep.include({
      kind: 'request',
      partner_id: hub.partnerId,
      env: 'live',
      key_id: hub.keyId,
      method: 'PUT',
      route: '/stores/:store_id',
      status: 200,
      outcome: null,
      at: '2026-01-02T00:00:00.000Z',
    });
    expect(e.refs).to.deep.equal({ store_id: 'loja-h' });
    expect(e.fields).to.have.members(Object.keys(body));
    const text = JSON.stringify(e);
    for (const value of [body.cnpj, body.name, body.website_url, 'shop.test', 'debug', hub.key])
      expect(text).not.to.contain(value);
  });

  it('takes references from the body (named fields only) and records failures and reads without query strings', async () => {
    const put = await hub.api.put('/products/sku-h1', productBody('loja-h', { title: 'Titulo Secreto' }));
    expect(put.status, JSON.stringify(put.body)).to.equal(200);
    const bad = await hub.api.patch('/products/sku-h1', { price_cents: -1, nota_secreta: 'valor-secreto' });
    expect(bad.status).to.equal(422);
    const list = await hub.api.get('/products?limit=1&store_id=loja-h');
    expect(list.status).to.equal(200);
    const del = await hub.api.delete('/products/sku-h1');
    expect(del.status).to.equal(204);

    const ePut = await entryOf(hub.partnerId, put.headers.get('x-request-id'));
    expect(ePut.refs).to.deep.equal({ sku: 'sku-h1', store_id: 'loja-h' });
    expect(JSON.stringify(ePut)).not.to.contain('Titulo Secreto');
    const eBad = await entryOf(hub.partnerId, bad.headers.get('x-request-id'));
    expect(eBad).to.deep.include({ method: 'PATCH', route: '/products/:sku', status: 422 });
    expect(eBad.fields).to.have.members(['price_cents', 'nota_secreta']);
    expect(JSON.stringify(eBad)).not.to.contain('valor-secreto');
    const eList = await entryOf(hub.partnerId, list.headers.get('x-request-id'));
    expect(eList).to.deep.include({ method: 'GET', route: '/products', status: 200, fields: [], refs: {} });
    expect(JSON.stringify(eList)).not.to.match(/limit|loja-h/);
    const eDel = await entryOf(hub.partnerId, del.headers.get('x-request-id'));
    expect(eDel).to.deep.include({ method: 'DELETE', status: 204, refs: { sku: 'sku-h1' } });
  });

  it('keeps no entry for an unidentified call and keeps partners and environments apart', async () => {
    const anonymous = await t.as('ik_live_nope').get('/me');
    expect(anonymous.status).to.equal(401);
    const testKey = await t.key(hub.partnerId, 'test');
    const other = await t.partner({ type: 'store' });
    const me = await testKey.api.get('/me');
    const otherMe = await other.api.get('/me');
    await entryOf(hub.partnerId, me.headers.get('x-request-id'));
    await entryOf(other.partnerId, otherMe.headers.get('x-request-id'));
    const all = [
      ...(await history(hub.partnerId, '?limit=500')).entries,
      ...(await history(other.partnerId, '?limit=500')).entries,
    ];
    expect(all.map((e) => e.request_id)).not.to.include(anonymous.headers.get('x-request-id'));
    expect((await history(hub.partnerId, '?env=test&limit=500')).entries.map((e) => e.request_id)).to.deep.equal([
      me.headers.get('x-request-id'),
    ]);
    expect((await history(hub.partnerId, '?env=live&limit=500')).entries.every((e) => e.env === 'live')).to.equal(true);
    expect(
      (await history(other.partnerId, '?limit=500')).entries.every((e) => e.partner_id === other.partnerId),
    ).to.equal(true);
  });

  it('pages newest first with an opaque cursor', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await hub.api.get('/me')).headers.get('x-request-id')!);
    await entryOf(hub.partnerId, ids[2]);
    const first = await history(hub.partnerId, '?env=live&limit=2');
    expect(first.entries.map((e) => e.request_id)).to.deep.equal([ids[2], ids[1]]);
    const second = await history(hub.partnerId, `?env=live&limit=2&cursor=${first.next_cursor}`);
    expect(second.entries[0].request_id).to.equal(ids[0]);
    expect((await t.admin.get(`/partners/${hub.partnerId}/history?cursor=bogus`)).status).to.equal(422);
    expect((await t.admin.get(`/partners/${hub.partnerId}/history?env=prod`)).status).to.equal(422);
  });

  it('starts when the partner is activated (first key)', async () => {
    const created = await t.admin.post('/partners', { name: 'Ainda Inativo', partner_type: 'store' });
    const partnerId = created.body.partner_id as string;
    await t.service.operations.recordHistory({
      kind: 'batch_processed',
      partnerId,
      env: 'live',
      refs: { job_id: 'job_before' },
      outcome: 'done',
    });
    expect((await history(partnerId)).entries).to.deep.equal([]);
    await t.key(partnerId, 'live');
    await t.service.operations.recordHistory({
      kind: 'batch_processed',
      partnerId,
      env: 'live',
      refs: { job_id: 'job_after' },
      outcome: 'done',
    });
    expect((await history(partnerId)).entries.map((e) => e.refs.job_id)).to.deep.equal(['job_after']);
  });

  it('keeps a batch received and a batch processed as two entries', async () => {
    // The batch route of the command door, stubbed: it answers 202 with a job as the real one does.
    const s = t.service;
    const deps = {
      events: s.events,
      reads: s.reads,
      messaging: s.messaging,
      clock: s.clock,
      repo: new AggregateRepository(new CachedAggregateStates(s.events)),
      publicBaseUrl: 'http://127.0.0.1',
    };
    const routes: WriteRoute[] = [
      {
        method: 'POST',
        path: '/products/batch',
        scope: 'catalog',
        batch: true,
        handler: async () => ({
          status: 202,
          body: queuedJobView('job_01TEST', 1, s.clock.now().toISOString()),
          headers: {},
        }),
      },
    ];
    const app = frontDoor(commandDoor({ deps, routes }), {
      log: pino({ level: 'silent' }),
      baseUrl: 'http://127.0.0.1/v1',
      keys: keyLookup(s.reads),
      routes,
      messaging: s.messaging,
      clock: s.clock,
      ...s.operations.doorHooks('command'),
    });
    const server = await listen(app.callback(), 0, '127.0.0.1');
    try {
      const batch = { items: [{ op: 'delete', sku: 'sku-secreto' }] };
      const r = await client(`http://127.0.0.1:${portOf(server)}/v1`, hub.key).post('/products/batch', batch);
      expect(r.status).to.equal(202);
      const received = await entryOf(hub.partnerId, r.headers.get('x-request-id'));
      expect(received).to.deep.include({
        kind: 'request',
        route: '/products/batch',
        status: 202,
        fields: ['items'],
        refs: { job_id: 'job_01TEST' },
      });
      expect(JSON.stringify(received)).not.to.contain('sku-secreto');
      // The batch runner records the processed batch when the job is done.
      await s.operations.recordHistory({
        kind: 'batch_processed',
        partnerId: hub.partnerId,
        env: 'live',
        keyId: hub.keyId,
        requestId: r.headers.get('x-request-id'),
        refs: { job_id: 'job_01TEST' },
        outcome: 'done',
      });
      const both = (await history(hub.partnerId, '?limit=500')).entries.filter((e) => e.refs.job_id === 'job_01TEST');
      expect(both.map((e) => e.kind)).to.deep.equal(['batch_processed', 'request']);
      expect(both[0]).to.deep.include({ outcome: 'done', status: null, route: null });
    } finally {
      await closeServer(server);
    }
  });

  it('answers as usual when the history writer fails, and counts the failure', async () => {
    const ops = t.service.operations;
    const sink = ops.history.sink;
    const failures = async () => {
      const text = await (await fetch(`http://127.0.0.1:${portOf(t.service.admin)}/metrics`)).text();
      return Number(/^pc_history_write_failures_total (\d+)/m.exec(text)?.[1] ?? NaN);
    };
    const before = await failures();
    try {
      ops.history.sink = { append: async () => Promise.reject(new Error('disk full')) };
      const put = await hub.api.put('/products/sku-h2', productBody('loja-h'));
      expect(put.status, JSON.stringify(put.body)).to.equal(200);
      expect(put.body).to.include({ sku: 'sku-h2', state: 'pending' });
      ops.history.sink = {
        append: () => {
          throw new Error('writer crashed');
        },
      };
      const read = await hub.api.get('/products/sku-h2');
      expect(read.status).to.equal(200);
      expect(read.body.sku).to.equal('sku-h2');
      await ops.history.flush();
      expect(await failures()).to.equal(before + 2);
    } finally {
      ops.history.sink = sink;
    }
    const after = await hub.api.get('/me');
    await entryOf(hub.partnerId, after.headers.get('x-request-id'));
  });
});
