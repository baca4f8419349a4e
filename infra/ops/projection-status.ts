/** Each projection's checkpoint, lag and state (admin `GET /admin/v1/projections`, metrics, readiness). */
import type { EventStore } from '../../shared-schema/ports/event-store.js';
import type { GenerationalReadStore } from '../../projections/generations.js';
import type { ProjectionRebuilder, RebuildProgress } from '../../projections/rebuild.js';
import { countParked } from '../../projections/parking.js';

export interface ProjectionStatus {
  name: string;
  /** Generation serving reads (0: the bare collection names). */
  generation: number;
  collections: string[];
  checkpoint: number;
  head: number;
  /** Head minus checkpoint (log positions). */
  lag_positions: number;
  /** Events of the projection's categories after its checkpoint, counted up to `lag_cap`. */
  lag_events: number;
  lag_capped: boolean;
  /** live: within the lag bound; behind: beyond it; rebuilding: a new generation is being built. */
  state: 'live' | 'behind' | 'rebuilding';
  /** Events this projection could not apply and parked (GET /admin/v1/projections/parked); > 0: degraded. */
  parked_events: number;
  rebuild: RebuildProgress | null;
}

/** Counts events after `position` in `categories`, stopping at `cap`. */
export async function eventsAfter(
  events: EventStore,
  position: number,
  categories: readonly string[],
  cap: number,
): Promise<number> {
  const page = await events.readAll({ afterPosition: position, maxCount: cap, categories });
  return page.length;
}

export async function projectionStatuses(
  events: EventStore,
  reads: GenerationalReadStore,
  rebuilder: ProjectionRebuilder,
  options: { lagBound: number; lagCap?: number },
): Promise<ProjectionStatus[]> {
  const head = await events.headPosition();
  const cap = Math.max(options.lagCap ?? 1000, options.lagBound + 1);
  const out: ProjectionStatus[] = [];
  for (const p of rebuilder.projectors) {
    const checkpoint = await reads.getCheckpoint(p.name);
    const lag = await eventsAfter(events, checkpoint, p.categories, cap);
    const rebuild = rebuilder.progress(p.name);
    out.push({
      name: p.name,
      generation: reads.generationOf(p.name),
      collections: p.collections.map((c) => reads.resolve(c.name)),
      checkpoint,
      head,
      lag_positions: Math.max(0, head - checkpoint),
      lag_events: lag,
      lag_capped: lag >= cap,
      state: rebuilder.running(p.name) ? 'rebuilding' : lag > options.lagBound ? 'behind' : 'live',
      parked_events: await countParked(reads, p.name),
      rebuild,
    });
  }
  return out;
}
