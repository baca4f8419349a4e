/**
 * The batch runner: a reactor on the write side. It follows the `job` category of the log from a checkpoint to find
 * queued jobs, and works through them round-robin, one pass of one chunk per turn, so a 1000-item batch of one
 * partner holds back another partner's single item by one chunk at most. `passes` turns run at once, never two of
 * one partner area (its jobs take turns as before): a pass mostly waits for its group commits, and one pass at a time
 * left the event loop idle under a batch load (docs/adr/0014-batches-and-jobs.md).
 *
 * One pass (deciders/job.ts `nextWave`): the items are applied with the same code as single writes, concurrently
 * (no SKU twice in a pass, so per-SKU array order holds), then their outcomes are appended to the job stream with
 * the expected revision. The log, not memory, says what is left: after a restart, a running job resumes at its
 * first item without an outcome; items of an interrupted pass that already reached their product stream (tagged
 * with `job_id` and `job_item`) are recognised and counted, never applied twice.
 *
 * Checkpoint (`reactor:batch-runner` in the read store): the position of the `job` event delivered just before the
 * oldest unfinished job's `BatchQueued` (positions are opaque tokens: no arithmetic), so a restart rediscovers
 * every unfinished job and few finished ones. The job stream itself is always the authority.
 */
import type { Logger } from 'pino';
import { CATEGORIES } from '../../shared-schema/domain/streams.js';
import { ConflictsExhausted } from '../conflict-retry.js';
import {
  WrongExpectedRevisionError,
  type RecordedEvent,
  type Subscription,
} from '../../shared-schema/ports/event-store.js';
import type { ItemOutcome } from '../../shared-schema/events/job.js';
import {
  brokenBecause,
  isFinished,
  jobDecider,
  JobInvariantError,
  nextWave,
  type JobCommand,
  type JobState,
  type WaveItem,
} from '../deciders/job.js';
import { event, foldRecorded } from '../deciders/decider.js';
import { metadata, type CommandDeps } from '../services/context.js';
import { appliedItems, applyBatchItem, itemMetadata, recoveredOutcome } from '../services/batch.js';

export const BATCH_RUNNER_CHECKPOINT = 'reactor:batch-runner';

export interface BatchRunnerOptions {
  log?: Logger;
  /** First delay after an unexpected error of a pass (doubles up to `maxRetryDelayMs`). Default 100 ms. */
  retryDelayMs?: number;
  maxRetryDelayMs?: number;
  /**
   * The runner stopped: its subscription to the log ended on an error (a refused start, a denied read), or its work
   * loop failed. Without it the runner only logs; either way no job is started or continued until a restart.
   */
  onStopped?: (err: unknown) => void;
  /** Passes of different partner areas in flight at once. Default 4. */
  passes?: number;
  /** Told once per job that reaches `done` or `failed` (the operation history's "batch processed" entry). */
  onFinished?: (job: { partnerId: string; env: 'live' | 'test'; jobId: string; outcome: string }) => void;
}

interface ActiveJob {
  stream: string;
  /**
   * Position of the event the subscription delivered just before `BatchQueued` (or the position it started after):
   * the checkpoint stays at or below it for the oldest unfinished job, so a restart delivers `BatchQueued` again.
   * Positions are opaque tokens: "just below BatchQueued" is this, never `BatchQueued's position - 1`.
   */
  resumeAfter: number;
  state: JobState | null;
  revision: number;
  /** Position of the job stream's last event: an interrupted pass wrote its items after it. */
  lastPosition: number;
  /** Look for items an interrupted pass already applied before running the next pass. */
  verify: boolean;
  failures: number;
  notBefore: number;
}

export class BatchRunner {
  private readonly active = new Map<string, ActiveJob>();
  private ready: ActiveJob[] = [];
  private subscription: Subscription | null = null;
  private loops: Promise<void>[] = [];
  private stopped = false;
  private seen = 0;
  private saved = 0;
  /** The idle work loops, each woken once by `wake`. */
  private readonly pokes = new Set<() => void>();
  /** Partner areas (partner and environment) with a turn in flight: never two passes of one area at once. */
  private readonly inFlight = new Set<string>();

  constructor(
    private readonly deps: CommandDeps,
    private readonly options: BatchRunnerOptions = {},
  ) {}

  /** Unfinished jobs this runner knows (the queue depth the metrics report). */
  get depth(): number {
    return this.active.size;
  }

  async start(): Promise<void> {
    this.saved = await this.deps.reads.getCheckpoint(BATCH_RUNNER_CHECKPOINT);
    this.seen = this.saved;
    this.subscription = this.deps.events.subscribeToAll({ afterPosition: this.saved, categories: [CATEGORIES.job] });
    const passes = Math.max(1, this.options.passes ?? 4);
    this.loops = [
      this.guard(this.discover(this.subscription), 'discovery'),
      ...Array.from({ length: passes }, () => this.guard(this.work(), 'work')),
    ];
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.subscription?.close();
    this.wake();
    await Promise.all(this.loops);
  }

  private async guard(loop: Promise<void>, name: string): Promise<void> {
    try {
      await loop;
    } catch (err) {
      if (this.stopped) return;
      if (this.options.onStopped) this.options.onStopped(err);
      else this.options.log?.error({ err, loop: name }, 'batch runner stopped');
    }
  }

  private wake(): void {
    const pokes = [...this.pokes];
    this.pokes.clear();
    for (const poke of pokes) poke();
  }

  private async discover(subscription: Subscription): Promise<void> {
    for await (const e of subscription) {
      const before = this.seen;
      this.seen = e.position;
      if (e.type !== 'BatchQueued' || this.active.has(e.stream)) continue;
      const job: ActiveJob = {
        stream: e.stream,
        resumeAfter: before,
        state: null,
        revision: -1,
        lastPosition: 0,
        verify: false,
        failures: 0,
        notBefore: 0,
      };
      this.active.set(e.stream, job);
      this.ready.push(job);
      this.wake();
    }
  }

  private async work(): Promise<void> {
    while (!this.stopped) {
      const now = Date.now();
      const at = this.ready.findIndex((j) => j.notBefore <= now && !this.inFlight.has(areaOf(j.stream)));
      if (at < 0) {
        await this.idle();
        continue;
      }
      const [job] = this.ready.splice(at, 1);
      const area = areaOf(job.stream);
      this.inFlight.add(area);
      let finished: boolean;
      try {
        finished = await this.turn(job);
      } finally {
        this.inFlight.delete(area);
      }
      if (this.stopped) return;
      if (finished) {
        this.active.delete(job.stream);
        const done = job.state;
        if (done?.tenant && this.options.onFinished) {
          try {
            this.options.onFinished({
              partnerId: done.tenant.partnerId,
              env: done.tenant.env,
              jobId: done.jobId,
              outcome: String(done.state),
            });
          } catch (err) {
            this.options.log?.warn({ err }, 'batch finished hook failed');
          }
        }
        await this.saveCheckpoint();
      } else this.ready.push(job);
      this.wake(); // the other loops may take this job, or another of its area
    }
  }

  /** Waits for a new job, a finished turn (`wake`), or the first retry delay to pass. */
  private idle(): Promise<void> {
    const waits = this.ready.filter((j) => !this.inFlight.has(areaOf(j.stream))).map((j) => j.notBefore - Date.now());
    return new Promise<void>((resolve) => {
      const timer = waits.length > 0 ? setTimeout(resolve, Math.max(1, Math.min(...waits))) : undefined;
      this.pokes.add(() => {
        if (timer) clearTimeout(timer);
        resolve();
      });
      if (this.stopped) resolve();
    });
  }

  /** One turn of one job: start it if queued, run one pass, record it. True when the job is finished. */
  private async turn(job: ActiveJob): Promise<boolean> {
    try {
      if (!job.state) await this.load(job);
      const s = job.state!;
      if (isFinished(s)) return true;
      const broken = brokenBecause(s);
      if (broken) throw new JobInvariantError(`the stored batch is incomplete: ${broken}`);
      if (s.state === 'queued') await this.decide(job, { type: 'StartJob', now: this.now() });
      const wave = nextWave(job.state!);
      if (!wave) {
        await this.decide(job, { type: 'FinishJob', now: this.now() });
        return isFinished(job.state!);
      }
      const outcomes = await this.pass(job, wave.items);
      await this.decide(job, { type: 'RecordWave', chunk: wave.chunk, outcomes, now: this.now() });
      job.verify = false;
      job.failures = 0;
      return isFinished(job.state!);
    } catch (err) {
      if (this.stopped) return false;
      if (err instanceof JobInvariantError) return this.fail(job, err);
      // Anything else (a store error, a concurrent writer): reload the job and look for applied items, later.
      job.state = null;
      job.failures += 1;
      const base = this.options.retryDelayMs ?? 100;
      job.notBefore = Date.now() + Math.min(this.options.maxRetryDelayMs ?? 30_000, base * 2 ** (job.failures - 1));
      if (!(err instanceof WrongExpectedRevisionError || err instanceof ConflictsExhausted))
        this.options.log?.error({ err, stream: job.stream }, 'batch pass failed; will retry');
      return false;
    }
  }

  private async pass(job: ActiveJob, items: readonly WaveItem[]): Promise<ItemOutcome[]> {
    const s = job.state!;
    const tenant = s.tenant!;
    const applied: Map<number, RecordedEvent> = job.verify
      ? await appliedItems(this.deps, s.jobId, job.lastPosition)
      : new Map<number, RecordedEvent>();
    job.verify = true; // until the pass is recorded, a failure may leave some of its items applied
    const now = this.deps.clock.now();
    const settled = await Promise.allSettled(
      items.map(({ index, item }) => {
        const prior = applied.get(index);
        if (prior) return recoveredOutcome(this.deps, tenant, index, item, prior);
        return applyBatchItem(this.deps, tenant, index, item, itemMetadata(s.queuedMeta, now, s.jobId, index));
      }),
    );
    const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
    return settled.map((r) => (r as PromiseFulfilledResult<ItemOutcome>).value);
  }

  private now(): string {
    return this.deps.clock.now().toISOString();
  }

  private async load(job: ActiveJob): Promise<void> {
    const events = await this.deps.events.readStream(job.stream);
    const last = events[events.length - 1];
    job.state = foldRecorded(jobDecider, events);
    job.revision = last ? last.revision : -1;
    job.lastPosition = last ? last.position : 0;
    // A running job loaded from the log may have been interrupted in the middle of a pass.
    if (job.state.state === 'running') job.verify = true;
  }

  private async decide(job: ActiveJob, command: JobCommand): Promise<void> {
    const { events, result } = jobDecider.decide(command, job.state!);
    if (events.length === 0) return;
    const meta = metadata(this.deps.clock, undefined, 'system');
    const appended = await this.deps.events.appendToStream(
      job.stream,
      events.map((e) => event(e, meta)),
      job.revision,
    );
    job.state = result;
    job.revision += events.length;
    job.lastPosition = appended.position;
  }

  private async fail(job: ActiveJob, err: Error): Promise<boolean> {
    this.options.log?.error({ err, stream: job.stream }, 'batch job cannot continue');
    try {
      if (!job.state) await this.load(job);
      await this.decide(job, { type: 'FailJob', reason: err.message, now: this.now() });
      return true;
    } catch (again) {
      this.options.log?.error({ err: again, stream: job.stream }, 'could not mark the batch job failed; will retry');
      job.state = null;
      job.notBefore = Date.now() + (this.options.maxRetryDelayMs ?? 30_000);
      return false;
    }
  }

  /** Best effort: a checkpoint left behind only makes the next start re-read a few finished jobs. */
  private async saveCheckpoint(): Promise<void> {
    let below = this.seen;
    for (const j of this.active.values()) below = Math.min(below, j.resumeAfter);
    if (below <= this.saved) return;
    try {
      await this.deps.reads.transact((tx) => tx.setCheckpoint(BATCH_RUNNER_CHECKPOINT, below));
      this.saved = below;
    } catch (err) {
      this.options.log?.warn({ err }, 'batch runner checkpoint not saved');
    }
  }
}

/** The partner area (partner and environment) of a job stream: the stream name without its job id. */
const areaOf = (stream: string): string => stream.slice(0, stream.lastIndexOf(':'));
