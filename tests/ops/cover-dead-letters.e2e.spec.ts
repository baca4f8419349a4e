/**
 * The cover check through the messaging work queue, with a checker that fails on purpose (the injected seam of the
 * embedded service; no image is fetched, no name resolved): a failure is retried, a check that keeps failing ends
 * as a dead letter the operator sees (admin API, `ops`, metrics) and requeues once the cause is fixed; a judged
 * rejection is a result, not a failure. Run twice: on the in-process queue (the embedded default) and on NATS
 * JetStream (a real nats-server), whose dead letters outlive a restart.
 *
 * Embedded only: a child process of the topology cannot take a fake checker (cover-lifecycle runs the queue there).
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { portOf } from '../../infra/http/gateway.js';
import { NatsMessaging } from '../../infra/adapters/messaging/nats.js';
import type { CoverChecker } from '../../shared-schema/ports/cover-checker.js';
import { productBody, startTestService, storeBody, type Partner, type TestService } from '../support/service.js';
import { startNatsServer, type NatsServer } from '../support/nats-server.js';
import { parsePrometheus } from '../support/prometheus.js';
import { until } from '../support/deadline.js';

const OPS = fileURLToPath(new URL('../../infra/ops/cli/ops.js', import.meta.url));
const MAX_DELIVERIES = 3;
/** What the failing checker throws: it names a store with a password, which must never reach the operator. */
const FAILURE = 'read-only file system (store postgres://ops:s3cret-pw@10.0.0.5/db)';

/** A checker that throws for the URLs told to, a given number of times (Infinity: until fixed). */
class FaultyChecker {
  private readonly faults = new Map<string, number>();
  private readonly counts = new Map<string, number>();
  fail(url: string, times: number): void {
    this.faults.set(url, times);
  }
  fix(url: string): void {
    this.faults.delete(url);
  }
  calls(url: string): number {
    return this.counts.get(url) ?? 0;
  }
  readonly checker: CoverChecker = async (url) => {
    this.counts.set(url, this.calls(url) + 1);
    const left = this.faults.get(url) ?? 0;
    if (left > 0) {
      this.faults.set(url, left - 1);
      throw new Error(FAILURE);
    }
    if (url.endsWith('.gif'))
      return { ok: false, reasons: [{ code: 'image_type', field: 'image_urls[0]', message: 'a GIF' }] };
    return { ok: true, reasons: [] };
  };
}

let prefixes = 0;

for (const variant of [
  { queue: 'in-process', nats: false },
  { queue: 'NATS JetStream', nats: true },
] as const) {
  describe(`cover-check work queue and its dead letters (${variant.queue})`, function () {
    this.timeout(60_000);
    let nats: NatsServer | undefined;
    let t: TestService;
    let hub: Partner;
    const faults = new FaultyChecker();

    before(async function () {
      if (process.env.TOPOLOGY === 'multi') this.skip();
      if (variant.nats) nats = await startNatsServer();
      const prefix = `cover-dl-${++prefixes}`;
      const env = {
        COVER_CHECK: 'on',
        COVER_CHECK_MAX_DELIVERIES: String(MAX_DELIVERIES),
        COVER_CHECK_RETRY_MS: '20',
        COVER_CHECK_CONCURRENCY: '2',
      };
      t = await startTestService(env, undefined, {
        coverChecker: faults.checker,
        ...(nats ? { messaging: () => NatsMessaging.connect({ servers: nats!.url, prefix }) } : {}),
      });
      t.clock.set(new Date('2026-01-02T00:00:00Z'));
      hub = await t.partner({ type: 'hub' });
      expect((await hub.api.put('/stores/s', storeBody())).status).to.equal(200);
      expect((await t.approveStore(hub, 's')).status).to.equal(200);
    });
    after(async () => {
      await t?.close();
      await nats?.stop();
    });

    const cover = (sku: string, ext = 'jpg') => `https://cdn.shop.test/${sku}.${ext}`;
    const stream = (sku: string) => `product-live:${hub.partnerId}:${sku}`;
    // t.as: after a restart the API listens on another port
    const put = async (sku: string, url = cover(sku)) => {
      const sent = await t.as(hub.key).put(`/products/${sku}`, productBody('s', { image_urls: [url] }));
      expect(sent.status, JSON.stringify(sent.body)).to.equal(200);
    };
    /** The cover results in the product's stream (the log, not a read model: polling it costs no rate brake). */
    const results = async (sku: string) =>
      (await t.service.events.readStream(stream(sku)))
        .filter((e) => e.type === 'CoverChecked')
        .map((e) => (e.data as { ok: boolean }).ok);
    /**
     * The product as the partner API shows it, once the projections have read the whole log: the result waited
     * for is in the log first, and the read model follows when the projections get to it.
     */
    const product = async (sku: string) => {
      const head = await t.service.events.headPosition();
      expect(await t.service.runner.waitFor(head, 20_000), `the projections at position ${head}`).to.equal(true);
      return (await t.as(hub.key).get(`/products/${sku}`)).body;
    };
    const deadLetters = async () =>
      (await t.admin.get('/cover-checks/dead-letters')).body as { total: number; dead_letters: { id: string }[] };
    const deadLetterCount = async () => (await deadLetters()).total;
    const scrape = async () =>
      parsePrometheus(await (await fetch(`http://127.0.0.1:${portOf(t.service.admin)}/metrics`)).text());
    const ops = (args: string[]): Promise<{ code: number; json: any; out: string }> =>
      new Promise((resolve) => {
        const env = {
          PATH: process.env.PATH,
          ADMIN_URL: `http://127.0.0.1:${portOf(t.service.admin)}`,
          ADMIN_TOKEN: t.service.adminToken,
        };
        execFile(process.execPath, [OPS, ...args, '--json'], { env, timeout: 15_000 }, (err, stdout, stderr) => {
          let json: unknown;
          try {
            json = JSON.parse(stdout);
          } catch {
            json = undefined;
          }
          resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, json, out: stdout + stderr });
        });
      });

    it('retries a check whose checker threw, and records one result when a later delivery succeeds', async () => {
      faults.fail(cover('flaky'), 2);
      await put('flaky');
      await until(async () => (await results('flaky')).length === 1, 20_000, 'the result');
      expect(await results('flaky')).to.deep.equal([true]);
      expect(faults.calls(cover('flaky')), 'two failures, then the check that passed').to.equal(3);
      expect((await product('flaky')).state).to.equal('accepted');
      expect(await deadLetterCount()).to.equal(0);
    });

    it('records a judged rejection as a result at once: no retry, no dead letter', async () => {
      await put('gif', cover('gif', 'gif'));
      await until(async () => (await results('gif')).length === 1, 20_000, 'the result');
      expect(await results('gif')).to.deep.equal([false]);
      expect(faults.calls(cover('gif', 'gif'))).to.equal(1);
      expect((await product('gif')).state).to.equal('rejected');
      expect(await deadLetterCount()).to.equal(0);
    });

    it(`ends a check that always fails as a dead letter after ${MAX_DELIVERIES} deliveries, shown to the operator, and runs it again on requeue`, async () => {
      faults.fail(cover('poison'), Infinity);
      await put('poison');
      await until(async () => (await deadLetterCount()) === 1, 20_000, 'the dead letter');
      expect(faults.calls(cover('poison'))).to.equal(MAX_DELIVERIES);
      expect(await results('poison')).to.deep.equal([]);
      expect((await product('poison')).state).to.equal('pending');

      const listed = await t.admin.get('/cover-checks/dead-letters');
      expect(listed.status).to.equal(200);
      const id = `${stream('poison')}@0`;
      expect(listed.body).to.deep.equal({
        queue: 'cover_check',
        total: 1,
        dead_letters: [
          {
            id,
            partner_id: hub.partnerId,
            environment: 'live',
            sku: 'poison',
            revision: 0,
            deliveries: MAX_DELIVERIES,
            last_error: 'Error: read-only file system (store postgres://***@10.0.0.5/db)',
          },
        ],
      });
      expect(JSON.stringify(listed.body)).not.to.contain('s3cret');
      expect(
        (await fetch(`http://127.0.0.1:${portOf(t.service.admin)}/admin/v1/cover-checks/dead-letters`)).status,
        'the admin token guards it',
      ).to.equal(401);

      const shown = await ops(['cover', 'dead-letters']);
      expect(shown.code, shown.out).to.equal(0);
      expect(shown.json).to.deep.equal(listed.body);
      expect((await scrape()).value('pc_work_queue_dead_letters', { queue: 'cover_check' })).to.equal(1);
      // NATS acks the item just after it stored the dead letter: the depth follows a moment later.
      await until(
        async () => (await scrape()).value('pc_work_queue_depth', { queue: 'cover_check' }) === 0,
        20_000,
        'no item left in the queue',
      );

      faults.fix(cover('poison'));
      const requeued = await ops(['cover', 'requeue', id]);
      expect(requeued.code, requeued.out).to.equal(0);
      expect(requeued.json.requeued.map((d: { id: string }) => d.id)).to.deep.equal([id]);
      expect(requeued.json.not_found).to.deep.equal([]);
      await until(async () => (await results('poison')).length === 1, 20_000, 'the result after the requeue');
      expect(await results('poison')).to.deep.equal([true]);
      expect(faults.calls(cover('poison'))).to.equal(MAX_DELIVERIES + 1);
      expect(await deadLetterCount()).to.equal(0);
      expect((await scrape()).value('pc_work_queue_dead_letters', { queue: 'cover_check' })).to.equal(0);
      expect((await ops(['cover', 'dead-letters', '--limit', '5'])).json.dead_letters).to.deep.equal([]);
    });

    it('requeues every dead letter at once; refuses a requeue that names none; says which ids it did not find', async () => {
      for (const sku of ['all-1', 'all-2']) {
        faults.fail(cover(sku), Infinity);
        await put(sku);
      }
      await until(async () => (await deadLetterCount()) === 2, 20_000, 'two dead letters');
      for (const body of [{}, { ids: [] }, { ids: 'x' }, { all: false }, { all: true, ids: ['x'] }, { every: true }]) {
        const refused = await t.admin.post('/cover-checks/dead-letters/requeue', body);
        expect(refused.status, JSON.stringify(body)).to.equal(422);
      }
      const unknown = await t.admin.post('/cover-checks/dead-letters/requeue', { ids: ['product-live:pt_nobody:x@0'] });
      expect(unknown.body).to.deep.include({ requeued: [], not_found: ['product-live:pt_nobody:x@0'] });
      expect(await deadLetterCount()).to.equal(2);

      for (const sku of ['all-1', 'all-2']) faults.fix(cover(sku));
      const all = await ops(['cover', 'requeue-all']);
      expect(all.code, all.out).to.equal(0);
      expect(all.json.requeued.map((d: { sku: string }) => d.sku).sort()).to.deep.equal(['all-1', 'all-2']);
      await until(
        async () => (await results('all-1')).length === 1 && (await results('all-2')).length === 1,
        20_000,
        'both results',
      );
      expect(await deadLetterCount()).to.equal(0);
    });

    it(
      variant.nats
        ? 'keeps a dead letter across a restart (the queue is durable), and runs it on requeue'
        : "after a restart, queues a dead letter's send again from the log (the checkpoint stayed below it)",
      async () => {
        faults.fail(cover('across'), Infinity);
        await put('across');
        await until(async () => (await deadLetterCount()) === 1, 20_000, 'the dead letter');
        await t.restart();
        await put('after-restart'); // a barrier: once checked, the reactor has read past every earlier send
        await until(async () => (await results('after-restart')).length === 1, 20_000, 'the check of a later send');
        if (variant.nats) {
          expect((await deadLetters()).dead_letters.map((d) => d.id)).to.deep.equal([`${stream('across')}@0`]);
          expect(faults.calls(cover('across')), 'not checked again by itself').to.equal(MAX_DELIVERIES);
        } else {
          await until(
            async () => (await deadLetterCount()) === 1,
            20_000,
            'the dead letter, made again after the restart',
          );
          expect(faults.calls(cover('across')), 'checked again after the restart').to.equal(2 * MAX_DELIVERIES);
        }
        faults.fix(cover('across'));
        expect((await t.admin.post('/cover-checks/dead-letters/requeue', { all: true })).status).to.equal(200);
        await until(async () => (await results('across')).length === 1, 20_000, 'the result after the requeue');
        expect(await results('across')).to.deep.equal([true]);
        for (const sku of ['flaky', 'gif', 'poison', 'all-1', 'all-2', 'after-restart'])
          expect(await results(sku), `${sku}: checked once, whatever the restart replayed`).to.have.length(1);
      },
    );
  });
}
