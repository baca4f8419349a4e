/** Settings of the operator surface, from the environment, validated like infra/wiring/config.ts (one message per bad value). */
import { ConfigError } from '../wiring/config.js';

export interface OperationsSettings {
  /** Readiness fails while a projection has more than this many events left to apply. */
  readyMaxLagEvents: number;
  /**
   * Events per unit of work of a rebuild's catch-up (large: nothing reads the new generation before the switch, and
   * a unit's cost is mostly its commit and the pages it dirties, shared by its events).
   */
  rebuildPageSize: number;
  /** Speed limit of a rebuild's catch-up in events per second (0: none). */
  rebuildMaxEventsPerSecond: number;
  /** How long an old generation is kept after a switch before its collections are dropped. */
  generationDropGraceMs: number;
  /** How often a process re-reads the generation map besides the switch message (0: only on the message). */
  generationRefreshMs: number;
  /** When set, `GET /metrics` needs `Authorization: Bearer <METRICS_TOKEN>` (never the admin token). */
  metricsToken: string | undefined;
  /** SIGTERM: the process exits within this bound. */
  shutdownTimeoutMs: number;
  /** Tests only: awaited once a rebuild has caught up, before it switches (holds a rebuild in flight). */
  rebuildBeforeSwitch?: (projection: string) => Promise<void>;
}

export const DEFAULT_OPERATIONS_SETTINGS: OperationsSettings = {
  readyMaxLagEvents: 1000,
  rebuildPageSize: 10_000,
  rebuildMaxEventsPerSecond: 0,
  generationDropGraceMs: 10_000,
  generationRefreshMs: 5_000,
  metricsToken: undefined,
  shutdownTimeoutMs: 10_000,
};

export function loadOperationsSettings(env: NodeJS.ProcessEnv = process.env): OperationsSettings {
  const problems: string[] = [];
  const int = (name: string, fallback: number, min: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const n = Number(raw);
    if (!Number.isSafeInteger(n) || n < min) problems.push(`${name} must be an integer >= ${min}, got "${raw}"`);
    return n;
  };
  const metricsToken = env.METRICS_TOKEN || undefined;
  if (metricsToken !== undefined && metricsToken.length < 16)
    problems.push('METRICS_TOKEN must be at least 16 characters');
  if (metricsToken !== undefined && metricsToken === env.ADMIN_TOKEN)
    problems.push('METRICS_TOKEN must differ from ADMIN_TOKEN');
  const d = DEFAULT_OPERATIONS_SETTINGS;
  const settings: OperationsSettings = {
    readyMaxLagEvents: int('READY_MAX_LAG_EVENTS', d.readyMaxLagEvents, 0),
    rebuildPageSize: int('REBUILD_PAGE_SIZE', d.rebuildPageSize, 1),
    rebuildMaxEventsPerSecond: int('REBUILD_MAX_EVENTS_PER_SECOND', d.rebuildMaxEventsPerSecond, 0),
    generationDropGraceMs: int('GENERATION_DROP_GRACE_MS', d.generationDropGraceMs, 0),
    generationRefreshMs: int('GENERATION_REFRESH_MS', d.generationRefreshMs, 0),
    metricsToken,
    shutdownTimeoutMs: int('SHUTDOWN_TIMEOUT_MS', d.shutdownTimeoutMs, 1000),
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return settings;
}
