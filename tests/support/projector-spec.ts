/**
 * Given events / then documents (`given(...events)`, `thenDocuments(collection, docs)`), for projectors, through the real projection machinery: the events are appended to
 * a SQLite event store in a temporary directory and the live `ProjectionRunner` (routing by category, units of work,
 * checkpoints, parking, fan-out pages) applies them to a SQLite read store. A test names events and documents; it
 * re-implements nothing of the runner.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { SqliteEventStore } from '../../infra/adapters/sqlite/event-store.js';
import { SqliteReadStore } from '../../infra/adapters/sqlite/read-store.js';
import { ProjectionRunner } from '../../projections/runner.js';
import type { Projector } from '../../projections/projector.js';
import type { EventMetadata } from '../../shared-schema/ports/event-store.js';
import type { Doc } from '../../shared-schema/ports/read-store.js';

/** An event of the log as a test writes it: its stream, type and data (metadata: `recorded_at` of the test). */
export interface GivenEvent {
  stream: string;
  type: string;
  data: unknown;
  metadata?: EventMetadata;
}

export const RECORDED_AT = '2026-01-01T00:00:00.000Z';
const CAUGHT_UP_MS = 30_000; // a bound on a stuck run only: the runner is told the position to reach

export class ProjectorSpec {
  private runner: ProjectionRunner | null = null;
  private head = 0;
  /** A runner error or a parked event: the spec fails on it rather than showing documents without the event. */
  private failure: unknown = null;

  private constructor(
    private readonly dir: string,
    readonly events: SqliteEventStore,
    readonly reads: SqliteReadStore,
    private readonly projectors: readonly Projector[],
  ) {}

  /** Empty stores in a temporary directory, and a runner for `projectors`; `close()` removes them. */
  static async open(...projectors: Projector[]): Promise<ProjectorSpec> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-projector-spec-'));
    const events = SqliteEventStore.open({ path: path.join(dir, 'events.db'), synchronous: 'NORMAL' });
    const reads = SqliteReadStore.open({ path: path.join(dir, 'read.db'), sweepIntervalMs: 0 });
    const spec = new ProjectorSpec(dir, events, reads, projectors);
    await spec.startRunner();
    return spec;
  }

  /** Appends the events in order (one append each), waits until the runner has committed them; their positions. */
  async given(...events: GivenEvent[]): Promise<number[]> {
    const positions: number[] = [];
    for (const e of events) {
      const metadata = e.metadata ?? { recorded_at: RECORDED_AT };
      this.head = (await this.events.appendToStream(e.stream, [{ type: e.type, data: e.data, metadata }])).position;
      positions.push(this.head);
    }
    await this.caughtUp();
    return positions;
  }

  /** Every document of `collection`, by `_id`. */
  documents<D extends Doc = Doc>(collection: string): Promise<D[]> {
    return this.reads.find<D>(collection, { orderBy: [{ field: '_id' }] });
  }

  /** The collection holds exactly these documents, compared whole (in `_id` order). */
  async thenDocuments(collection: string, expected: readonly Doc[]): Promise<void> {
    const sorted = [...expected].sort((a, b) => (a._id < b._id ? -1 : a._id > b._id ? 1 : 0));
    expect(await this.documents(collection), collection).to.deep.equal(sorted);
  }

  /** Every event applied again from the start of the log (checkpoints back to 0, a new runner), as after a replay. */
  async replayAll(): Promise<void> {
    await this.runner?.stop();
    await this.reads.transact(async (tx) => {
      for (const p of this.projectors) await tx.setCheckpoint(p.name, 0);
    });
    await this.startRunner();
  }

  async close(): Promise<void> {
    await this.runner?.stop();
    await this.events.close();
    await this.reads.close();
    fs.rmSync(this.dir, { recursive: true, force: true, maxRetries: 5 });
  }

  private async startRunner(): Promise<void> {
    this.runner = new ProjectionRunner(this.events, this.reads, this.projectors, {
      onError: (err) => (this.failure = err),
      onParked: (parked, err) => (this.failure = err ?? parked),
    });
    await this.runner.start();
    await this.caughtUp();
  }

  private async caughtUp(): Promise<void> {
    const reached = await this.runner!.waitFor(this.head, CAUGHT_UP_MS);
    if (this.failure !== null)
      throw this.failure instanceof Error
        ? this.failure
        : new Error(`projection failure: ${JSON.stringify(this.failure)}`);
    if (!reached) throw new Error(`the projections did not reach position ${this.head}`);
  }
}
