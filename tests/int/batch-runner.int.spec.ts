/**
 * The batch runner against the real SQLite stores, with failures injected into product writes: a pass interrupted
 * with some of its items applied is finished later — by the same runner after a retry, or by a new runner after a
 * restart — and no item is ever applied twice.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { SqliteEventStore } from '../../infra/adapters/sqlite/event-store.js';
import { SPARSE_POSITIONS } from '../support/sparse-positions.js';
import { SqliteReadStore } from '../../infra/adapters/sqlite/read-store.js';
import { InProcessMessaging } from '../../infra/adapters/messaging/in-process.js';
import { PROJECTORS } from '../../infra/wiring/service.js';
import { AggregateRepository } from '../../command-api/aggregate-repository.js';
import { CachedAggregateStates } from '../../infra/adapters/event-store/cached-state.js';
import { BATCH_RUNNER_CHECKPOINT, BatchRunner } from '../../command-api/reactors/batch-runner.js';
import { submitBatch } from '../../command-api/services/batch.js';
import { registerStore } from '../../command-api/services/stores.js';
import { upsertProduct } from '../../command-api/services/products.js';
import type { CommandDeps } from '../../command-api/services/context.js';
import { ManualClock } from '../../shared-schema/ports/clock.js';
import type { EventStore, NewEvent } from '../../shared-schema/ports/event-store.js';
import type { BatchItem, JobTotals } from '../../shared-schema/events/job.js';
import { streams, type Tenant } from '../../shared-schema/domain/streams.js';
import { productBody, storeBody } from '../support/service.js';
import { until } from '../support/deadline.js';

const tenant: Tenant = { partnerId: 'pt_RUNNER', env: 'live' };
const meta = () => ({ recorded_at: '2026-01-02T00:00:00.000Z', actor: 'key_1' });

/** Product writes of batch items whose index `fails(index)` says are refused by the "disk". */
function flaky(events: EventStore, fails: (index: number) => boolean) {
  const counter = { rejected: 0 };
  const store: EventStore = Object.create(events) as EventStore;
  store.appendToStream = (stream: string, list: readonly NewEvent[], expected) => {
    const index = list[0]?.metadata.job_item;
    if (stream.startsWith('product-') && typeof index === 'number' && fails(index)) {
      counter.rejected += 1;
      return Promise.reject(new Error('injected write failure'));
    }
    return events.appendToStream(stream, list, expected);
  };
  return { store, counter };
}

describe('batch runner: interrupted passes (SQLite stores, injected failures)', function () {
  this.timeout(20_000);
  let dir: string;
  let events: SqliteEventStore;
  let reads: SqliteReadStore;
  let deps: CommandDeps;
  const runners: BatchRunner[] = [];

  const depsWith = (store: EventStore): CommandDeps => ({
    ...deps,
    events: store,
    repo: new AggregateRepository(new CachedAggregateStates(store)),
  });
  const runner = async (d: CommandDeps, retryDelayMs: number) => {
    const r = new BatchRunner(d, { retryDelayMs });
    runners.push(r);
    await r.start();
    return r;
  };
  const jobEvents = (jobId: string, t: Tenant = tenant) => events.readStream(streams.job(t, jobId));
  const doneTotals = async (jobId: string, t: Tenant = tenant): Promise<JobTotals> => {
    await until(async () => (await jobEvents(jobId, t)).some((e) => e.type === 'BatchDone'), 10_000, 'job done');
    return ((await jobEvents(jobId, t)).find((e) => e.type === 'BatchDone')!.data as { totals: JobTotals }).totals;
  };
  const productEvents = (sku: string) => events.readStream(streams.product(tenant, sku));

  /** 60 items: 55 new upserts, a delete of an existing SKU, a delete of an absent one, and a SKU written thrice. */
  const batch = (tag: string): BatchItem[] => {
    const items: BatchItem[] = Array.from({ length: 60 }, (_, i) => ({
      op: 'upsert',
      sku: `${tag}-${i}`,
      product: productBody('loja') as never,
    }));
    items[7] = { op: 'delete', sku: `${tag}-existing` };
    items[33] = { op: 'delete', sku: `${tag}-absent` };
    items[3] = { op: 'upsert', sku: `${tag}-rep`, product: productBody('loja', { price_cents: 1 }) };
    items[25] = { op: 'upsert', sku: `${tag}-rep`, product: productBody('loja', { price_cents: 2 }) };
    items[55] = { op: 'upsert', sku: `${tag}-rep`, product: productBody('loja', { price_cents: 3 }) };
    return items;
  };
  const expectEachItemOnce = async (tag: string) => {
    for (let i = 0; i < 60; i++) {
      if ([3, 7, 25, 33, 55].includes(i)) continue;
      expect(
        (await productEvents(`${tag}-${i}`)).map((e) => e.metadata.job_item),
        `${tag}-${i}`,
      ).to.deep.equal([i]);
    }
    const rep = await productEvents(`${tag}-rep`);
    expect(
      rep.map((e) => [e.metadata.job_item, (e.data as { product: { price_cents: number } }).product.price_cents]),
    ).to.deep.equal([
      [3, 1],
      [25, 2],
      [55, 3],
    ]);
    expect((await productEvents(`${tag}-existing`)).map((e) => e.type)).to.deep.equal([
      'ProductUpserted',
      'ProductRemoved',
    ]);
    expect(await productEvents(`${tag}-absent`)).to.deep.equal([]);
  };
  const expected: JobTotals = { received: 60, accepted: 0, rejected: 0, pending: 58, removed: 2 };

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-batch-runner-'));
    events = SqliteEventStore.open({ path: path.join(dir, 'events.db'), positionSpacing: SPARSE_POSITIONS }); // byte-offset-like positions: no `position - 1`
    reads = SqliteReadStore.open({ path: path.join(dir, 'read.db') });
    await reads.ensureCollections(PROJECTORS.flatMap((p) => p.collections));
    const clock = new ManualClock(new Date('2026-01-02T00:00:00Z'));
    deps = {
      events,
      reads,
      messaging: new InProcessMessaging(clock),
      clock,
      repo: new AggregateRepository(new CachedAggregateStates(events)),
      publicBaseUrl: 'http://127.0.0.1',
    };
    await registerStore(deps, tenant, 'hub', 'loja', storeBody(), meta());
  });
  afterEach(async () => {
    for (const r of runners.splice(0)) await r.stop();
    await events.close();
    await reads.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('retries a pass that failed half-way and applies each item once', async () => {
    await upsertProduct(deps, tenant, 'a-existing', productBody('loja'), meta());
    let failing = true;
    const { store, counter } = flaky(events, (i) => failing && i >= 10 && i < 40);
    const job = await submitBatch(deps, tenant, batch('a'), meta());
    await runner(depsWith(store), 5);
    await until(() => counter.rejected > 0, 30_000, 'a write failed');
    failing = false;
    expect(await doneTotals(job.view.job_id)).to.deep.equal(expected);
    await expectEachItemOnce('a');
  });

  it('after a restart, finishes the pass a stopped runner left half-applied, each item once', async () => {
    await upsertProduct(deps, tenant, 'b-existing', productBody('loja'), meta());
    const { store, counter } = flaky(events, (i) => i >= 20);
    const job = await submitBatch(deps, tenant, batch('b'), meta());
    const first = await runner(depsWith(store), 60_000);
    // The first pass holds items 0..49 but the repeats (25 waits); those from 20 on fail.
    await until(() => counter.rejected >= 28, 30_000, 'the first pass failed');
    await until(async () => (await productEvents('b-19')).length === 1, 30_000, 'items before 20 applied');
    await first.stop();
    const log = await jobEvents(job.view.job_id);
    expect(log.map((e) => e.type)).to.not.include('BatchChunkProcessed');
    await runner(deps, 5);
    expect(await doneTotals(job.view.job_id)).to.deep.equal(expected);
    await expectEachItemOnce('b');
  });

  it('after a restart from a checkpoint held below an unfinished job, finds that job again (a checkpoint is a position of the log)', async () => {
    await upsertProduct(deps, tenant, 'd-existing', productBody('loja'), meta());
    const { store } = flaky(events, (i) => i >= 20);
    const slow = await submitBatch(deps, tenant, batch('d'), meta());
    const quick = await submitBatch(deps, tenant, [{ op: 'delete', sku: 'd-quick' }], meta());
    const first = await runner(depsWith(store), 60_000);
    await doneTotals(quick.view.job_id); // finishing it saves a checkpoint held below the unfinished slow job
    await until(async () => (await reads.getCheckpoint(BATCH_RUNNER_CHECKPOINT)) > 0, 5000, 'a checkpoint saved');
    await first.stop();
    const saved = await reads.getCheckpoint(BATCH_RUNNER_CHECKPOINT);
    const queued = (await jobEvents(slow.view.job_id)).find((e) => e.type === 'BatchQueued')!;
    expect(saved).to.be.lessThan(queued.position);
    // The store takes it back as a start, and the next job event after it is the unfinished job's BatchQueued.
    const after = await events.readAll({ afterPosition: saved, categories: ['job'] });
    expect(after.find((e) => e.type === 'BatchQueued')!.id).to.equal(queued.id);
    await runner(deps, 5); // starts from the saved checkpoint
    expect(await doneTotals(slow.view.job_id)).to.deep.equal(expected);
    await expectEachItemOnce('d');
  });

  it("runs passes of jobs of different partners at once, and one partner's jobs one pass at a time", async () => {
    const other: Tenant = { partnerId: 'pt_OTHER', env: 'live' };
    await registerStore(deps, other, 'hub', 'loja', storeBody(), meta());
    // Product writes of batch items are held until released: what is held is what is in flight.
    const held: { jobId: string; release: () => void }[] = [];
    let open = false;
    const gated: EventStore = Object.create(events) as EventStore;
    gated.appendToStream = async (stream: string, list: readonly NewEvent[], expectedRevision) => {
      const jobId = list[0]?.metadata.job_id;
      if (!open && stream.startsWith('product-') && typeof jobId === 'string')
        await new Promise<void>((release) => held.push({ jobId, release }));
      return events.appendToStream(stream, list, expectedRevision);
    };
    const items = (tag: string): BatchItem[] =>
      [1, 2].map((i) => ({ op: 'upsert', sku: `${tag}-${i}`, product: productBody('loja') as never }));
    const first = await submitBatch(deps, tenant, items('p1'), meta());
    const second = await submitBatch(deps, tenant, items('p2'), meta());
    const elsewhere = await submitBatch(deps, other, items('q1'), meta());
    const r = new BatchRunner(depsWith(gated), { passes: 4, retryDelayMs: 5 });
    runners.push(r);
    await r.start();
    const inFlight = () => new Set(held.map((h) => h.jobId));
    await until(
      () =>
        inFlight().has(elsewhere.view.job_id) &&
        (inFlight().has(first.view.job_id) || inFlight().has(second.view.job_id)),
      10_000,
      'passes of both partners in flight',
    );
    expect(
      inFlight().has(first.view.job_id) && inFlight().has(second.view.job_id),
      'two passes of one partner at once',
    ).to.equal(false);
    open = true;
    for (const h of held.splice(0)) h.release();
    for (const job of [first, second, elsewhere])
      expect((await doneTotals(job.view.job_id, job === elsewhere ? other : tenant)).received).to.equal(2);
  });

  it('marks failed a job whose stored batch is incomplete, and goes on with the others', async () => {
    const stream = streams.job(tenant, 'job_BROKEN');
    await events.appendToStream(stream, [
      {
        type: 'BatchQueued',
        data: {
          job_id: 'job_BROKEN',
          partner_id: tenant.partnerId,
          env: 'live',
          received: 2,
          parts: 1,
          created_at: meta().recorded_at,
        },
        metadata: meta(),
      },
    ]);
    const ok = await submitBatch(deps, tenant, [{ op: 'delete', sku: 'c-1' }], meta());
    await runner(deps, 5);
    expect(await doneTotals(ok.view.job_id)).to.deep.equal({
      received: 1,
      accepted: 0,
      rejected: 0,
      pending: 0,
      removed: 1,
    });
    await until(
      async () => (await events.readStream(stream)).some((e) => e.type === 'BatchFailed'),
      30_000,
      'job failed',
    );
    const failed = (await events.readStream(stream)).find((e) => e.type === 'BatchFailed')!;
    expect((failed.data as { reason: string }).reason).to.contain('incomplete');
  });
});
