import { expect } from 'chai';
import { Writable } from 'node:stream';
import pino from 'pino';
import { portOf } from '../../infra/http/gateway.js';
import { productBody, startTestService, storeBody, type Partner, type TestService } from '../support/service.js';
import { until } from '../support/deadline.js';
import { parsePrometheus } from '../support/prometheus.js';
import { answerOfFetch, expectProblemLike } from '../support/e2e.js';

describe('health and metrics on the admin port', function () {
  let t: TestService;
  let hub: Partner;
  const adminPort = () => `http://127.0.0.1:${portOf(t.service.admin)}`;
  const get = (path: string, headers: Record<string, string> = {}) => fetch(adminPort() + path, { headers });
  const ready = async () => {
    const r = await get('/admin/v1/health/ready');
    return {
      status: r.status,
      body: (await r.json()) as { status: string; checks: { projections: Record<string, string> } },
    };
  };
  const scrape = async () => {
    const r = await get('/metrics');
    expect(r.status).to.equal(200);
    expect(r.headers.get('content-type')).to.contain('text/plain');
    return parsePrometheus(await r.text());
  };

  before(async () => {
    t = await startTestService({}, undefined, { operations: { readyMaxLagEvents: 3 } });
    t.clock.set(new Date('2026-01-02T00:00:00Z'));
    hub = await t.partner({ type: 'hub' });
    expect((await hub.api.put('/stores/loja-m', storeBody())).status).to.equal(200);
  });
  after(async () => t.close());

  it('answers liveness and readiness without the admin token', async () => {
    const live = await get('/admin/v1/health/live');
    expect(live.status).to.equal(200);
    expect(await live.json()).to.deep.equal({ status: 'live' });
    await until(async () => (await ready()).status === 200, 30_000, 'ready');
    const r = await ready();
    expect(r.body.status).to.equal('ready');
    expect(r.body.checks).to.deep.include({ shutting_down: false, event_store: 'ok', read_store: 'ok' });
    expect((await get('/admin/v1/projections')).status).to.equal(401); // the rest of the admin API keeps its token
  });

  it('turns readiness to 503 while a projection is far behind, and back once it has caught up', async () => {
    const release = await t.service.operations.gate.hold();
    try {
      for (let i = 0; i < 5; i++)
        expect((await hub.api.put(`/products/sku-m${i}`, productBody('loja-m'))).status).to.equal(200);
      const r = await ready();
      expect(r.status).to.equal(503);
      expect(r.body.status).to.equal('not_ready');
      expect(r.body.checks.projections.products).to.match(/^behind/);
      const products = (await t.admin.get('/projections')).body.projections.find(
        (p: { name: string }) => p.name === 'products',
      );
      expect(products).to.include({ state: 'behind', lag_events: 5 });
    } finally {
      release();
    }
    await until(async () => (await ready()).status === 200, 30_000, 'ready again');
  });

  it('serves Prometheus metrics: requests by route and status with latency, projections, queues, cover checks, rate-brake refusals', async () => {
    const ops = t.service.operations;
    const unregister = ops.metrics.registerQueue('cover_check', () => 7);
    ops.metrics.registerQueue('jobs', async () => 2);
    ops.metrics.countCoverCheck('accepted');
    ops.metrics.countCoverCheck('accepted');
    ops.metrics.countCoverCheck('image_too_small');
    for (let i = 0; i < 3; i++) expect((await hub.api.get('/me')).status).to.equal(200);
    expect((await hub.api.get('/nowhere/at/all')).status).to.equal(404);
    // Rate brake: a fresh key, 600 writes a minute allowed (the clock is manual: one window).
    const braked = await t.key(hub.partnerId, 'live');
    const statuses: number[] = [];
    for (let round = 0; round < 13; round++) {
      statuses.push(
        ...(await Promise.all(Array.from({ length: 50 }, () => braked.api.delete('/nowhere')))).map((r) => r.status),
      );
    }
    expect(statuses.filter((s) => s === 429)).to.have.length(650 - 600);
    expect(
      await t.service.runner.waitFor(await t.service.events.headPosition(), 30_000),
      'projections caught up',
    ).to.equal(true);

    const m = await scrape();
    expect(m.types).to.include({
      pc_http_requests_total: 'counter',
      pc_http_request_duration_seconds: 'histogram',
      pc_projection_position: 'gauge',
      pc_projection_lag_positions: 'gauge',
      pc_work_queue_depth: 'gauge',
      pc_cover_checks_total: 'counter',
      pc_rate_brake_refusals_total: 'counter',
    });
    const me = { door: 'query', method: 'GET', route: '/me', status: '200' };
    expect(m.value('pc_http_requests_total', me)).to.be.at.least(3);
    expect(m.value('pc_http_request_duration_seconds_count', me)).to.equal(m.value('pc_http_requests_total', me));
    expect(m.value('pc_http_request_duration_seconds_bucket', { ...me, le: '+Inf' })).to.equal(
      m.value('pc_http_requests_total', me),
    );
    expect(m.value('pc_http_request_duration_seconds_sum', me)).to.be.greaterThan(0);
    expect(m.value('pc_http_requests_total', { door: 'query', route: 'unmatched', status: '404' })).to.equal(1);
    expect(
      m.value('pc_http_requests_total', { door: 'command', method: 'PUT', route: '/stores/:store_id', status: '200' }),
    ).to.equal(1);
    const head = await t.service.events.headPosition();
    expect(m.value('pc_event_log_head_position')).to.equal(head);
    for (const p of ['partners', 'stores', 'products']) {
      expect(m.value('pc_projection_position', { projection: p }), p).to.equal(head);
      expect(m.value('pc_projection_lag_positions', { projection: p }), p).to.equal(0);
    }
    expect(m.value('pc_work_queue_depth', { queue: 'cover_check' })).to.equal(7);
    expect(m.value('pc_work_queue_depth', { queue: 'jobs' })).to.equal(2);
    expect(m.value('pc_cover_checks_total', { outcome: 'accepted' })).to.equal(2);
    expect(m.value('pc_cover_checks_total', { outcome: 'image_too_small' })).to.equal(1);
    expect(m.value('pc_rate_brake_refusals_total', { door: 'command', kind: 'write' })).to.equal(50);
    for (const s of m.samples) {
      for (const v of Object.values(s.labels))
        for (const secret of [hub.partnerId, hub.key, braked.key]) expect(v).not.to.contain(secret);
    }
    unregister();
    expect((await scrape()).value('pc_work_queue_depth', { queue: 'cover_check' })).to.equal(undefined);
  });

  it('guards /metrics with METRICS_TOKEN when set, never with the admin token', async () => {
    const guarded = await startTestService({}, undefined, { operations: { metricsToken: 'metrics-token-0123456789' } });
    try {
      const url = `http://127.0.0.1:${portOf(guarded.service.admin)}`;
      // The admin API's own 401 (its token missing): /metrics answers its 401 the same way.
      const refused = await answerOfFetch(await fetch(`${url}/metrics`));
      const admin401 = await answerOfFetch(await fetch(`${url}/admin/v1/projections`));
      expectProblemLike(refused, admin401);
      expect(refused.headers.get('www-authenticate')).to.equal('Bearer realm="metrics"');
      expect(refused.headers.get('cache-control')).to.equal('no-store');
      expect(refused.body.detail).to.equal('Send `Authorization: Bearer <METRICS_TOKEN>`.');
      const head = await fetch(`${url}/metrics`, { method: 'HEAD' });
      expect(head.status).to.equal(401);
      expect(head.headers.get('content-type')).to.equal(refused.headers.get('content-type'));
      expect(await head.text()).to.equal('');
      expect(
        (await fetch(`${url}/metrics`, { headers: { Authorization: `Bearer ${guarded.service.adminToken}` } })).status,
      ).to.equal(401);
      const ok = await fetch(`${url}/metrics`, { headers: { Authorization: 'Bearer metrics-token-0123456789' } });
      expect(ok.status).to.equal(200);
      expect(parsePrometheus(await ok.text()).types).to.have.property('pc_http_requests_total');
      expect((await fetch(`${url}/admin/v1/health/live`)).status).to.equal(200);
    } finally {
      await guarded.close();
    }
  });

  it('labels the shopper routes and the redirector by their patterns, times searches, answers /favicon.ico 204 unlogged', async () => {
    const lines: { level: number; msg: string; status?: number; route?: string }[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const l of chunk.toString('utf8').split('\n')) if (l) lines.push(JSON.parse(l));
        done();
      },
    });
    const s = await startTestService({}, undefined, { log: pino({ level: 'info' }, sink) });
    try {
      const root = s.api.replace(/\/v1$/, '');
      const favicon = await fetch(`${root}/favicon.ico`);
      expect(favicon.status).to.equal(204);
      expect(favicon.headers.get('www-authenticate')).to.equal(null);
      const paths = [
        ['/', 200],
        ['/busca?q=camiseta', 200],
        ['/api/search?q=camiseta', 200],
        ['/api/search?q=meia', 200],
        ['/api/nothing', 404],
        ['/p/pt_secreto/loja-secreta/sku-secreto', 404],
        ['/test/p/pt_secreto/loja-secreta/sku-secreto', 404],
        ['/r/pt_secreto/loja-secreta/sku-secreto', 404],
        ['/test/r/pt_secreto/loja-secreta/sku-secreto', 404],
      ] as const;
      for (const [path, status] of paths) {
        const r = await fetch(`${root}${path}`, { headers: { Accept: 'application/json' } });
        await r.arrayBuffer();
        expect(r.status, path).to.equal(status);
      }
      const m = parsePrometheus(await (await fetch(`http://127.0.0.1:${portOf(s.service.admin)}/metrics`)).text());
      const count = (door: string, route: string, status: string) =>
        m.value('pc_http_requests_total', { door, method: 'GET', route, status });
      expect(count('query', '/favicon.ico', '204')).to.equal(1);
      expect(count('query', '/', '200')).to.equal(1);
      expect(count('query', '/busca', '200')).to.equal(1);
      expect(count('query', '/api/search', '200')).to.equal(2);
      expect(count('query', '/api/*', '404')).to.equal(1);
      expect(count('query', '/p/{partner}/{store}/{sku}', '404')).to.equal(1);
      expect(count('query', '/test/p/{partner}/{store}/{sku}', '404')).to.equal(1);
      expect(count('command', '/r/{partner}/{store}/{sku}', '404')).to.equal(1);
      expect(count('command', '/test/r/{partner}/{store}/{sku}', '404')).to.equal(1);
      expect(m.value('pc_http_requests_total', { route: 'unmatched' })).to.equal(undefined);
      expect(m.types).to.include({ pc_search_duration_seconds: 'histogram' });
      expect(m.value('pc_search_duration_seconds_count', { route: '/api/search', status: '200' })).to.equal(2);
      expect(m.value('pc_search_duration_seconds_count', { route: '/busca', status: '200' })).to.equal(1);
      expect(m.value('pc_search_duration_seconds_bucket', { route: '/busca', status: '200', le: '+Inf' })).to.equal(1);
      for (const sample of m.samples)
        for (const v of Object.values(sample.labels)) expect(v).not.to.match(/secret|camiseta|meia|nothing/);
      const faviconLines = lines.filter((l) => l.route === '/favicon.ico');
      expect(faviconLines.map((l) => [l.msg, l.status, l.level])).to.deep.equal([['request', 204, 30]]);
      expect(lines.filter((l) => l.level >= 40)).to.deep.equal([]);
    } finally {
      await s.close();
    }
  });
});
