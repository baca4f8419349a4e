/**
 * Audit tools: the export of one partner's events (NDJSON, in log order, with positions and metadata) and the
 * verification of every read model against a fresh replay of the log into a scratch store.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { EventStore, RecordedEvent } from '../../shared-schema/ports/event-store.js';
import type { ReadStore } from '../../shared-schema/ports/read-store.js';
import type { Environment } from '../../shared-schema/domain/streams.js';
import type { Projector } from '../../projections/projector.js';
import type { RunnerGate } from '../../projections/unit-gate.js';
import { verifyReadModels, type VerifyReport } from '../../projections/verify.js';
import { SqliteReadStore } from '../adapters/sqlite/read-store.js';

/** Fields never exported (a key hash identifies a credential; auditors need the key id, which is kept). */
const WITHHELD = new Set(['key_hash']);

/** True when the event belongs to the partner (and environment, when given). */
export function belongsTo(event: RecordedEvent, partnerId: string, env?: Environment): boolean {
  const dash = event.stream.indexOf('-');
  const body = event.stream.slice(dash + 1);
  if (event.stream === `partner-${partnerId}`) {
    const e = (event.data as { environment?: unknown } | null)?.environment;
    return env === undefined || e === undefined || e === env;
  }
  const [streamEnv, streamPartner] = body.split(':');
  if (streamEnv !== 'live' && streamEnv !== 'test') return false;
  if (env !== undefined && streamEnv !== env) return false;
  if (streamPartner === partnerId) return true;
  // Reservation streams keyed by something else (a CNPJ) name their holder in the data.
  return (event.data as { partner_id?: unknown } | null)?.partner_id === partnerId;
}

function withheld(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withheld);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>)
      .filter(([k]) => !WITHHELD.has(k))
      .map(([k, v]) => [k, withheld(v)]),
  );
}

/** NDJSON lines, one event each, in log order. Reads the log page by page (never all of it at once). */
export async function* exportPartner(
  events: EventStore,
  partnerId: string,
  env?: Environment,
  pageSize = 1000,
): AsyncGenerator<string> {
  let after = 0;
  for (;;) {
    const page = await events.readAll({ afterPosition: after, maxCount: pageSize });
    for (const e of page) {
      if (!belongsTo(e, partnerId, env)) continue;
      yield (
        JSON.stringify({
          position: e.position,
          stream: e.stream,
          revision: e.revision,
          id: e.id,
          type: e.type,
          data: withheld(e.data),
          metadata: e.metadata,
        }) + '\n'
      );
    }
    if (page.length < pageSize) return;
    after = page[page.length - 1].position;
  }
}

/** A store to replay into, and how to get rid of it. */
export interface ScratchStore {
  store: ReadStore;
  dispose(): Promise<void>;
}

/** The embedded default's scratch store: a temporary SQLite file, removed afterwards. */
export async function sqliteScratch(): Promise<ScratchStore> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-audit-'));
  const store = SqliteReadStore.open({ path: path.join(dir, 'scratch.db'), synchronous: 'OFF', sweepIntervalMs: 0 });
  return {
    store,
    async dispose() {
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function auditVerify(options: {
  events: EventStore;
  live: ReadStore;
  gate: RunnerGate;
  projectors: readonly Projector[];
  scratch: () => Promise<ScratchStore>;
}): Promise<VerifyReport> {
  const scratch = await options.scratch();
  try {
    return await verifyReadModels({
      events: options.events,
      live: options.live,
      scratch: scratch.store,
      projectors: options.projectors,
      gate: options.gate,
    });
  } finally {
    await scratch.dispose();
  }
}
