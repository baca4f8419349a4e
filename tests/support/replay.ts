/**
 * A pure rebuild of the read models, to check the live ones: open a DATA_DIR's event log read-only, run the same
 * PROJECTORS through a fresh ProjectionRunner into a new temporary SqliteReadStore until it reaches the head of the
 * log, and compare every document of every projector collection with the live read store (also opened read-only).
 * Safe while the service runs on the same DATA_DIR, as long as nothing writes (or the head moves on meanwhile).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import Database from 'better-sqlite3';
import type { Doc } from '../../shared-schema/ports/read-store.js';
import type { Projector } from '../../projections/projector.js';
import { ProjectionRunner } from '../../projections/runner.js';
import { PROJECTORS } from '../../infra/wiring/service.js';
import { SqliteEventStore } from '../../infra/adapters/sqlite/event-store.js';
import { SqliteReadStore } from '../../infra/adapters/sqlite/read-store.js';
import { SqliteConnection } from '../../infra/adapters/sqlite/read-store-connection.js';

/**
 * Fields that may differ between a live read model and its replay. None today: every projector derives its
 * documents from the events alone (times come from the events' `recorded_at`, never from a clock).
 */
export const VOLATILE_FIELDS: Record<string, readonly string[]> = {};

export interface Difference {
  collection: string;
  id: string;
  live: Doc | null;
  replayed: Doc | null;
}

export interface ReplayReport {
  /** Head position of the log when the replay started. */
  head: number;
  /** Documents compared, over all collections. */
  documents: number;
  collections: Record<string, number>;
  /** Checkpoints of the live read store, by projector. */
  liveCheckpoints: Record<string, number>;
  differences: Difference[];
}

function openLive(dataDir: string): SqliteConnection {
  return new SqliteConnection(new Database(path.join(dataDir, 'read.db'), { readonly: true, fileMustExist: true }));
}

/** Head of the log and the live checkpoint of each projector (to wait until the live service has caught up). */
export async function projectionProgress(dataDir: string, projectors: readonly Projector[] = PROJECTORS) {
  const events = SqliteEventStore.open({ path: path.join(dataDir, 'events.db'), readOnly: true });
  const live = openLive(dataDir);
  try {
    const head = await events.headPosition();
    const checkpoints = Object.fromEntries(projectors.map((p) => [p.name, live.getCheckpoint(p.name)]));
    return { head, checkpoints, caughtUp: Object.values(checkpoints).every((c) => c >= head) };
  } finally {
    live.db.close();
    await events.close();
  }
}

function withoutVolatile(collection: string, doc: Doc | null): Doc | null {
  const volatile = VOLATILE_FIELDS[collection];
  if (!doc || !volatile) return doc;
  const copy: Doc = { ...doc };
  for (const f of volatile) delete copy[f];
  return copy;
}

/** Rebuilds every projector's collections from the log of `dataDir` and compares them with the live read store. */
export async function compareWithReplay(
  dataDir: string,
  options: { projectors?: readonly Projector[]; timeoutMs?: number } = {},
): Promise<ReplayReport> {
  const projectors = options.projectors ?? PROJECTORS;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-replay-'));
  const events = SqliteEventStore.open({ path: path.join(dataDir, 'events.db'), readOnly: true });
  const replayed = SqliteReadStore.open({ path: path.join(tmp, 'read.db'), sweepIntervalMs: 0 });
  const live = openLive(dataDir);
  try {
    const head = await events.headPosition();
    const runner = new ProjectionRunner(events, replayed, projectors);
    await runner.start();
    const done = await runner.waitFor(head, options.timeoutMs ?? 30_000);
    await runner.stop();
    if (!done) throw new Error(`the replay did not reach position ${head} in time (at ${runner.position})`);

    const report: ReplayReport = { head, documents: 0, collections: {}, liveCheckpoints: {}, differences: [] };
    for (const p of projectors) report.liveCheckpoints[p.name] = live.getCheckpoint(p.name);
    for (const spec of projectors.flatMap((p) => p.collections)) {
      const liveDocs = new Map(live.find(spec.name).map((d) => [d._id, d]));
      const replayDocs = new Map((await replayed.find(spec.name)).map((d) => [d._id, d]));
      const ids = new Set([...liveDocs.keys(), ...replayDocs.keys()]);
      report.collections[spec.name] = ids.size;
      report.documents += ids.size;
      for (const id of [...ids].sort()) {
        const a = withoutVolatile(spec.name, liveDocs.get(id) ?? null);
        const b = withoutVolatile(spec.name, replayDocs.get(id) ?? null);
        if (!isDeepStrictEqual(a, b)) report.differences.push({ collection: spec.name, id, live: a, replayed: b });
      }
    }
    return report;
  } finally {
    live.db.close();
    await replayed.close();
    await events.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}
