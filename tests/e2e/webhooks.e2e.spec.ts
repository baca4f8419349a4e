/**
 * Webhooks (`PUT`/`GET`/`DELETE /v1/webhook`) through HTTP, against a local HTTPS receiver, with the manual clock:
 * the secret shown once, every notification after the registration pushed in feed order and signed (Standard
 * Webhooks, checked here with an independent HMAC), retries with growing waits by the service clock, giving up after
 * 24 h, the attempts visible to the partner, and no delivery to a loopback address without the test setting.
 * The periodic scan is set to an hour of real time: only the admin's clock moves (which wait for the scan) deliver.
 */
import { createHmac } from 'node:crypto';
import { expect } from 'chai';
import { productBody, startTestService, storeBody, type Partner, type TestService } from '../support/service.js';
import { startHttpsReceiver, type HttpsReceiver, type Received } from '../support/https-receiver.js';

const HOUR = 60 * 60 * 1000;

describe('webhooks (e2e)', function () {
  this.timeout(60_000);
  let receiver: HttpsReceiver;
  let t: TestService;
  let hub: Partner;
  let secret = '';
  let updatedAt = Date.parse('2026-01-01T00:00:00Z');

  before(async () => {
    receiver = await startHttpsReceiver();
    t = await startTestService({ ...receiver.env(), WEBHOOK_SCAN_MS: '3600000' });
    t.clock.set(new Date('2026-01-02T00:00:00Z'));
    hub = await t.partner({ type: 'hub' });
    expect((await hub.api.put('/stores/main', storeBody())).status).to.equal(200);
    expect((await t.approveStore(hub, 'main')).status).to.equal(200);
  });
  after(async () => {
    await t?.close();
    await receiver?.close();
  });

  const feed = async (p: Partner) => (await p.api.get('/events?limit=200')).body.data as { id: string }[];
  /** A product write, read back through the feed (read-your-writes: its notification is projected). */
  const put = async (p: Partner, sku: string) => {
    const r = await p.api.put(
      `/products/${sku}`,
      productBody('main', { updated_at: new Date((updatedAt += 1000)).toISOString() }),
    );
    expect(r.status).to.equal(200);
    await feed(p);
  };
  /** Moves the manual clock; the admin answer waits for the sender's scan. */
  const advance = async (ms: number) => expect((await t.admin.post('/clock', { advance_ms: ms })).status).to.equal(200);
  const header = (r: Received, name: string) => r.headers[name] as string;
  /** The Standard Webhooks signature, computed here on its own. */
  const signature = (r: Received) => {
    const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
    const signed = `${header(r, 'webhook-id')}.${header(r, 'webhook-timestamp')}.${r.body}`;
    return `v1,${createHmac('sha256', key).update(signed).digest('base64')}`;
  };

  it('refuses a URL that is not HTTPS, a missing one and unknown fields (422, every field), writing nothing', async () => {
    const bad = await hub.api.put('/webhook', { url: 'http://hooks.partner.test/x', extra: 1 });
    expect(bad.status).to.equal(422);
    expect(bad.body.errors.map((e: { field: string }) => e.field).sort()).to.deep.equal(['extra', 'url']);
    expect((await hub.api.put('/webhook', {})).status).to.equal(422);
    expect((await hub.api.get('/webhook')).status).to.equal(404);
  });

  it('registers one endpoint per partner and environment; the secret is shown once', async () => {
    const created = await hub.api.put('/webhook', { url: receiver.url('/first') });
    expect(created.status).to.equal(200);
    expect(created.body.secret).to.match(/^whsec_[A-Za-z0-9+/]+=*$/);
    secret = created.body.secret;
    expect(created.body.created_at).to.equal(t.clock.now().toISOString());
    const moved = await hub.api.put('/webhook', { url: receiver.url('/hooks') });
    expect(moved.status).to.equal(200);
    expect(moved.body).to.deep.equal({ url: receiver.url('/hooks'), created_at: created.body.created_at });
    const got = await hub.api.get('/webhook');
    expect(got.body).to.deep.equal({ url: receiver.url('/hooks'), created_at: created.body.created_at, attempts: [] });
    const testKey = await t.key(hub.partnerId, 'test');
    expect((await testKey.api.get('/webhook')).status, 'the test environment has none').to.equal(404);
  });

  it('pushes each notification after the registration, in feed order, signed, and shows the attempts', async () => {
    const before = (await feed(hub)).length; // the store's approval came before the registration: not pushed
    expect(before).to.equal(2);
    await put(hub, 'a');
    await put(hub, 'b');
    const stranger = await t.partner({ type: 'hub' });
    expect((await stranger.api.put('/stores/main', storeBody())).status).to.equal(200);
    await put(stranger, 'theirs');
    await advance(0);
    const pushed = (await feed(hub)).slice(before);
    expect(pushed).to.have.length(2);
    expect(receiver.received.map((r) => JSON.parse(r.body) as unknown)).to.deep.equal(pushed);
    for (const r of receiver.received) {
      expect(r.path).to.equal('/hooks');
      expect(header(r, 'content-type')).to.equal('application/json');
      expect(header(r, 'webhook-id')).to.equal((JSON.parse(r.body) as { id: string }).id);
      expect(Number(header(r, 'webhook-timestamp'))).to.equal(Math.floor(t.clock.now().getTime() / 1000));
      expect(header(r, 'webhook-signature')).to.equal(signature(r));
    }
    const got = await hub.api.get('/webhook');
    expect(got.body.attempts.map((a: { notification_id: string }) => a.notification_id)).to.deep.equal(
      pushed.map((n) => n.id).reverse(),
    );
    expect(got.body.attempts[0]).to.include({ status: 200, ok: true, error: null });
    await advance(0);
    expect(receiver.received, 'nothing twice').to.have.length(2);
  });

  it('tries a failed delivery again after 1 min, then 2 min, with the later ones waiting behind it', async () => {
    receiver.received.length = 0;
    receiver.answer(500, 503);
    await put(hub, 'c');
    await put(hub, 'd');
    await advance(0);
    expect(receiver.received).to.have.length(1);
    let attempts = (await hub.api.get('/webhook')).body.attempts;
    expect(attempts[0]).to.deep.include({ status: 500, ok: false, error: 'the endpoint answered 500' });
    await advance(60_000 - 1);
    expect(receiver.received, 'not before a minute').to.have.length(1);
    await advance(1);
    expect(receiver.received).to.have.length(2);
    await advance(2 * 60_000 - 1);
    expect(receiver.received, 'the wait doubled').to.have.length(2);
    await advance(1);
    const ids = receiver.received.map((r) => header(r, 'webhook-id'));
    expect(ids).to.have.length(4);
    expect(ids[0]).to.equal(ids[1]);
    expect(ids[0]).to.equal(ids[2]);
    expect(ids[3]).to.not.equal(ids[0]);
    attempts = (await hub.api.get('/webhook')).body.attempts;
    expect(attempts.slice(0, 4).map((a: { status: number }) => a.status)).to.deep.equal([200, 200, 503, 500]);
  });

  it('gives a notification up 24 h after its first try, and goes on with the next', async () => {
    receiver.received.length = 0;
    receiver.answer(500, 500);
    await put(hub, 'e');
    await put(hub, 'f');
    await advance(0);
    await advance(25 * HOUR);
    const ids = receiver.received.map((r) => header(r, 'webhook-id'));
    expect(ids).to.have.length(3);
    expect(ids[0]).to.equal(ids[1]);
    const [latest, givenUp] = (await hub.api.get('/webhook')).body.attempts;
    expect(latest).to.include({ ok: true, notification_id: ids[2] });
    expect(givenUp.ok).to.equal(false);
    expect(givenUp.error).to.match(/given up 24 h after the first try/);
  });

  it('stops on DELETE (204, also when none)', async () => {
    receiver.received.length = 0;
    expect((await hub.api.delete('/webhook')).status).to.equal(204);
    expect((await hub.api.delete('/webhook')).status).to.equal(204);
    expect((await hub.api.get('/webhook')).status).to.equal(404);
    await put(hub, 'g');
    await advance(0);
    expect(receiver.received).to.deep.equal([]);
    const again = await hub.api.put('/webhook', { url: receiver.url('/hooks') });
    expect(again.body.secret, 'a new endpoint, a new secret').to.match(/^whsec_/);
    expect(again.body.secret).to.not.equal(secret);
  });

  it('never posts to a loopback address without the test setting; the refusal is a visible attempt', async () => {
    const guarded = await startTestService({ ...receiver.env({ allowPrivate: false }), WEBHOOK_SCAN_MS: '3600000' });
    try {
      receiver.received.length = 0;
      const p = await guarded.partner({ type: 'hub' });
      expect((await p.api.put('/webhook', { url: receiver.url('/hooks') })).status).to.equal(200);
      expect((await p.api.put('/stores/main', storeBody())).status).to.equal(200);
      expect((await guarded.approveStore(p, 'main')).status).to.equal(200);
      expect((await guarded.admin.post('/clock', { advance_ms: 0 })).status).to.equal(200);
      const [attempt] = (await p.api.get('/webhook')).body.attempts;
      expect(attempt).to.include({ ok: false, status: null });
      expect(attempt.error).to.match(/may not reach \(loopback\)/);
      expect(receiver.received).to.deep.equal([]);
    } finally {
      await guarded.close();
    }
  });
});
