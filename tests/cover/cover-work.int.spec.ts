/**
 * The cover-check pool on the real SQLite event store, with a checker the test holds open: bounded concurrency,
 * one job at a time per product, and what a result becomes when the product changed while it was checked.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { SqliteEventStore } from '../../infra/adapters/sqlite/event-store.js';
import { SPARSE_POSITIONS } from '../support/sparse-positions.js';
import { AggregateRepository } from '../../command-api/aggregate-repository.js';
import { CachedAggregateStates } from '../../infra/adapters/event-store/cached-state.js';
import { CoverWork, type JobOutcome } from '../../command-api/reactors/cover-work.js';
import { ManualClock } from '../../shared-schema/ports/clock.js';
import type { CoverVerdict } from '../../shared-schema/ports/cover-checker.js';
import { streams, type Tenant } from '../../shared-schema/domain/streams.js';
import { until } from '../support/deadline.js';

const tenant: Tenant = { env: 'live', partnerId: 'pt_T' };
const meta = { recorded_at: '2026-01-02T00:00:00.000Z' };

describe('cover-check pool (SQLite event store)', () => {
  let dir: string;
  let events: SqliteEventStore;
  let running: { url: string; hosts: readonly string[]; finish: (v: CoverVerdict) => void }[];
  let maxAtOnce: number;
  let work: CoverWork;

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cover-work-'));
    events = SqliteEventStore.open({ path: path.join(dir, 'events.db'), positionSpacing: SPARSE_POSITIONS }); // byte-offset-like positions: no `position - 1`
    running = [];
    maxAtOnce = 0;
    work = new CoverWork({
      repo: new AggregateRepository(new CachedAggregateStates(events)),
      clock: new ManualClock(new Date(meta.recorded_at)),
      concurrency: 3,
      checker: (url, hosts) =>
        new Promise<CoverVerdict>((resolve) => {
          const entry = {
            url,
            hosts,
            finish: (v: CoverVerdict) => {
              running = running.filter((r) => r !== entry);
              resolve(v);
            },
          };
          running.push(entry);
          maxAtOnce = Math.max(maxAtOnce, running.length);
        }),
    });
    await events.appendToStream(streams.store(tenant, 's'), [
      {
        type: 'StoreRegistered',
        data: {
          store_id: 's',
          store: {
            name: 'S',
            cnpj: '11222333000181',
            website_url: 'https://shop.test',
            domains: ['shop.test'],
            image_hosts: ['cdn.test'],
          },
          registered_at: meta.recorded_at,
        },
        metadata: meta,
      },
    ]);
  });
  afterEach(async () => {
    for (const r of running) r.finish({ ok: true, reasons: [] });
    await work.stop();
    await events.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const send = async (sku: string, url: string) => {
    const r = await events.appendToStream(streams.product(tenant, sku), [
      {
        type: 'ProductUpserted',
        data: { sku, product: { store_id: 's', image_urls: [url] }, received_at: meta.recorded_at },
        metadata: meta,
      },
    ]);
    return r.nextRevision;
  };
  const checks = async (sku: string) =>
    (await events.readStream(streams.product(tenant, sku)))
      .filter((e) => e.type === 'CoverChecked')
      .map((e) => e.data as { url: string; ok: boolean });
  const finishAll = (v: CoverVerdict = { ok: true, reasons: [] }) => [...running].forEach((r) => r.finish(v));

  it('runs at most `concurrency` checks at once, against the store domains and image hosts, and records each', async () => {
    const jobs: Promise<JobOutcome>[] = [];
    for (let i = 0; i < 8; i++)
      jobs.push(
        work.submit(streams.product(tenant, `p${i}`), {
          kind: 'sent',
          revision: await send(`p${i}`, `https://cdn.test/${i}.jpg`),
        }),
      );
    await until(() => running.length === 3, 30_000);
    expect(running[0].hosts).to.deep.equal(['shop.test', 'cdn.test']);
    const recorded = async () => (await Promise.all(jobs.map((_, i) => checks(`p${i}`)))).every((c) => c.length === 1);
    await until(async () => {
      finishAll(); // each finished check lets a queued one start
      return recorded();
    }, 5_000);
    await Promise.all(jobs);
    expect(maxAtOnce).to.equal(3);
    for (let i = 0; i < 8; i++)
      expect(await checks(`p${i}`)).to.deep.equal([
        { url: `https://cdn.test/${i}.jpg`, ok: true, reasons: [], sku: `p${i}`, checked_at: meta.recorded_at },
      ]);
  });

  it('runs the jobs of one product one after the other, and the second finds nothing owed', async () => {
    const stream = streams.product(tenant, 'one');
    const revision = await send('one', 'https://cdn.test/1.jpg');
    const first = work.submit(stream, { kind: 'sent', revision });
    const second = work.submit(stream, { kind: 'sent', revision });
    await until(() => running.length === 1, 30_000);
    finishAll({ ok: false, reasons: [{ code: 'image_type', field: 'image_urls[0]', message: 'gif' }] });
    await first;
    await second;
    expect(maxAtOnce).to.equal(1);
    expect(await checks('one')).to.have.length(1);
  });

  it('records a result when only a PATCH came in meanwhile, drops it after a new send or a delete', async () => {
    const patchedStream = streams.product(tenant, 'patched');
    const resentStream = streams.product(tenant, 'resent');
    const removedStream = streams.product(tenant, 'removed');
    const jobs = [
      work.submit(patchedStream, { kind: 'sent', revision: await send('patched', 'https://cdn.test/a.jpg') }),
      work.submit(resentStream, { kind: 'sent', revision: await send('resent', 'https://cdn.test/b.jpg') }),
      work.submit(removedStream, { kind: 'sent', revision: await send('removed', 'https://cdn.test/c.jpg') }),
    ];
    await until(() => running.length === 3, 30_000);
    await events.appendToStream(patchedStream, [
      {
        type: 'ProductPatched',
        data: {
          sku: 'patched',
          patch: { price_cents: 5, updated_at: meta.recorded_at },
          received_at: meta.recorded_at,
        },
        metadata: meta,
      },
    ]);
    await send('resent', 'https://cdn.test/b2.jpg');
    await events.appendToStream(removedStream, [
      { type: 'ProductRemoved', data: { sku: 'removed', store_id: 's', removed_at: meta.recorded_at }, metadata: meta },
    ]);
    finishAll();
    await Promise.all(jobs);
    expect((await checks('patched')).map((c) => c.url)).to.deep.equal(['https://cdn.test/a.jpg']);
    expect(await checks('resent')).to.deep.equal([]);
    expect(await checks('removed')).to.deep.equal([]);
  });

  it('on stop, lets running checks record their result and drops the queued ones', async () => {
    const jobs: Promise<JobOutcome>[] = [];
    for (let i = 0; i < 5; i++)
      jobs.push(
        work.submit(streams.product(tenant, `q${i}`), {
          kind: 'sent',
          revision: await send(`q${i}`, `https://cdn.test/q${i}.jpg`),
        }),
      );
    await until(() => running.length === 3, 30_000);
    const stopped = work.stop();
    finishAll();
    await stopped;
    const outcomes = (await Promise.all(jobs)).map((j) => j.outcome);
    expect(outcomes).to.deep.equal(['done', 'done', 'done', 'dropped', 'dropped']);
    expect((await work.submit(streams.product(tenant, 'q0'), { kind: 'due' })).outcome).to.equal('dropped');
    for (let i = 0; i < 5; i++) expect(await checks(`q${i}`), `q${i}`).to.have.length(i < 3 ? 1 : 0);
  });
});
