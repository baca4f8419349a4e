/**
 * `Idempotency-Key` on writes (contract + DECISIONS.md): the same key with the same route and body within 24 h
 * replays the first 2xx answer without writing; another route or body → 422; a key above 100 characters → 422.
 * Two requests with one key at once: the second waits for the first (up to 10 s), then 409 `idempotency_in_flight`.
 * Only 2xx answers are stored; an error releases the key so that a corrected repeat runs for real.
 *
 * Records live in the read store (`idempotency` collection, atomic insert-if-absent), scoped to partner and
 * environment, so every replica of the command door shares them.
 */
import { randomUUID } from 'node:crypto';
import { ProblemError, fieldError, invalidField } from '../shared-schema/contract/problems.js';
import { sha256Hex } from '../shared-schema/domain/ids.js';
import { canonicalJson } from '../shared-schema/http/json.js';
import type { Clock } from '../shared-schema/ports/clock.js';
import type { CollectionSpec, ReadStore } from '../shared-schema/ports/read-store.js';
import { callerOf, tenantKey, type DoorContext } from '../shared-schema/http/context.js';

export const IDEMPOTENCY_COLLECTION: CollectionSpec = { name: 'idempotency', indexes: [], expires: true };

const TTL_MS = 24 * 60 * 60 * 1000;
const WAIT_MS = 10_000;
/** A pending record older than this (real time) belongs to a crashed request and may be taken over. */
const ABANDONED_MS = 60_000;

type IdempotencyRecord = {
  _id: string;
  state: 'pending' | 'done';
  fingerprint: string;
  owner: string;
  created_at: string;
  expires_at: string;
  started_ms: number;
  status?: number;
  body?: unknown;
  headers?: Record<string, string>;
};

export interface StoredResponse {
  status: number;
  body: unknown;
  headers: Record<string, string>;
}

export class Idempotency {
  constructor(
    private readonly store: ReadStore,
    private readonly clock: Clock,
  ) {}

  /**
   * Runs `work` under the request's `Idempotency-Key` (if any) and returns the answer to send: the stored one on a
   * replay, or the fresh one (stored when 2xx).
   */
  async run(
    ctx: DoorContext,
    body: unknown,
    work: () => Promise<StoredResponse>,
  ): Promise<StoredResponse & { replayed: boolean }> {
    const key = ctx.get('Idempotency-Key');
    if (!key) return { ...(await work()), replayed: false };
    if (key.length > 100)
      throw invalidField('Idempotency-Key', 'max_length', 'Idempotency-Key takes at most 100 characters.');
    const caller = callerOf(ctx);
    const id = `${tenantKey(caller)}:${sha256Hex(key)}`;
    const fingerprint = sha256Hex(`${ctx.method} ${ctx.path}\n${canonicalJson(body)}`);
    const owner = randomUUID();
    const deadline = Date.now() + WAIT_MS;
    for (;;) {
      const now = this.clock.now();
      const fresh: IdempotencyRecord = {
        _id: id,
        state: 'pending',
        fingerprint,
        owner,
        created_at: now.toISOString(),
        expires_at: new Date(now.getTime() + TTL_MS).toISOString(),
        started_ms: Date.now(),
      };
      if (await this.store.insertIfAbsent(IDEMPOTENCY_COLLECTION.name, fresh)) return this.execute(fresh, work);
      const existing = await this.store.get<IdempotencyRecord>(IDEMPOTENCY_COLLECTION.name, id);
      if (!existing) continue; // released meanwhile: try again
      const expired = Date.parse(existing.expires_at) <= now.getTime();
      const abandoned = existing.state === 'pending' && Date.now() - existing.started_ms > ABANDONED_MS;
      if (expired || abandoned) {
        if (
          await this.store.replaceIf(IDEMPOTENCY_COLLECTION.name, fresh, {
            owner: existing.owner,
            state: existing.state,
          })
        ) {
          return this.execute(fresh, work);
        }
        continue;
      }
      if (existing.fingerprint !== fingerprint) {
        throw new ProblemError(422, [
          fieldError(
            'Idempotency-Key',
            'idempotency_mismatch',
            'This Idempotency-Key was used with another route or body.',
          ),
        ]);
      }
      if (existing.state === 'done') {
        return { status: existing.status!, body: existing.body, headers: existing.headers ?? {}, replayed: true };
      }
      if (Date.now() >= deadline) {
        throw new ProblemError(409, [
          fieldError(
            'Idempotency-Key',
            'idempotency_in_flight',
            'A request with this Idempotency-Key is still running.',
          ),
        ]);
      }
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  private async execute(
    record: IdempotencyRecord,
    work: () => Promise<StoredResponse>,
  ): Promise<StoredResponse & { replayed: boolean }> {
    let response: StoredResponse;
    try {
      response = await work();
    } catch (err) {
      await this.release(record);
      throw err;
    }
    if (response.status >= 200 && response.status < 300) {
      const done: IdempotencyRecord = {
        ...record,
        state: 'done',
        status: response.status,
        body: response.body,
        headers: response.headers,
      };
      await this.store.replaceIf(IDEMPOTENCY_COLLECTION.name, done, { owner: record.owner });
    } else {
      await this.release(record);
    }
    return { ...response, replayed: false };
  }

  private async release(record: IdempotencyRecord): Promise<void> {
    const current = await this.store.get<IdempotencyRecord>(IDEMPOTENCY_COLLECTION.name, record._id);
    if (current && current.owner === record.owner) await this.store.remove(IDEMPOTENCY_COLLECTION.name, record._id);
  }
}
