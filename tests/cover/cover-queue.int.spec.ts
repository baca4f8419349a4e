/**
 * The cover-check reactor and the work queue on the real SQLite stores, with a checker the test controls: when the
 * reactor's checkpoint may pass a send (once enqueued on a durable queue — a real nats-server —, once checked on the
 * in-process one), and the queue spreading the checks over two consumers (the projections process's and a worker's).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { expect } from 'chai';
import { SqliteEventStore } from '../../infra/adapters/sqlite/event-store.js';
import { SPARSE_POSITIONS } from '../support/sparse-positions.js';
import { SqliteReadStore } from '../../infra/adapters/sqlite/read-store.js';
import { InProcessMessaging } from '../../infra/adapters/messaging/in-process.js';
import { NatsMessaging } from '../../infra/adapters/messaging/nats.js';
import { loadConfig } from '../../infra/wiring/config.js';
import { startCoverChecks, startCoverWorker } from '../../infra/adapters/cover/cover-checks.js';
import { AggregateRepository } from '../../command-api/aggregate-repository.js';
import { CachedAggregateStates } from '../../infra/adapters/event-store/cached-state.js';
import { CoverWork } from '../../command-api/reactors/cover-work.js';
import { COVER_REACTOR_CHECKPOINT, CoverCheckReactor } from '../../command-api/reactors/cover-check.js';
import { COVER_QUEUE, CoverQueueConsumer } from '../../command-api/reactors/cover-queue.js';
import { ManualClock } from '../../shared-schema/ports/clock.js';
import type { Messaging } from '../../shared-schema/ports/messaging.js';
import type { CoverChecker } from '../../shared-schema/ports/cover-checker.js';
import { streams, type Tenant } from '../../shared-schema/domain/streams.js';
import { startNatsServer, type NatsServer } from '../support/nats-server.js';
import { until } from '../support/deadline.js';

const tenant: Tenant = { env: 'live', partnerId: 'pt_Q' };
const meta = { recorded_at: '2026-01-02T00:00:00.000Z' };

describe('cover-check reactor and work queue (SQLite stores)', function () {
  this.timeout(20_000);
  let nats: NatsServer;
  let dir: string;
  let events: SqliteEventStore;
  let reads: SqliteReadStore;
  let prefixes = 0;
  const closing: (() => Promise<void>)[] = [];

  before(async () => {
    nats = await startNatsServer();
  });
  after(async () => nats?.stop());
  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cover-queue-'));
    events = SqliteEventStore.open({ path: path.join(dir, 'events.db'), positionSpacing: SPARSE_POSITIONS }); // byte-offset-like positions: no `position - 1`
    reads = SqliteReadStore.open({ path: path.join(dir, 'read.db') });
    await events.appendToStream(streams.store(tenant, 's'), [
      {
        type: 'StoreRegistered',
        data: {
          store_id: 's',
          store: { name: 'S', cnpj: '11222333000181', website_url: 'https://shop.test', domains: ['shop.test'] },
          registered_at: meta.recorded_at,
        },
        metadata: meta,
      },
    ]);
  });
  afterEach(async () => {
    for (const close of closing.splice(0).reverse()) await close();
    await events.close();
    await reads.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const natsMessaging = async (prefix = `cq${++prefixes}`) => {
    const m = await NatsMessaging.connect({ servers: nats.url, prefix });
    closing.push(() => m.close());
    return m;
  };
  const send = async (sku: string) =>
    events.appendToStream(streams.product(tenant, sku), [
      {
        type: 'ProductUpserted',
        data: {
          sku,
          product: { store_id: 's', image_urls: [`https://shop.test/${sku}.jpg`] },
          received_at: meta.recorded_at,
        },
        metadata: meta,
      },
    ]);
  const results = async (sku: string) =>
    (await events.readStream(streams.product(tenant, sku))).filter((e) => e.type === 'CoverChecked').length;
  const checkpoint = () => reads.getCheckpoint(COVER_REACTOR_CHECKPOINT);
  const reactor = async (messaging: Messaging, maxPending?: number) => {
    // Saved as soon as it moves (saveDelayMs 0): these tests look at where the checkpoint stands, not when.
    const r = new CoverCheckReactor({
      events,
      reads,
      messaging,
      saveDelayMs: 0,
      ...(maxPending ? { maxPending } : {}),
    });
    await r.start();
    closing.push(() => r.stop());
    return r;
  };
  /** A pool and a consumer whose checker answers what `verdict` says for each URL (throwing when it throws). */
  const consumer = async (
    messaging: Messaging,
    checker: CoverChecker,
    onSettled?: (id: string, outcome: 'done' | 'dead') => void,
  ) => {
    const work = new CoverWork({
      repo: new AggregateRepository(new CachedAggregateStates(events)),
      clock: new ManualClock(new Date(meta.recorded_at)),
      checker,
      concurrency: 1,
    });
    const c = new CoverQueueConsumer({
      messaging,
      work,
      concurrency: 1,
      maxDeliveries: 2,
      retryDelayMs: 0,
      ...(onSettled ? { onSettled } : {}),
    });
    await c.start();
    closing.push(async () => {
      await c.stop();
      await work.stop();
    });
  };

  it('on a durable queue (NATS), passes a send once it is enqueued, before any check ran', async () => {
    const messaging = await natsMessaging();
    await reactor(messaging);
    const last = (await send('a')).position;
    await send('b');
    const head = (await send('c')).position;
    await until(async () => (await checkpoint()) === head, 30_000, 'the checkpoint at the last send');
    expect(await messaging.queueStats(COVER_QUEUE)).to.deep.equal({ pending: 3, deadLetters: 0 });
    expect(last).to.be.lessThan(head);
    let checked = 0;
    await consumer(messaging, async () => {
      checked += 1;
      return { ok: true, reasons: [] };
    });
    await until(
      async () => (await results('a')) + (await results('b')) + (await results('c')) === 3,
      30_000,
      'three results',
    );
    expect(checked).to.equal(3);
  });

  it('on the in-process queue, keeps the checkpoint below a send until its check is done; a dead letter holds it without holding back the others', async () => {
    const messaging = new InProcessMessaging();
    closing.push(() => messaging.close());
    let r: CoverCheckReactor | undefined;
    let release: (() => void) | undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    await consumer(
      messaging,
      async (url) => {
        if (url.endsWith('/dead.jpg')) throw new Error('checker broken');
        if (url.endsWith('/slow.jpg')) await held;
        return { ok: true, reasons: [] };
      },
      (id, outcome) => r?.settled(id, outcome),
    );
    r = await reactor(messaging, 1); // one send waiting at a time: a parked dead letter must not count
    const slow = (await send('slow')).position;
    await until(async () => (await messaging.queueStats(COVER_QUEUE)).pending === 1, 30_000, 'the slow check in hand');
    expect(await checkpoint(), 'below the send being checked').to.be.lessThan(slow);
    release!();
    await until(async () => (await checkpoint()) >= slow, 30_000, 'the checkpoint past the checked send');

    const dead = (await send('dead')).position;
    await until(async () => (await messaging.deadLetters(COVER_QUEUE)).length === 1, 30_000, 'the dead letter');
    const after = (await send('after')).position;
    await until(
      async () => (await results('after')) === 1,
      30_000,
      'a later send checked although the dead letter waits',
    );
    // Held just below the dead letter: at the product event delivered before it (positions are opaque: no `dead - 1`),
    // a position the store takes back as a start, from which the dead send is the next product event.
    const products = await events.readAll({ categories: ['product'] });
    const before = products.filter((e) => e.position < dead).pop()!;
    expect(await checkpoint(), 'held below the dead letter').to.equal(before.position);
    const [resumed] = await events.readAll({ afterPosition: await checkpoint(), categories: ['product'], maxCount: 1 });
    expect(resumed.position, 'resuming from the checkpoint delivers the dead send again').to.equal(dead);
    expect(after).to.be.greaterThan(dead);
  });

  it('on the in-process queue, moves the checkpoint on after a product event that is not a send came while a send waited', async () => {
    // A restart resumes from this checkpoint: were it stuck, every restart would queue every send of the log again.
    const messaging = new InProcessMessaging();
    closing.push(() => messaging.close());
    let r: CoverCheckReactor | undefined;
    let release: (() => void) | undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    await consumer(
      messaging,
      async (url) => {
        if (url.endsWith('/slow.jpg')) await held;
        return { ok: true, reasons: [] };
      },
      (id, outcome) => r?.settled(id, outcome),
    );
    await send('slow');
    const patched = await events.appendToStream(streams.product(tenant, 'other'), [
      {
        type: 'ProductPatched',
        data: { sku: 'other', patch: { price_cents: 100 }, received_at: meta.recorded_at },
        metadata: meta,
      },
    ]);
    const later = (await send('later')).position;
    r = await reactor(messaging);
    // Two sends waiting (the slow one in hand, the later one queued): the reactor has read the patch between them.
    await until(async () => (await messaging.queueStats(COVER_QUEUE)).pending === 2, 30_000, 'both sends queued');
    release!();
    await until(async () => (await checkpoint()) >= later, 30_000, 'the checkpoint past every settled send');
    expect(patched.position).to.be.lessThan(later);
  });

  it('on the in-process queue, holds at most maxPending sends at a time however many products are owed a check', async () => {
    const messaging = new InProcessMessaging();
    closing.push(() => messaging.close());
    const r = await reactor(messaging, 3);
    const skus = Array.from({ length: 12 }, (_, i) => `bounded-${i}`);
    for (const sku of skus) await send(sku);
    await until(async () => (await messaging.queueStats(COVER_QUEUE)).pending === 3, 30_000, 'three sends queued');
    let mostQueued = 0;
    await consumer(
      messaging,
      async () => {
        mostQueued = Math.max(mostQueued, (await messaging.queueStats(COVER_QUEUE)).pending);
        return { ok: true, reasons: [] };
      },
      (id, outcome) => r.settled(id, outcome),
    );
    await until(
      async () => (await Promise.all(skus.map(results))).every((n) => n === 1),
      30_000,
      'every product checked',
    );
    expect(mostQueued).to.be.within(1, 3);
  });

  it('saves the checkpoint once for the sends passed within saveDelayMs, and at once on flush', async () => {
    const messaging = await natsMessaging();
    let saves = 0;
    const transact = reads.transact.bind(reads);
    reads.transact = (work) => {
      saves += 1;
      return transact(work);
    };
    // A delay no test waits for: only flush() saves here.
    const r = new CoverCheckReactor({ events, reads, messaging, saveDelayMs: 3_600_000 });
    await r.start();
    closing.push(() => r.stop());
    const heads: number[] = [];
    for (const sku of ['a', 'b', 'c', 'd']) heads.push((await send(sku)).position);
    await until(async () => (await messaging.queueStats(COVER_QUEUE)).pending === 4, 15_000, 'the four sends queued');
    expect(saves, 'sends passed, nothing saved yet').to.equal(0);
    expect(await checkpoint()).to.equal(0);
    // The last enqueue's answer may still be on its way to the reactor: flush until the checkpoint is past it.
    let flushes = 0;
    await until(
      async () => {
        flushes += 1;
        await r.flush();
        return (await checkpoint()) === heads[3];
      },
      15_000,
      'the checkpoint at the last send',
    );
    expect(saves, 'a write per flush at most, not one per send').to.be.at.most(flushes);
  });

  it('spreads the checks over every consumer of the queue: the projections process and a worker', async () => {
    const prefix = `cq${++prefixes}`;
    const log = pino({ level: 'silent' });
    const clock = new ManualClock(new Date(meta.recorded_at));
    const config = loadConfig({
      DATA_DIR: dir,
      COVER_CHECK: 'on',
      COVER_CHECK_CONCURRENCY: '1',
      COVER_RECHECK_SCAN_MS: '3600000',
    });
    const byWorker: string[] = [];
    const byMain: string[] = [];
    // Each consumer's first check waits until the other has one in hand: both can only if the queue hands items to
    // both (if it did not, the checks would never end, and the wait for them below fails). No time limit on that
    // wait: one would let a slow machine's consumer go on alone and take everything in turn.
    const started = { main: signal(), worker: signal() };
    const checkerOf =
      (mine: string[], me: Signal, other: Signal): CoverChecker =>
      async (url) => {
        mine.push(url);
        me.fire();
        await other.fired;
        return { ok: true, reasons: [] };
      };
    const depsOf = async (messaging: Messaging) => ({
      events,
      reads,
      messaging,
      clock,
      repo: new AggregateRepository(new CachedAggregateStates(events)),
      publicBaseUrl: 'http://127.0.0.1',
    });
    const main = await startCoverChecks({
      config,
      log,
      deps: await depsOf(await natsMessaging(prefix)),
      waitForPosition: async () => true,
      checker: checkerOf(byMain, started.main, started.worker),
    });
    closing.push(() => main!.stop());
    const worker = await startCoverWorker({
      config,
      log,
      deps: await depsOf(await natsMessaging(prefix)),
      checker: checkerOf(byWorker, started.worker, started.main),
    });
    closing.push(() => worker!.stop());
    const skus = Array.from({ length: 8 }, (_, i) => `p${i}`);
    for (const sku of skus) await send(sku);
    await until(
      async () => (await Promise.all(skus.map(results))).every((n) => n === 1),
      30_000,
      'every product checked',
    );
    expect(byMain.length, 'the projections process checked some').to.be.greaterThan(0);
    expect(byWorker.length, 'the worker checked some').to.be.greaterThan(0);
    expect([...byMain, ...byWorker].sort()).to.deep.equal(skus.map((sku) => `https://shop.test/${sku}.jpg`).sort());
  });
});

interface Signal {
  fired: Promise<void>;
  fire(): void;
}

function signal(): Signal {
  let fire: () => void = () => undefined;
  const fired = new Promise<void>((resolve) => (fire = resolve));
  return { fired, fire };
}
