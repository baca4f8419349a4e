import { expect } from 'chai';
import type { NewEvent } from '../../shared-schema/ports/event-store.js';
import type { BatchItem, ItemOutcome } from '../../shared-schema/events/job.js';
import {
  brokenBecause,
  decideJob,
  jobAggregate,
  JobInvariantError,
  nextWave,
  planSubmission,
  totalsOf,
  type JobCommand,
  type JobState,
} from '../../command-api/deciders/job.js';

const meta = { recorded_at: '2026-01-02T00:00:00.000Z', actor: 'key_1' };
const tenant = { partnerId: 'pt_A', env: 'live' as const };
const upsert = (sku: string, size = 0): BatchItem => ({ op: 'upsert', sku, product: { title: 'x'.repeat(size) } as never });
const del = (sku: string): BatchItem => ({ op: 'delete', sku });

const given = (events: readonly NewEvent[]): JobState =>
  events.reduce<JobState>((s, e, i) => jobAggregate.evolve(s, { ...e, id: '', stream: 'job-live:pt_A:j', revision: i, position: i + 1 }), jobAggregate.initial());
const submitted = (items: BatchItem[]) => planSubmission({ jobId: 'job_1', tenant, items, now: meta.recorded_at, meta }).flat();
const cmd = (c: Record<string, unknown>) => ({ now: meta.recorded_at, meta, ...c }) as JobCommand;
const outcomes = (indexes: number[], bucket: ItemOutcome['bucket'] = 'pending'): ItemOutcome[] => indexes.map((index) => ({ index, sku: `s${index}`, bucket }));
const started: NewEvent = { type: 'BatchStarted', data: { job_id: 'job_1', started_at: meta.recorded_at }, metadata: meta };
const running = (n: number) => given([...submitted(Array.from({ length: n }, (_, i) => upsert(`s${i}`))), started]);
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

describe('job decider', () => {
  describe('planning the submission', () => {
    it('stores a small batch in one append, BatchQueued last', () => {
      const appends = planSubmission({ jobId: 'job_1', tenant, items: [upsert('a'), del('b')], now: meta.recorded_at, meta });
      expect(appends.map((a) => a.map((e) => e.type))).to.deep.equal([['BatchPartStored', 'BatchQueued']]);
      const s = given(appends.flat());
      expect(s).to.include({ exists: true, state: 'queued', received: 2, jobId: 'job_1' });
      expect(s.items).to.deep.equal([upsert('a'), del('b')]);
      expect(brokenBecause(s)).to.equal(null);
    });

    it('splits a large batch into parts and appends within the budgets, items back in order', () => {
      const items = Array.from({ length: 300 }, (_, i) => upsert(`s${i}`, 1000));
      const appends = planSubmission({ jobId: 'job_1', tenant, items, now: meta.recorded_at, meta }, { partBytes: 20_000, appendBytes: 50_000 });
      expect(appends.length).to.be.greaterThan(3);
      for (const a of appends) {
        const bytes = a.filter((e) => e.type === 'BatchPartStored').reduce((n, e) => n + Buffer.byteLength(JSON.stringify((e.data as { items: unknown }).items)), 0);
        expect(bytes).to.be.at.most(50_000);
      }
      expect(appends.flat().filter((e) => e.type === 'BatchQueued')).to.have.length(1);
      expect(appends[appends.length - 1].at(-1)!.type).to.equal('BatchQueued');
      expect(given(appends.flat()).items.map((i) => i?.sku)).to.deep.equal(items.map((i) => i.sku));
    });

    it('gives an item larger than a part a part of its own', () => {
      const appends = planSubmission({ jobId: 'job_1', tenant, items: [upsert('a', 10), upsert('b', 5000), upsert('c', 10)], now: meta.recorded_at, meta }, { partBytes: 1000, appendBytes: 100_000 });
      expect(appends.flat().filter((e) => e.type === 'BatchPartStored').map((e) => (e.data as { from: number }).from)).to.deep.equal([0, 1, 2]);
    });

    it('without BatchQueued (a crash mid-write), parts are no job', () => {
      const events = planSubmission({ jobId: 'job_1', tenant, items: [upsert('a'), del('b')], now: meta.recorded_at, meta }, { partBytes: 10, appendBytes: 10 });
      const s = given(events.slice(0, -1).flat());
      expect(s.exists).to.equal(false);
      expect(brokenBecause(s)).to.equal('the job was never queued');
    });

    it('names a batch whose stored parts are incomplete', () => {
      const events = submitted(Array.from({ length: 3 }, (_, i) => upsert(`s${i}`, 100)));
      expect(brokenBecause(given(events))).to.equal(null);
      const planned = planSubmission({ jobId: 'job_1', tenant, items: Array.from({ length: 3 }, (_, i) => upsert(`s${i}`, 100)), now: meta.recorded_at, meta }, { partBytes: 10, appendBytes: 10 }).flat();
      expect(brokenBecause(given(planned.filter((_, i) => i !== 1)))).to.equal('stored 2 parts of 3');
    });
  });

  describe('passes of work', () => {
    it('takes chunks of 50 in array order', () => {
      let s = running(120);
      const w0 = nextWave(s)!;
      expect(w0.chunk).to.equal(0);
      expect(w0.items.map((i) => i.index)).to.deep.equal(range(0, 50));
      s = decideJob(cmd({ type: 'RecordWave', chunk: 0, outcomes: outcomes(range(0, 50)) }), s).result;
      const w1 = nextWave(s)!;
      expect([w1.chunk, w1.items[0].index, w1.items.length]).to.deep.equal([1, 50, 50]);
      s = decideJob(cmd({ type: 'RecordWave', chunk: 1, outcomes: outcomes(range(50, 100)) }), s).result;
      expect(nextWave(s)!.items.map((i) => i.index)).to.deep.equal(range(100, 120));
    });

    it('never puts one SKU twice in a pass: a repeat waits for the next pass, in array order', () => {
      const items = [upsert('x'), upsert('y'), del('x'), upsert('x'), upsert('z')];
      let s = given([...submitted(items), started]);
      const passes: number[][] = [];
      for (let w = nextWave(s); w; w = nextWave(s)) {
        passes.push(w.items.map((i) => i.index));
        s = decideJob(cmd({ type: 'RecordWave', chunk: w.chunk, outcomes: outcomes(w.items.map((i) => i.index)) }), s).result;
      }
      expect(passes).to.deep.equal([[0, 1, 4], [2], [3]]);
    });
  });

  describe('commands', () => {
    it('starts a queued job once', () => {
      const queued = given(submitted([upsert('a')]));
      expect(decideJob(cmd({ type: 'StartJob' }), queued).events.map((e) => e.type)).to.deep.equal(['BatchStarted']);
      expect(decideJob(cmd({ type: 'StartJob' }), running(1)).events).to.deep.equal([]);
    });

    it('records the last pass with BatchDone carrying totals that add up', () => {
      const s = running(4);
      const d = decideJob(cmd({ type: 'RecordWave', chunk: 0, outcomes: [
        { index: 0, sku: 's0', bucket: 'accepted' },
        { index: 1, sku: 's1', bucket: 'rejected', reasons: [{ code: 'store_not_found', field: 'store_id', message: 'm' }] },
        { index: 2, sku: 's2', bucket: 'pending' },
        { index: 3, sku: 's3', bucket: 'removed' },
      ] }), s);
      expect(d.events.map((e) => e.type)).to.deep.equal(['BatchChunkProcessed', 'BatchDone']);
      expect((d.events[1].data as { totals: unknown }).totals).to.deep.equal({ received: 4, accepted: 1, rejected: 1, pending: 1, removed: 1 });
      expect(totalsOf(d.result)).to.deep.equal({ received: 4, accepted: 1, rejected: 1, pending: 1, removed: 1 });
    });

    it('refuses outcomes outside the chunk, twice for one item, or for a job not running', () => {
      const s = running(60);
      expect(() => decideJob(cmd({ type: 'RecordWave', chunk: 0, outcomes: outcomes([50]) }), s)).to.throw(JobInvariantError);
      expect(() => decideJob(cmd({ type: 'RecordWave', chunk: 0, outcomes: outcomes([3, 3]) }), s)).to.throw(JobInvariantError);
      const after = decideJob(cmd({ type: 'RecordWave', chunk: 0, outcomes: outcomes([3]) }), s).result;
      expect(() => decideJob(cmd({ type: 'RecordWave', chunk: 0, outcomes: outcomes([3]) }), after)).to.throw(JobInvariantError);
      expect(() => decideJob(cmd({ type: 'RecordWave', chunk: 0, outcomes: outcomes([0]) }), given(submitted([upsert('a')])))).to.throw(JobInvariantError);
    });

    it('fails an unfinished job once, and never a finished one', () => {
      const s = running(1);
      const failed = decideJob(cmd({ type: 'FailJob', reason: 'broken' }), s);
      expect(failed.events.map((e) => [e.type, (e.data as { reason: string }).reason])).to.deep.equal([['BatchFailed', 'broken']]);
      const done = decideJob(cmd({ type: 'RecordWave', chunk: 0, outcomes: outcomes([0]) }), s);
      const finished = given([...submitted([upsert('s0')]), started, ...done.events]);
      expect(finished.state).to.equal('done');
      expect(decideJob(cmd({ type: 'FailJob', reason: 'late' }), finished).events).to.deep.equal([]);
    });
  });
});
