/**
 * One cover check of one product, and the pool that runs them.
 *
 * A job (1) loads the product stream as the check sees it (`coverFold`), (2) decides from the log alone whether
 * a check is owed (`checkOwed`, pure), (3) fetches and judges the cover through the `CoverChecker` port against the
 * store's domains and image hosts, (4) appends `CoverChecked` with the revision read in (1). When the stream moved
 * meanwhile, the result is appended only if nothing but PATCHes came in between (a PATCH cannot change the cover); a
 * new send or a delete makes it worthless, and the send's own job checks again.
 *
 * The pool runs at most `concurrency` checks at once and the jobs of one product one after the other, so two
 * checks of one product never race and "none twice in a row" follows from `checkOwed`.
 */
import type { Clock } from '../../shared-schema/ports/clock.js';
import type { CoverChecker } from '../../shared-schema/ports/cover-checker.js';
import type { ProductEvent, RejectionReason } from '../../shared-schema/events/product.js';
import { streams, type Environment, type Tenant } from '../../shared-schema/domain/streams.js';
import type { AggregateRepository } from '../aggregate-repository.js';
import { storeDecider } from '../deciders/store.js';
import type { Fold } from '../deciders/decider.js';

export const RECHECK_REJECTED_MS = 60 * 60 * 1000;
export const RECHECK_ACCEPTED_MS = 7 * 24 * 60 * 60 * 1000;

/** The product stream as the cover check reads it. Revisions are stream revisions (-1: never). */
export interface CoverSubject {
  exists: boolean;
  removed: boolean;
  sku: string;
  storeId: string;
  /** The current cover address (`image_urls[0]`). */
  url: string;
  lastSendRevision: number;
  /** Revision of the last event that was not a PATCH (a PATCH never touches the cover). */
  lastChangeRevision: number;
  cover: { url: string; ok: boolean; checkedAt: string; revision: number } | null;
}

export const coverFold: Fold<CoverSubject, ProductEvent> = {
  name: 'product-cover',
  initialState: () => ({
    exists: false,
    removed: false,
    sku: '',
    storeId: '',
    url: '',
    lastSendRevision: -1,
    lastChangeRevision: -1,
    cover: null,
  }),
  evolve: (s, e) => {
    const r = e.revision;
    switch (e.type) {
      case 'ProductUpserted':
        return {
          ...s,
          exists: true,
          removed: false,
          sku: e.data.sku,
          storeId: e.data.product.store_id,
          url: e.data.product.image_urls[0] ?? '',
          lastSendRevision: r,
          lastChangeRevision: r,
        };
      case 'ProductPatched':
        return s;
      case 'ProductRemoved':
        return { ...s, removed: true, lastChangeRevision: r };
      case 'CoverChecked':
        return {
          ...s,
          lastChangeRevision: r,
          cover: { url: e.data.url, ok: e.data.ok, checkedAt: e.data.checked_at, revision: r },
        };
      default:
        return s;
    }
  },
};

/**
 * Why a check is asked for:
 * - `sent`: the product was sent (PUT / batch upsert) at `revision`;
 * - `due`: the re-check scheduler found its cover result old (rejected: 1 hour; accepted: 7 days);
 * - `unchecked`: the scheduler found a product whose current cover has no result (work lost to a failure).
 */
export type CoverTrigger = { kind: 'sent'; revision: number } | { kind: 'due' } | { kind: 'unchecked' };

/** Whether the log says a check is owed now. Pure. */
export function checkOwed(s: CoverSubject, trigger: CoverTrigger, now: Date): boolean {
  if (!s.exists || s.removed || s.url === '') return false;
  const cover = s.cover && s.cover.url === s.url ? s.cover : null;
  switch (trigger.kind) {
    case 'sent':
      if (s.lastSendRevision > trigger.revision) return false; // a later send has its own job
      if (!cover) return true; // a new address
      if (cover.revision > trigger.revision) return false; // already checked after this send (a replay)
      return !cover.ok; // sent again after a rejection: check again; an accepted cover is not re-checked per send
    case 'due': {
      if (!cover) return false;
      const age = now.getTime() - Date.parse(cover.checkedAt);
      return age >= (cover.ok ? RECHECK_ACCEPTED_MS : RECHECK_REJECTED_MS);
    }
    case 'unchecked':
      return !cover;
  }
}

/** `product-{env}:{partner}:{sku}` → tenant and sku (partner ids and environments hold no `:`). */
export function productStreamParts(stream: string): { tenant: Tenant; sku: string } {
  const body = stream.slice(stream.indexOf('-') + 1);
  const [env, partnerId, ...sku] = body.split(':');
  return { tenant: { env: env as Environment, partnerId: partnerId }, sku: sku.join(':') };
}

export interface CoverWorkOptions {
  repo: AggregateRepository;
  clock: Clock;
  checker: CoverChecker;
  /** Checks running at once. Default 8. */
  concurrency?: number;
  onError?: (err: unknown, stream: string) => void;
}

/**
 * `done`: the job ran (appended a result, judged or not, or found nothing owed); `failed`: it could not finish (the
 * checker threw, an append failed for another reason than a concurrent writer) and nothing was recorded;
 * `dropped`: the pool stopped before it ran.
 */
export type JobOutcome =
  { outcome: 'done'; position?: number } | { outcome: 'failed'; error: unknown } | { outcome: 'dropped' };

export class CoverWork {
  private readonly concurrency: number;
  private running = 0;
  private readonly slots: (() => void)[] = [];
  private readonly tails = new Map<string, Promise<unknown>>();
  private readonly active = new Set<Promise<unknown>>();
  private stopped = false;

  constructor(private readonly options: CoverWorkOptions) {
    this.concurrency = Math.max(1, options.concurrency ?? 8);
  }

  /** Products with a check queued or running. */
  get depth(): number {
    return this.tails.size;
  }

  /** Checks running at once. */
  get slotCount(): number {
    return this.concurrency;
  }

  /** Products with a job queued or running (the scheduler does not queue a second one). */
  busy(stream: string): boolean {
    return this.tails.has(stream);
  }

  /** Queues a job after the product's previous one; resolves when it ran (or was dropped by `stop`). */
  submit(stream: string, trigger: CoverTrigger): Promise<JobOutcome> {
    if (this.stopped) return Promise.resolve({ outcome: 'dropped' });
    const previous = this.tails.get(stream) ?? Promise.resolve();
    const job = previous.then(() => this.withSlot(stream, () => this.run(stream, trigger)));
    this.tails.set(stream, job);
    this.active.add(job);
    // Cleared whatever the outcome; a failure reaches the caller through `job` (a `finally` here would fork a second,
    // unobserved rejection, which ends the process).
    const settled = (): void => {
      this.active.delete(job);
      if (this.tails.get(stream) === job) this.tails.delete(stream);
    };
    void job.then(settled, settled);
    return job;
  }

  /** Jobs not started are dropped (the log still holds them); running ones finish and record their result. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const release of this.slots.splice(0)) release();
    await Promise.allSettled([...this.active]);
  }

  private async withSlot(stream: string, work: () => Promise<JobOutcome>): Promise<JobOutcome> {
    if (this.stopped) return { outcome: 'dropped' };
    if (this.running < this.concurrency) this.running += 1;
    else await new Promise<void>((resolve) => this.slots.push(resolve)); // the releasing job hands its slot over
    if (this.stopped) return { outcome: 'dropped' };
    try {
      return await work();
    } catch (err) {
      this.options.onError?.(err, stream);
      return { outcome: 'failed', error: err };
    } finally {
      const next = this.slots.shift();
      if (next) next();
      else this.running -= 1;
    }
  }

  private async run(stream: string, trigger: CoverTrigger): Promise<JobOutcome> {
    const { repo, clock, checker } = this.options;
    let loaded = await repo.load(stream, coverFold);
    if (!checkOwed(loaded.state, trigger, clock.now())) return { outcome: 'done' };
    const subject = loaded.state;
    const { tenant } = productStreamParts(stream);
    const store = await repo.load(streams.store(tenant, subject.storeId), storeDecider);
    const allowed = store.state.input ? [...store.state.input.domains, ...(store.state.input.image_hosts ?? [])] : [];
    const verdict = await checker(subject.url, allowed);
    const checkedAt = clock.now().toISOString();
    const reasons: RejectionReason[] = verdict.reasons.map((r) =>
      r.field === undefined
        ? { code: r.code, message: r.message }
        : { code: r.code, field: r.field, message: r.message },
    );
    const checked: ProductEvent = {
      type: 'CoverChecked',
      data: { sku: subject.sku, url: subject.url, ok: verdict.ok, reasons, checked_at: checkedAt },
    };
    // In line with this process's writers of the product; a race with another process reads again, and a product
    // sent again, removed or checked meanwhile makes this result moot. Lost every race: the check is handed back.
    return repo.serialized(stream, async (attempt) => {
      if (attempt > 1) {
        loaded = await repo.load(stream, coverFold);
        if (loaded.state.lastChangeRevision !== subject.lastChangeRevision) return { outcome: 'done' };
      }
      // Through the repository: the product's state held for its next write gets the result folded in.
      const appended = await repo.append(stream, coverFold, loaded, [checked], {
        recorded_at: checkedAt,
        actor: 'system:cover-check',
      });
      return { outcome: 'done', position: appended.position };
    });
  }
}
