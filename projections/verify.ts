/**
 * The audit of the read models: every projector is replayed from the start of the log into a scratch store, then
 * each document of each projector's collections is compared with the live one. Every difference is reported with
 * the stream (and event) that last wrote the expected document, which is what explains it.
 *
 * The comparison is made at one position: the scratch replay first catches up without disturbing anything, then the
 * live runner is held between two units (reads keep being served) while the scratch store takes the last events up
 * to each projector's live checkpoint and the two are compared.
 */
import type { EventStore, RecordedEvent } from '../shared-schema/ports/event-store.js';
import type { Doc, ReadStore, ReadView } from '../shared-schema/ports/read-store.js';
import type { Projector } from './projector.js';
import { forBulkLoad, projectorCollections } from './parking.js';
import { replay } from './replay.js';
import type { RunnerGate } from './unit-gate.js';

export interface Difference {
  collection: string;
  id: string;
  /** missing: the log says it exists, the live model lacks it; unexpected: the reverse; different: both, unequal. */
  kind: 'missing' | 'unexpected' | 'different';
  /** Top-level fields whose values differ. */
  fields: string[];
  live: Doc | null;
  expected: Doc | null;
  /** The stream whose event last wrote (or deleted) the expected document; null when no event touched it. */
  stream: string | null;
  event: { position: number; type: string; op: 'put' | 'delete' } | null;
}

export interface VerifyReport {
  /** Position of the comparison for each projection. */
  positions: Record<string, number>;
  events_replayed: number;
  documents_compared: number;
  differences: Difference[];
}

export interface VerifyOptions {
  events: EventStore;
  /** The live read models (logical names). */
  live: ReadStore;
  /** An empty store the replay writes into. */
  scratch: ReadStore;
  projectors: readonly Projector[];
  gate: RunnerGate;
  pageSize?: number;
}

type Trace = { stream: string; position: number; type: string; op: 'put' | 'delete' };

export async function verifyReadModels(options: VerifyOptions): Promise<VerifyReport> {
  const { events, live, scratch, gate } = options;
  const projectors = options.projectors.filter((p) => p.collections.length > 0);
  // Large units: the scratch store is read by nobody before the comparison, and a unit's cost is mostly its commit.
  const pageSize = options.pageSize ?? 10_000;
  const traces = new Map<string, Trace>();
  let replayed = 0;
  const common = {
    pageSize,
    trace: (collection: string, id: string, e: RecordedEvent, op: 'put' | 'delete') =>
      traces.set(`${collection}\u0000${id}`, { stream: e.stream, position: e.position, type: e.type, op }),
    onStep: (s: { applied: number }) => {
      replayed += s.applied;
    },
  };
  // Only the indexes the projectors read through: the comparison reads documents in `_id` order, never by an index.
  await scratch.ensureCollections(projectors.flatMap(projectorCollections).map(forBulkLoad));
  const first = Math.min(...(await Promise.all(projectors.map((p) => live.getCheckpoint(p.name)))));
  await replay(events, scratch, projectors, { ...common, after: 0, upTo: first });

  return gate.whileHeld(async () => {
    const positions: Record<string, number> = {};
    for (const p of projectors) {
      positions[p.name] = await live.getCheckpoint(p.name);
      await replay(events, scratch, [p], { ...common, after: first, upTo: Math.max(first, positions[p.name]) });
    }
    const differences: Difference[] = [];
    let compared = 0;
    for (const p of projectors) {
      for (const c of p.collections) {
        compared += await compareCollection(live, scratch, c.name, pageSize, (d) => {
          const t = traces.get(`${c.name}\u0000${d.id}`) ?? null;
          differences.push({
            ...d,
            collection: c.name,
            stream: t?.stream ?? null,
            event: t ? { position: t.position, type: t.type, op: t.op } : null,
          });
        });
      }
    }
    return { positions, events_replayed: replayed, documents_compared: compared, differences };
  });
}

type Found = Pick<Difference, 'id' | 'kind' | 'fields' | 'live' | 'expected'>;

/** Merge-joins the two collections in `_id` order, page by page; returns how many ids were compared. */
async function compareCollection(
  live: ReadView,
  expected: ReadView,
  collection: string,
  pageSize: number,
  report: (d: Found) => void,
): Promise<number> {
  const a = pages(live, collection, pageSize)[Symbol.asyncIterator]();
  const b = pages(expected, collection, pageSize)[Symbol.asyncIterator]();
  let x = await a.next();
  let y = await b.next();
  let compared = 0;
  while (!x.done || !y.done) {
    compared += 1;
    if (y.done || (!x.done && x.value._id < y.value._id)) {
      report({ id: x.value!._id, kind: 'unexpected', fields: Object.keys(x.value!), live: x.value!, expected: null });
      x = await a.next();
    } else if (x.done || y.value._id < x.value._id) {
      report({ id: y.value._id, kind: 'missing', fields: Object.keys(y.value), live: null, expected: y.value });
      y = await b.next();
    } else {
      const fields = differingFields(x.value, y.value);
      if (fields.length > 0) report({ id: x.value._id, kind: 'different', fields, live: x.value, expected: y.value });
      x = await a.next();
      y = await b.next();
    }
  }
  return compared;
}

async function* pages(view: ReadView, collection: string, pageSize: number): AsyncGenerator<Doc, void> {
  let after: string | undefined;
  for (;;) {
    const rows = await view.find(collection, {
      orderBy: [{ field: '_id' }],
      limit: pageSize,
      ...(after === undefined ? {} : { after: [after] }),
    });
    yield* rows;
    if (rows.length < pageSize) return;
    after = rows[rows.length - 1]._id;
  }
}

function differingFields(a: Doc, b: Doc): string[] {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].filter((k) => canonical(a[k]) !== canonical(b[k])).sort();
}

/** JSON with object keys sorted, so that documents equal in content compare equal whatever their key order. */
export function canonical(value: unknown): string {
  if (value === undefined) return 'undefined';
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  const o = value as Record<string, unknown>;
  return `{${Object.keys(o)
    .filter((k) => o[k] !== undefined)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`)
    .join(',')}}`;
}
