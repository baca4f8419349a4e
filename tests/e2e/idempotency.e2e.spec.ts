import { expect } from 'chai';
import { productBody, startTestService, storeBody, type Partner, type TestService } from '../support/service.js';
import type { SqliteReadStore } from '../../infra/adapters/sqlite/read-store.js';
import { expectProblem, fieldCodes, productEvents } from '../support/e2e.js';

const DAY_MS = 24 * 60 * 60 * 1000;

describe('Idempotency-Key on writes (HTTP)', function () {
  let t: TestService;
  let hub: Partner;
  let n = 0;
  const fresh = () => `sku-${++n}`;
  const key = () => `idem-${n}-${Math.random().toString(36).slice(2)}`;

  before(async () => {
    t = await startTestService();
    t.clock.set(new Date('2026-01-02T00:00:00Z'));
    hub = await t.partner({ type: 'hub' });
    expect((await hub.api.put('/stores/loja', storeBody())).status).to.equal(200);
  });
  after(async () => t.close());

  it('replays the first answer for the same key, route and body, and writes nothing more', async () => {
    const sku = fresh();
    const k = key();
    const body = productBody('loja', { price_cents: 1000 });
    const first = await hub.api.put(`/products/${sku}`, body, { 'Idempotency-Key': k });
    expect(first.status).to.equal(200);
    t.clock.advance(1000);
    // The same body with its keys in another order is the same body.
    const reordered = Object.fromEntries(Object.entries(body).reverse());
    const again = await hub.api.put(`/products/${sku}`, reordered, { 'Idempotency-Key': k });
    expect(again.status).to.equal(200);
    expect(again.body).to.deep.equal(first.body);
    expect(again.headers.get('x-request-id')).to.not.equal(first.headers.get('x-request-id'));
    const events = await productEvents(t, hub, sku);
    expect(events.map((e) => e.type)).to.deep.equal(['ProductUpserted']);
  });

  it('replays a store registration and a DELETE too', async () => {
    const k = key();
    const body = storeBody();
    const first = await hub.api.put('/stores/idem-store', body, { 'Idempotency-Key': k });
    expect(first.status).to.equal(200);
    const again = await hub.api.put('/stores/idem-store', body, { 'Idempotency-Key': k });
    expect(again).to.include({ status: 200 });
    expect(again.body).to.deep.equal(first.body);

    const sku = fresh();
    await hub.api.put(`/products/${sku}`, productBody('loja'));
    const dk = key();
    expect((await hub.api.delete(`/products/${sku}`, { 'Idempotency-Key': dk })).status).to.equal(204);
    const dAgain = await hub.api.delete(`/products/${sku}`, { 'Idempotency-Key': dk });
    expect(dAgain.status).to.equal(204);
    expect(dAgain.body).to.equal('');
    expect((await productEvents(t, hub, sku)).map((e) => e.type)).to.deep.equal(['ProductUpserted', 'ProductRemoved']);
  });

  it('answers 422 for the same key with another body or another route, and writes nothing', async () => {
    const sku = fresh();
    const k = key();
    expect(
      (await hub.api.put(`/products/${sku}`, productBody('loja', { price_cents: 1000 }), { 'Idempotency-Key': k }))
        .status,
    ).to.equal(200);
    const otherBody = await hub.api.put(`/products/${sku}`, productBody('loja', { price_cents: 1001 }), {
      'Idempotency-Key': k,
    });
    expectProblem(otherBody, 422);
    expect(otherBody.body.errors[0]).to.include({ field: 'Idempotency-Key' });
    const otherSku = fresh();
    const otherRoute = await hub.api.put(`/products/${otherSku}`, productBody('loja', { price_cents: 1000 }), {
      'Idempotency-Key': k,
    });
    expectProblem(otherRoute, 422);
    const otherMethod = await hub.api.patch(
      `/products/${sku}`,
      { price_cents: 1000, updated_at: '2026-01-01T00:00:00Z' },
      { 'Idempotency-Key': k },
    );
    expectProblem(otherMethod, 422);
    expect((await productEvents(t, hub, sku)).length).to.equal(1);
    expect(await productEvents(t, hub, otherSku)).to.deep.equal([]);
    expect((await hub.api.get(`/products/${otherSku}`)).status).to.equal(404);
  });

  it('takes a key of 100 characters and refuses one of 101 with 422 before writing', async () => {
    const sku = fresh();
    const ok = await hub.api.put(`/products/${sku}`, productBody('loja'), { 'Idempotency-Key': 'k'.repeat(100) });
    expect(ok.status).to.equal(200);
    const other = fresh();
    const long = await hub.api.put(`/products/${other}`, productBody('loja'), { 'Idempotency-Key': 'k'.repeat(101) });
    expectProblem(long, 422);
    expect(long.body.errors[0]).to.include({ field: 'Idempotency-Key' });
    expect(await productEvents(t, hub, other)).to.deep.equal([]);
  });

  it('runs two (and more) concurrent requests with one key exactly once; all get the same answer', async () => {
    const sku = fresh();
    const k = key();
    const body = productBody('loja', { price_cents: 4321 });
    const answers = await Promise.all(
      Array.from({ length: 6 }, () => hub.api.put(`/products/${sku}`, body, { 'Idempotency-Key': k })),
    );
    for (const a of answers) {
      expect(a.status, JSON.stringify(a.body)).to.equal(200);
      expect(a.body).to.deep.equal(answers[0].body);
    }
    expect((await productEvents(t, hub, sku)).length).to.equal(1);
  });

  it('never stores an error: a corrected repeat with the same key runs for real', async () => {
    const sku = fresh();
    const k = key();
    // 422 (validation): not stored; the same invalid body gives the same 422 again.
    const bad = await hub.api.put(`/products/${sku}`, productBody('loja', { price_cents: 0 }), {
      'Idempotency-Key': k,
    });
    expectProblem(bad, 422);
    const badAgain = await hub.api.put(`/products/${sku}`, productBody('loja', { price_cents: 0 }), {
      'Idempotency-Key': k,
    });
    expect(fieldCodes(badAgain)).to.deep.equal(fieldCodes(bad));
    const fixed = await hub.api.put(`/products/${sku}`, productBody('loja', { price_cents: 10 }), {
      'Idempotency-Key': k,
    });
    expect(fixed.status).to.equal(200);
    expect((await productEvents(t, hub, sku)).length).to.equal(1);

    // 404 (business rule): PATCH before the product exists, then the same PATCH with the same key after the PUT.
    const later = fresh();
    const pk = key();
    const patch = { price_cents: 500, updated_at: '2026-01-01T01:00:00Z' };
    expectProblem(await hub.api.patch(`/products/${later}`, patch, { 'Idempotency-Key': pk }), 404);
    expect((await hub.api.put(`/products/${later}`, productBody('loja'))).status).to.equal(200);
    const patched = await hub.api.patch(`/products/${later}`, patch, { 'Idempotency-Key': pk });
    expect(patched.status).to.equal(200);
    expect((await productEvents(t, hub, later)).map((e) => e.type)).to.deep.equal([
      'ProductUpserted',
      'ProductPatched',
    ]);
  });

  it('keeps a key 24 h by the clock: a repeat just before replays, one after runs again', async () => {
    const sku = fresh();
    const k = key();
    const body = productBody('loja', { updated_at: t.clock.now().toISOString() });
    expect((await hub.api.put(`/products/${sku}`, body, { 'Idempotency-Key': k })).status).to.equal(200);
    t.clock.advance(DAY_MS - 1);
    expect((await hub.api.put(`/products/${sku}`, body, { 'Idempotency-Key': k })).status).to.equal(200);
    expect((await productEvents(t, hub, sku)).length).to.equal(1);
    t.clock.advance(1);
    const after = await hub.api.put(`/products/${sku}`, body, { 'Idempotency-Key': k });
    expect(after.status).to.equal(200);
    expect(after.body.ignored_stale).to.equal(false); // same updated_at: applied in arrival order
    expect((await productEvents(t, hub, sku)).length).to.equal(2);
    // …and that new answer is the one kept from now on.
    const replay = await hub.api.put(`/products/${sku}`, body, { 'Idempotency-Key': k });
    expect(replay.body).to.deep.equal(after.body);
    expect((await productEvents(t, hub, sku)).length).to.equal(2);
  });

  it('scopes keys to the partner and environment: another tenant may use the same key', async () => {
    const k = key();
    const sku = fresh();
    expect(
      (await hub.api.put(`/products/${sku}`, productBody('loja', { price_cents: 100 }), { 'Idempotency-Key': k }))
        .status,
    ).to.equal(200);
    const other = await t.partner();
    expect((await other.api.put('/stores/loja', storeBody())).status).to.equal(200);
    const theirs = await other.api.put(
      `/products/${sku}`,
      productBody('loja', { price_cents: 200, commission: { type: 'fixed', amount_cents: 7 } }),
      { 'Idempotency-Key': k },
    );
    expect(theirs.status, JSON.stringify(theirs.body)).to.equal(200);
    expect(theirs.body.expected_commission_cents).to.equal(7);
    const test = await t.key(hub.partnerId, 'test');
    expect((await test.api.put('/stores/loja', storeBody())).status).to.equal(200);
    const inTest = await test.api.put(`/products/${sku}`, productBody('loja', { price_cents: 300 }), {
      'Idempotency-Key': k,
    });
    expect(inTest.status).to.equal(200);
    expect(await productEvents(t, test, sku, 'test')).to.have.length(1);
  });

  it('expires records by the service clock, not the wall clock (the sweep keeps a record the clock says is live)', async () => {
    // The manual clock stands months before the wall clock here; a sweep on wall time would drop the record.
    const sku = fresh();
    const k = key();
    const body = productBody('loja', { updated_at: t.clock.now().toISOString() });
    const first = await hub.api.put(`/products/${sku}`, body, { 'Idempotency-Key': k });
    expect(first.status).to.equal(200);
    await (t.service.reads as unknown as { inner: SqliteReadStore }).inner.sweepExpired();
    const again = await hub.api.put(`/products/${sku}`, body, { 'Idempotency-Key': k });
    expect(again.body).to.deep.equal(first.body);
    expect((await productEvents(t, hub, sku)).length).to.equal(1);
  });

  it('keeps idempotency records across a restart', async () => {
    const sku = fresh();
    const k = key();
    const body = productBody('loja', { updated_at: t.clock.now().toISOString() });
    const first = await hub.api.put(`/products/${sku}`, body, { 'Idempotency-Key': k });
    expect(first.status).to.equal(200);
    await t.restart();
    const api = t.as(hub.key);
    const again = await api.put(`/products/${sku}`, body, { 'Idempotency-Key': k });
    expect(again.status).to.equal(200);
    expect(again.body).to.deep.equal(first.body);
    expect((await productEvents(t, hub, sku)).length).to.equal(1);
    hub = { ...hub, api };
  });
});
