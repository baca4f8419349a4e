/**
 * The operation history of the contract's Conventions: for every identified call, one entry with the result, the
 * references (store, SKU, job, order, event ids) and the NAMES of the top-level fields sent — never a value, a body,
 * a query string or a credential. A batch received (the 202 of `POST /products/batch`) and a batch processed (written
 * by the batch runner through `record`) are two entries. Entries start once the partner is activated (first key).
 *
 * Storage: the append-only collection `operation_history` (one document per entry, `_id` a time-ordered ULID, indexed
 * by partner, environment and `_id`), in a SQLite file of its own written by a worker thread (history-file.ts) or, on
 * MongoDB, in the read store. It is not a read model: no projector owns it and it is not derived from the log (reads
 * are not events), so rebuilds and audits leave it alone.
 *
 * Writing is best effort and happens after the answer is decided: `record` never throws and never delays an answer;
 * a failure is logged (without the entry's values beyond ids) and counted.
 */
import type { Logger } from 'pino';
import { ulid } from '../../shared-schema/domain/ids.js';
import type { Clock } from '../../shared-schema/ports/clock.js';
import type { CollectionSpec, Query, ReadStore } from '../../shared-schema/ports/read-store.js';
import type { Environment } from '../../shared-schema/domain/streams.js';
import type { CompletedRequest } from '../http/request-envelope.js';
import { PARTNERS, type PartnerDoc } from '../../shared-schema/read-models/partners.js';

export const HISTORY_COLLECTION = 'operation_history';
export const HISTORY_SPEC: CollectionSpec = {
  name: HISTORY_COLLECTION,
  indexes: [
    ['partner_id', '_id'],
    ['partner_id', 'env', '_id'],
  ],
};

/** The reference fields taken from route params and (writes) from the body's top level, values only of these. */
export const REFERENCE_FIELDS = ['store_id', 'sku', 'job_id', 'order_id', 'event_id'] as const;
export type HistoryRefs = Partial<Record<(typeof REFERENCE_FIELDS)[number], string>>;

export type HistoryKind = 'request' | 'batch_processed';

export type HistoryEntry = {
  _id: string;
  kind: HistoryKind;
  partner_id: string;
  env: Environment;
  key_id: string | null;
  request_id: string | null;
  method: string | null;
  /** Route template (`/products/:sku`), never the path as sent nor its query string. */
  route: string | null;
  /** HTTP status of the answer (requests); null for entries that are not answers. */
  status: number | null;
  /** Outcome of work done later (a batch processed: `done` / `failed`). */
  outcome: string | null;
  refs: HistoryRefs;
  /** Names of the top-level fields of the body sent. */
  fields: string[];
  /** Time from the injected clock. */
  at: string;
};

/** What the batch runner (or any later work) passes to `recordHistory`. */
export interface HistoryInput {
  kind: HistoryKind;
  partnerId: string;
  env: Environment;
  keyId?: string | null;
  requestId?: string | null;
  method?: string | null;
  route?: string | null;
  status?: number | null;
  outcome?: string | null;
  refs?: HistoryRefs;
  fields?: readonly string[];
}

/** Where entries go, several at a time; replaceable (tests inject a failing one). */
export interface HistorySink {
  append(entries: readonly HistoryEntry[]): Promise<void>;
}

const REF_VALUE = /^[A-Za-z0-9._:-]{1,128}$/;
const MAX_FIELDS = 64;

/** Where the history is kept: the sink entries go to and the store `readHistory` reads. */
export interface HistoryStore {
  sink: HistorySink;
  reads: ReadStore;
  close(): Promise<void>;
}

/** The history as a collection of the read store itself (MongoDB deployments; SQLite ones use history-file.ts). */
export async function readStoreHistory(reads: ReadStore): Promise<HistoryStore> {
  await reads.ensureCollections([HISTORY_SPEC]);
  return { sink: storeSink(reads), reads, close: async () => undefined };
}

/** Appends a group of entries in one unit of work of the read store (one commit, however many requests). */
export function storeSink(reads: ReadStore): HistorySink {
  return {
    async append(entries) {
      await reads.transact(async (tx) => {
        for (const entry of entries) await tx.put(HISTORY_COLLECTION, entry);
      });
    },
  };
}

const GROUP_MAX = 500;

/** Partners remembered as activated; past it the oldest is forgotten and read again by its next entry. */
export const MAX_ACTIVATED_REMEMBERED = 10_000;

/** An entry waiting for its group commit, with what it was made of (for a failure's log line) and who waits for it. */
type Queued = { entry: HistoryEntry; input: HistoryInput; settled: (() => void) | undefined };

export class HistoryWriter {
  /** Partners seen activated (activation is never undone), at most `maxActivated`, oldest first. */
  private readonly activated = new Set<string>();
  /** Activation lookups in flight (a partner not yet seen activated). */
  private readonly lookups = new Set<Promise<void>>();
  /** Entries waiting for the next group commit. */
  private queue: Queued[] = [];
  private flushing: Promise<void> | null = null;

  constructor(
    public sink: HistorySink,
    private readonly reads: ReadStore,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly onFailure: () => void = () => undefined,
    /** How long the first entry of a group waits for others (one commit per group). */
    private readonly groupMs = 10,
    private readonly maxActivated = MAX_ACTIVATED_REMEMBERED,
  ) {}

  /** Partners remembered as activated (the bound's test). */
  get activatedRemembered(): number {
    return this.activated.size;
  }

  /** The door hook: one entry per identified call, queued at once and written in the background. */
  readonly onCompleted = (request: CompletedRequest): void => {
    const caller = request.caller;
    if (!caller) return; // not identified
    this.accept(
      {
        kind: 'request',
        partnerId: caller.partnerId,
        env: caller.env,
        keyId: caller.keyId,
        requestId: request.requestId,
        method: request.method,
        route: request.route,
        status: request.status,
        refs: referencesOf(request),
        fields: request.write ? fieldNames(request.body) : [],
      },
      this.clock.now(),
    );
  };

  /**
   * Records one entry; never throws. Call it after the outcome is decided (the batch runner: once per job). The
   * promise settles once the entry is written (or its write failed, which is logged and counted).
   */
  record(input: HistoryInput): Promise<void> {
    return new Promise<void>((resolve) => this.accept(input, this.clock.now(), resolve));
  }

  /** Waits for the writes in flight (graceful shutdown, tests). */
  async flush(): Promise<void> {
    while (this.lookups.size > 0 || this.flushing) await Promise.all([...this.lookups, this.flushing]);
  }

  /** Queues the entry of an activated partner (synchronously once the partner was seen activated). */
  private accept(input: HistoryInput, at: Date, settled?: () => void): void {
    if (this.activated.has(input.partnerId)) return this.enqueue(input, at, settled);
    const lookup = this.isActivated(input.partnerId).then(
      (yes) => (yes ? this.enqueue(input, at, settled) : settled?.()),
      (err: unknown) => {
        this.failed(input, err);
        settled?.();
      },
    );
    this.lookups.add(lookup);
    void lookup.finally(() => this.lookups.delete(lookup));
  }

  /**
   * Group commit: entries queued within `groupMs` of the first, or while a write is in flight, go together in one
   * unit of work, so the history costs one commit per group, not one per request (answers never wait for it).
   */
  private enqueue(input: HistoryInput, at: Date, settled?: () => void): void {
    this.queue.push({ entry: toEntry(input, at), input, settled });
    this.flushing ??= new Promise<void>((r) => setTimeout(r, this.groupMs)).then(() => this.drain());
  }

  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        const group = this.queue.splice(0, GROUP_MAX);
        let failure: unknown;
        try {
          await this.sink.append(group.map((g) => g.entry));
        } catch (err) {
          failure = err ?? new Error('history sink failed');
        }
        for (const g of group) {
          if (failure !== undefined) this.failed(g.input, failure);
          g.settled?.();
        }
      }
    } finally {
      this.flushing = null;
    }
  }

  private failed(input: HistoryInput, err: unknown): void {
    this.onFailure();
    this.log.error(
      {
        err: errorSummary(err),
        partner_id: input.partnerId,
        request_id: input.requestId ?? undefined,
        kind: input.kind,
      },
      'history write failed',
    );
  }

  private async isActivated(partnerId: string): Promise<boolean> {
    const partner = await this.reads.get<PartnerDoc>(PARTNERS, partnerId);
    if (!partner?.activated_at) return false;
    this.activated.add(partnerId);
    if (this.activated.size > this.maxActivated) this.activated.delete(this.activated.values().next().value!);
    return true;
  }
}

function toEntry(input: HistoryInput, at: Date): HistoryEntry {
  return {
    _id: `h_${ulid(at.getTime())}`,
    kind: input.kind,
    partner_id: input.partnerId,
    env: input.env,
    key_id: input.keyId ?? null,
    request_id: input.requestId ?? null,
    method: input.method ?? null,
    route: input.route ?? null,
    status: input.status ?? null,
    outcome: input.outcome ?? null,
    refs: cleanRefs(input.refs ?? {}),
    fields: (input.fields ?? []).slice(0, MAX_FIELDS).map((f) => f.slice(0, 64)),
    at: at.toISOString(),
  };
}

/** References from the route params, then (writes) from the body's top-level reference fields, then a job id answered. */
function referencesOf(request: CompletedRequest): HistoryRefs {
  const refs: HistoryRefs = {};
  for (const f of REFERENCE_FIELDS) {
    const fromParam = request.params[f];
    const fromBody = request.write ? topLevel(request.body, f) : undefined;
    const fromAnswer = f === 'job_id' && request.write ? topLevel(request.answer, f) : undefined;
    const value = fromParam ?? fromBody ?? fromAnswer;
    if (value !== undefined) refs[f] = value;
  }
  return cleanRefs(refs);
}

function topLevel(body: unknown, field: string): string | undefined {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const v = (body as Record<string, unknown>)[field];
  return typeof v === 'string' ? v : undefined;
}

function cleanRefs(refs: HistoryRefs): HistoryRefs {
  const out: HistoryRefs = {};
  for (const f of REFERENCE_FIELDS) {
    const v = refs[f];
    if (typeof v === 'string' && REF_VALUE.test(v)) out[f] = v;
  }
  return out;
}

function fieldNames(body: unknown): string[] {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return [];
  return Object.keys(body);
}

function errorSummary(err: unknown): { message: string; name: string } {
  return err instanceof Error ? { name: err.name, message: err.message } : { name: 'Error', message: String(err) };
}

/** One page of a partner's history, newest first. */
export async function readHistory(
  reads: ReadStore,
  partnerId: string,
  options: { env?: Environment; limit: number; after?: string },
): Promise<{ entries: HistoryEntry[]; next_cursor: string | null }> {
  const where: Query['where'] = options.env ? { partner_id: partnerId, env: options.env } : { partner_id: partnerId };
  const query: Query = { where, orderBy: [{ field: '_id', dir: 'desc' }], limit: options.limit + 1 };
  if (options.after) query.after = [options.after];
  const rows = await reads.find<HistoryEntry>(HISTORY_COLLECTION, query);
  const more = rows.length > options.limit;
  const entries = more ? rows.slice(0, options.limit) : rows;
  const last = entries[entries.length - 1];
  return { entries, next_cursor: more && last ? Buffer.from(last._id).toString('base64url') : null };
}

export function decodeHistoryCursor(cursor: string): string | null {
  const id = Buffer.from(cursor, 'base64url').toString('utf8');
  return /^h_[0-9A-Z]{26}$/.test(id) ? id : null;
}
