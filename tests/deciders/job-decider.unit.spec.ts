import { expect } from 'chai';
import type { BatchItem, ItemOutcome, JobEvent } from '../../shared-schema/events/job.js';
import {
  brokenBecause,
  jobDecider,
  JobInvariantError,
  nextWave,
  planSubmission,
  totalsOf,
  type JobCommand,
  type JobState,
} from '../../command-api/deciders/job.js';
import { fold, given as givenEvents, META } from '../support/decider-given.js';

const now = '2026-01-02T00:00:00.000Z';
const tenant = { partnerId: 'pt_A', env: 'live' as const };
const upsert = (sku: string, size = 0): BatchItem => ({
  op: 'upsert',
  sku,
  product: { title: 'x'.repeat(size) } as never,
});
const del = (sku: string): BatchItem => ({ op: 'delete', sku });

const given = (events: readonly JobEvent[]): JobState => fold(jobDecider, events);
const submitted = (items: BatchItem[]) => planSubmission({ jobId: 'job_1', tenant, items, now }).flat();
const outcomes = (indexes: number[], bucket: ItemOutcome['bucket'] = 'pending'): ItemOutcome[] =>
  indexes.map((index) => ({ index, sku: `s${index}`, bucket }));
const started: JobEvent = { type: 'BatchStarted', data: { job_id: 'job_1', started_at: now } };
const runningEvents = (n: number) => [...submitted(Array.from({ length: n }, (_, i) => upsert(`s${i}`))), started];
const running = (n: number) => given(runningEvents(n));
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);
/** The job's state after a command (its answer). */
const after = (s: JobState, c: JobCommand): JobState => jobDecider.decide(c, s).result;
const wave = (chunk: number, indexes: number[]): JobCommand => ({
  type: 'RecordWave',
  chunk,
  outcomes: outcomes(indexes),
  now,
});

describe('job decider', () => {
  describe('planning the submission', () => {
    it('stores a small batch in one append, BatchQueued last', () => {
      const appends = planSubmission({ jobId: 'job_1', tenant, items: [upsert('a'), del('b')], now });
      expect(appends.map((a) => a.map((e) => e.type))).to.deep.equal([['BatchPartStored', 'BatchQueued']]);
      const s = given(appends.flat());
      expect(s).to.include({ exists: true, state: 'queued', received: 2, jobId: 'job_1' });
      expect(s.items).to.deep.equal([upsert('a'), del('b')]);
      expect(brokenBecause(s)).to.equal(null);
      expect(s.queuedMeta, 'the items are written as the POST that queued them').to.deep.equal(META);
    });

    it('splits a large batch into parts and appends within the budgets, items back in order', () => {
      const items = Array.from({ length: 300 }, (_, i) => upsert(`s${i}`, 1000));
      const appends = planSubmission(
        { jobId: 'job_1', tenant, items, now },
        { partBytes: 20_000, appendBytes: 50_000 },
      );
      expect(appends.length).to.be.greaterThan(3);
      for (const a of appends) {
        const bytes = a
          .filter((e) => e.type === 'BatchPartStored')
          .reduce((n, e) => n + Buffer.byteLength(JSON.stringify((e.data as { items: unknown }).items)), 0);
        expect(bytes).to.be.at.most(50_000);
      }
      expect(appends.flat().filter((e) => e.type === 'BatchQueued')).to.have.length(1);
      expect(appends[appends.length - 1].at(-1)!.type).to.equal('BatchQueued');
      expect(given(appends.flat()).items.map((i) => i?.sku)).to.deep.equal(items.map((i) => i.sku));
    });

    it('gives an item larger than a part a part of its own', () => {
      const appends = planSubmission(
        { jobId: 'job_1', tenant, items: [upsert('a', 10), upsert('b', 5000), upsert('c', 10)], now },
        { partBytes: 1000, appendBytes: 100_000 },
      );
      expect(
        appends
          .flat()
          .filter((e) => e.type === 'BatchPartStored')
          .map((e) => (e.data as { from: number }).from),
      ).to.deep.equal([0, 1, 2]);
    });

    it('without BatchQueued (a crash mid-write), parts are no job', () => {
      const events = planSubmission(
        { jobId: 'job_1', tenant, items: [upsert('a'), del('b')], now },
        { partBytes: 10, appendBytes: 10 },
      );
      const s = given(events.slice(0, -1).flat());
      expect(s.exists).to.equal(false);
      expect(brokenBecause(s)).to.equal('the job was never queued');
    });

    it('names a batch whose stored parts are incomplete', () => {
      const events = submitted(Array.from({ length: 3 }, (_, i) => upsert(`s${i}`, 100)));
      expect(brokenBecause(given(events))).to.equal(null);
      const planned = planSubmission(
        { jobId: 'job_1', tenant, items: Array.from({ length: 3 }, (_, i) => upsert(`s${i}`, 100)), now },
        { partBytes: 10, appendBytes: 10 },
      ).flat();
      expect(brokenBecause(given(planned.filter((_, i) => i !== 1)))).to.equal('stored 2 parts of 3');
    });
  });

  describe('passes of work', () => {
    it('takes chunks of 50 in array order', () => {
      let s = running(120);
      const w0 = nextWave(s)!;
      expect(w0.chunk).to.equal(0);
      expect(w0.items.map((i) => i.index)).to.deep.equal(range(0, 50));
      s = after(s, wave(0, range(0, 50)));
      const w1 = nextWave(s)!;
      expect([w1.chunk, w1.items[0].index, w1.items.length]).to.deep.equal([1, 50, 50]);
      s = after(s, wave(1, range(50, 100)));
      expect(nextWave(s)!.items.map((i) => i.index)).to.deep.equal(range(100, 120));
    });

    it('never puts one SKU twice in a pass: a repeat waits for the next pass, in array order', () => {
      const items = [upsert('x'), upsert('y'), del('x'), upsert('x'), upsert('z')];
      let s = given([...submitted(items), started]);
      const passes: number[][] = [];
      for (let w = nextWave(s); w; w = nextWave(s)) {
        passes.push(w.items.map((i) => i.index));
        s = after(
          s,
          wave(
            w.chunk,
            w.items.map((i) => i.index),
          ),
        );
      }
      expect(passes).to.deep.equal([[0, 1, 4], [2], [3]]);
    });
  });

  describe('commands', () => {
    it('starts a queued job once', () => {
      const start: JobCommand = { type: 'StartJob', now };
      const o = givenEvents(jobDecider, ...submitted([upsert('a')])).when(start);
      expect(o.then(started)).to.deep.equal(o.after);
      givenEvents(jobDecider, ...runningEvents(1))
        .when(start)
        .thenNothing();
    });

    it('records the last pass with BatchDone carrying totals that add up', () => {
      const recorded: ItemOutcome[] = [
        { index: 0, sku: 's0', bucket: 'accepted' },
        {
          index: 1,
          sku: 's1',
          bucket: 'rejected',
          reasons: [{ code: 'store_not_found', field: 'store_id', message: 'm' }],
        },
        { index: 2, sku: 's2', bucket: 'pending' },
        { index: 3, sku: 's3', bucket: 'removed' },
      ];
      const totals = { received: 4, accepted: 1, rejected: 1, pending: 1, removed: 1 };
      const o = givenEvents(jobDecider, ...runningEvents(4)).when({
        type: 'RecordWave',
        chunk: 0,
        outcomes: recorded,
        now,
      });
      const answer = o.then(
        { type: 'BatchChunkProcessed', data: { job_id: 'job_1', chunk: 0, outcomes: recorded } },
        { type: 'BatchDone', data: { job_id: 'job_1', totals, finished_at: now } },
      );
      expect(answer).to.deep.equal(o.after);
      expect(totalsOf(answer)).to.deep.equal(totals);
    });

    it('records a pass that leaves items without BatchDone, and finishes a job whose items are all recorded', () => {
      const o = givenEvents(jobDecider, ...runningEvents(60)).when(wave(0, [0, 1]));
      expect(
        o.then({ type: 'BatchChunkProcessed', data: { job_id: 'job_1', chunk: 0, outcomes: outcomes([0, 1]) } }),
      ).to.deep.equal(o.after);
      const whole: JobEvent = {
        type: 'BatchChunkProcessed',
        data: { job_id: 'job_1', chunk: 0, outcomes: outcomes([0]) },
      };
      givenEvents(jobDecider, ...runningEvents(1), whole)
        .when({ type: 'FinishJob', now })
        .then({
          type: 'BatchDone',
          data: {
            job_id: 'job_1',
            totals: { received: 1, accepted: 0, rejected: 0, pending: 1, removed: 0 },
            finished_at: now,
          },
        });
      givenEvents(jobDecider, ...runningEvents(2), whole)
        .when({ type: 'FinishJob', now })
        .thenNothing();
    });

    it('refuses outcomes outside the chunk, twice for one item, or for a job not running', () => {
      const s = running(60);
      expect(() => after(s, wave(0, [50]))).to.throw(JobInvariantError);
      expect(() => after(s, wave(0, [3, 3]))).to.throw(JobInvariantError);
      expect(() => after(after(s, wave(0, [3])), wave(0, [3]))).to.throw(JobInvariantError);
      expect(() => after(given(submitted([upsert('a')])), wave(0, [0]))).to.throw(JobInvariantError);
    });

    it('fails an unfinished job once, and never a finished one', () => {
      const o = givenEvents(jobDecider, ...runningEvents(1)).when({ type: 'FailJob', reason: 'broken', now });
      expect(
        o.then({ type: 'BatchFailed', data: { job_id: 'job_1', reason: 'broken', finished_at: now } }),
      ).to.deep.equal(o.after);
      const done = jobDecider.decide(wave(0, [0]), running(1)).events;
      givenEvents(jobDecider, ...runningEvents(1), ...done)
        .when({ type: 'FailJob', reason: 'late', now })
        .thenNothing();
      expect(given([...runningEvents(1), ...done]).state).to.equal('done');
    });
  });
});
