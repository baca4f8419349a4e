/**
 * Prometheus metrics of the service (prom-client, on a registry passed in — never the global one), served on the
 * admin port at `GET /metrics`. Labels never carry partner ids, keys or paths as sent: routes are templates.
 *
 * Producers elsewhere feed it through small functions: the doors' `onCompleted` and `onRateRefused`, `countCoverCheck`
 * (the cover-check reactor), `registerQueue` (reactors report their queue depths, and the dead letters of a
 * messaging work queue, by callback), and the projection status (read at scrape time).
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { CompletedRequest } from '../http/request-envelope.js';
import { SEARCH_PATH, shopperRoute } from '../../shared-schema/http/routes.js';

export type Door = 'command' | 'query';

/** The shopper's results page: a search like SEARCH_PATH, timed with it. */
const SEARCH_PAGE = '/busca';

export interface ProjectionSample {
  name: string;
  checkpoint: number;
  lag: number;
  /** Events parked (not applied) by this projection. */
  parked: number;
}

export class ServiceMetrics {
  readonly registry: Registry;
  private readonly requests: Counter<'door' | 'method' | 'route' | 'status'>;
  private readonly latency: Histogram<'door' | 'method' | 'route' | 'status'>;
  private readonly searchLatency: Histogram<'route' | 'status'>;
  private readonly refusals: Counter<'door' | 'kind'>;
  private readonly coverChecks: Counter<'outcome'>;
  private readonly historyFailures: Counter<string>;
  private readonly subscriptionStops: Counter<'subscriber'>;
  private readonly queues = new Map<string, () => number | Promise<number>>();
  private readonly deadLetters = new Map<string, () => number | Promise<number>>();
  private projections: () => Promise<{ head: number; projections: ProjectionSample[] }> = async () => ({
    head: 0,
    projections: [],
  });

  constructor(registry: Registry, options: { defaultMetrics?: boolean } = {}) {
    this.registry = registry;
    if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: registry });
    const labelNames = ['door', 'method', 'route', 'status'] as const;
    this.requests = new Counter({
      name: 'pc_http_requests_total',
      help: 'Requests answered by the partner API, by route template and status.',
      labelNames,
      registers: [registry],
    });
    this.latency = new Histogram({
      name: 'pc_http_request_duration_seconds',
      help: 'Time to answer a partner API request.',
      labelNames,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    });
    this.searchLatency = new Histogram({
      name: 'pc_search_duration_seconds',
      help: 'Time to answer a shopper search (/api/search and the results page /busca), by route and status.',
      labelNames: ['route', 'status'],
      buckets: [0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    });
    this.refusals = new Counter({
      name: 'pc_rate_brake_refusals_total',
      help: 'Requests refused by the rate brake (429).',
      labelNames: ['door', 'kind'],
      registers: [registry],
    });
    this.coverChecks = new Counter({
      name: 'pc_cover_checks_total',
      help: 'Cover checks by outcome.',
      labelNames: ['outcome'],
      registers: [registry],
    });
    this.subscriptionStops = new Counter({
      name: 'pc_subscription_stops_total',
      help: 'Event-store subscriptions that ended on an error that retrying cannot cure (see the error log).',
      labelNames: ['subscriber'],
      registers: [registry],
    });
    this.historyFailures = new Counter({
      name: 'pc_history_write_failures_total',
      help: 'Operation history entries that could not be written.',
      registers: [registry],
    });
    registerQueueGauges(registry, this.queues, this.deadLetters);
    registerProjectionGauges(registry, () => this.projections());
  }

  /**
   * Door hook: one observation per answered request, labelled by its route template (a partner route, else a
   * shopper route's pattern, else `unmatched`: never the path as sent, so the label values stay few).
   */
  requestObserver(door: Door): (request: CompletedRequest) => void {
    return (r) => this.observe(door, r.route ?? shopperRoute(r.path) ?? 'unmatched', r.method, r.status, r.ms);
  }

  /** The redirector's hook (command-api/redirector.ts `onAnswered`): counted with the command door's requests. */
  readonly redirectAnswered = (a: { route: string; method: string; status: number; ms: number }): void => {
    this.observe('command', a.route, a.method, a.status, a.ms);
  };

  private observe(door: Door, route: string, method: string, status: number, ms: number): void {
    const labels = { door, method, route, status: String(status) };
    this.requests.inc(labels);
    this.latency.observe(labels, ms / 1000);
    if (route === SEARCH_PATH || route === SEARCH_PAGE)
      this.searchLatency.observe({ route, status: labels.status }, ms / 1000);
  }

  /** Door hook: `onRateRefused`. */
  rateRefused(door: Door): (kind: string) => void {
    return (kind) => this.refusals.inc({ door, kind });
  }

  /** The cover-check reactor calls this once per check, with its outcome (`accepted`, `image_unreachable`, …). */
  readonly countCoverCheck = (outcome: string): void => {
    this.coverChecks.inc({ outcome });
  };

  /**
   * Reactors register the depth of their queue (and, for a messaging work queue, its dead letters); the gauges call
   * them at each scrape. Returns an unregister function.
   */
  readonly registerQueue = (
    queue: string,
    depth: () => number | Promise<number>,
    deadLetters?: () => number | Promise<number>,
  ): (() => void) => {
    this.queues.set(queue, depth);
    if (deadLetters) this.deadLetters.set(queue, deadLetters);
    return () => {
      if (this.queues.get(queue) === depth) this.queues.delete(queue);
      if (deadLetters && this.deadLetters.get(queue) === deadLetters) this.deadLetters.delete(queue);
    };
  };

  readonly subscriptionStopped = (subscriber: string): void => {
    this.subscriptionStops.inc({ subscriber });
  };

  readonly historyWriteFailed = (): void => {
    this.historyFailures.inc();
  };

  /** Where the projection gauges read from (set by the wiring). */
  setProjectionSource(source: () => Promise<{ head: number; projections: ProjectionSample[] }>): void {
    this.projections = source;
  }

  async text(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}

export function newServiceMetrics(options: { defaultMetrics?: boolean } = {}): ServiceMetrics {
  return new ServiceMetrics(new Registry(), options);
}

/** The work queues' depth and dead letters, one gauge value per registered queue, read at each scrape. */
function registerQueueGauges(
  registry: Registry,
  queues: ReadonlyMap<string, () => number | Promise<number>>,
  deadLetters: ReadonlyMap<string, () => number | Promise<number>>,
): void {
  const perQueue = (name: string, help: string, sources: ReadonlyMap<string, () => number | Promise<number>>) =>
    new Gauge({
      name,
      help,
      labelNames: ['queue'],
      registers: [registry],
      async collect() {
        this.reset();
        for (const [queue, read] of sources) {
          try {
            this.set({ queue }, await read());
          } catch {
            /* a failing callback leaves its queue out of this scrape */
          }
        }
      },
    });
  perQueue(
    'pc_work_queue_depth',
    'Items waiting in a work queue (job and cover-check queues), as reported by their reactors.',
    queues,
  );
  perQueue(
    'pc_work_queue_dead_letters',
    'Items of a work queue that failed every delivery and wait for the operator (list and requeue them through the admin API).',
    deadLetters,
  );
}

/** Each projection's checkpoint, lag and parked events, and the log's head, read at each scrape. */
function registerProjectionGauges(
  registry: Registry,
  projections: () => Promise<{ head: number; projections: ProjectionSample[] }>,
): void {
  // prom-client collects every metric in parallel: the projection gauges share one status read per scrape.
  let inFlight: Promise<{ head: number; projections: ProjectionSample[] }> | null = null;
  const status = () => {
    if (!inFlight) {
      inFlight = projections();
      void inFlight.finally(() => (inFlight = null)).catch(() => undefined);
    }
    return inFlight;
  };
  const perProjection: [name: string, help: string, value: (p: ProjectionSample) => number][] = [
    ['pc_projection_position', 'Checkpoint (log position) of each projection.', (p) => p.checkpoint],
    ['pc_projection_lag_positions', 'Log head minus the projection checkpoint.', (p) => p.lag],
    [
      'pc_projection_parked_events',
      'Events a projection could not apply and parked for the operator (list and retry them through the admin API).',
      (p) => p.parked,
    ],
  ];
  for (const [name, help, value] of perProjection) {
    new Gauge({
      name,
      help,
      labelNames: ['projection'],
      registers: [registry],
      async collect() {
        const s = await status();
        this.reset();
        for (const p of s.projections) this.set({ projection: p.name }, value(p));
      },
    });
  }
  new Gauge({
    name: 'pc_event_log_head_position',
    help: 'Position of the last event of the log.',
    registers: [registry],
    async collect() {
      this.set((await status()).head);
    },
  });
}
