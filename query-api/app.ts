/**
 * The query door: GET/HEAD from the read models, behind the front both doors share (infra/http/front-door.ts:
 * request id → 401 → 429 → route → 403). Then, here: read-your-writes (wait, bounded, until the projections have
 * passed the last position this partner and environment wrote), query validation (422, every field) and the read.
 */
import { tenantKey, type DoorContext, type DoorMiddleware, type DoorRoutes } from '../shared-schema/http/context.js';
import { pathParamErrors } from '../shared-schema/http/parameters.js';
import { invalid, notFound } from '../shared-schema/contract/problems.js';
import { API_PREFIX, routeKey, type RouteSpec } from '../shared-schema/http/routes.js';
import type { ReadStore } from '../shared-schema/ports/read-store.js';
import type { Messaging } from '../shared-schema/ports/messaging.js';
import type { Clock } from '../shared-schema/ports/clock.js';
import type { CursorSecret } from '../shared-schema/http/pagination.js';
import { queryValidator, type Validator } from '../shared-schema/contract/validation.js';
import type { JsonSchema } from '../shared-schema/contract/schemas/common.js';
import { shopperRoutes } from './public/routes.js';
import { feedRoutes } from './feeds/routes.js';
import { portalRoutes } from './portal/routes.js';
import type { EventStore } from '../shared-schema/ports/event-store.js';
import type { ProductSearch } from '../shared-schema/shopper/search-policy.js';
import type { SettledWatermark } from './ledger.js';
import type { FeedPace } from './feeds/pace.js';

export interface QueryDeps {
  reads: ReadStore;
  messaging: Messaging;
  clock: Clock;
  publicBaseUrl: string;
  /** Resolves true once every projection has committed `position` (false after the timeout). */
  waitForPosition: (position: number, timeoutMs: number) => Promise<boolean>;
  /**
   * The head of the event log now, with no append still being recorded before it (the event-store port's
   * `recordedHead`, else `headPosition`), as this process sees the log: the ledger's reads of a window that has
   * ended wait until the projections have committed it (routes/ledger.ts `untilLedgerSettled`).
   */
  logHead: () => Promise<number>;
  /**
   * Records every 48 h lapse due at or before `at` (the freshness reactor's own decision on each product: a lapse is
   * never recorded twice) and resolves with the highest log position it appended, 0 when none. The full feed calls
   * it before reading at `at` (feeds/lapses.ts); absent, the feed reads without it.
   */
  recordDueLapses?: (at: Date) => Promise<number>;
  /** The zlib level of the full feed sent gzipped (FEED_GZIP_LEVEL). Default DEFAULT_FEED_GZIP_LEVEL (shared-schema/feeds/limits.ts). */
  feedGzipLevel?: number;
  /** The process's budget of offers a second for the full feed (FEED_OFFERS_PER_SECOND); absent, unpaced. */
  feedPace?: FeedPace;
  /**
   * How far, by the service clock, the log is known projected (query-api/ledger.ts): a read of a window ending at or
   * before it skips `logHead`. One per query process; absent, every read of an ended window reads the head.
   */
  ledgerSettled?: SettledWatermark;
  /** How long a read waits for `logHead` to be projected before it answers 503. Default 5000 ms. */
  logWaitTimeoutMs?: number;
  /** Signs the page cursors this door hands out and checks those it is sent (shared-schema/http/pagination.ts). */
  cursorSecret: CursorSecret;
  /**
   * The shopper search's reads and ranking on the offers it holds (the embedded default:
   * infra/adapters/sqlite/held-search.ts), at the clock time this door passes; absent, they read the documents from
   * `reads`.
   */
  productSearch?: ProductSearch;
  /** The event log, for the history of a product in the partner portal (portal/pages.ts); absent, none is shown. */
  events?: Pick<EventStore, 'readStream'>;
}

/** A read route of the contract, declared once: what the front door matches and authorizes, its query, its read. */
export interface ReadRoute extends RouteSpec {
  method: 'GET';
  query: JsonSchema;
  handle: (ctx: DoorContext, query: Record<string, unknown>, deps: QueryDeps) => Promise<unknown>;
}

export interface PublicDocument {
  type: string;
  body: string;
  /** The same document as JSON, for a client that prefers `application/json` (problem pages). */
  json?: string;
  /** Headers of its own, over the doors' defaults (a page that runs our own scripts needs its own policy). */
  headers?: Readonly<Record<string, string>>;
}

export interface QueryDoorOptions {
  deps: QueryDeps;
  routes: readonly ReadRoute[];
  /** The public document at a path under /v1 (`/openapi.json`, `/guia.md`, …), if there is one. */
  publicDocument: (path: string) => PublicDocument | undefined;
  readYourWritesTimeoutMs?: number;
}

const validators = new WeakMap<JsonSchema, Validator<unknown>>();
function validatorFor(schema: JsonSchema): Validator<unknown> {
  let v = validators.get(schema);
  if (!v) {
    v = queryValidator<unknown>(schema);
    validators.set(schema, v);
  }
  return v;
}

export function queryDoor(options: QueryDoorOptions): DoorRoutes {
  const { deps } = options;
  const handlers = new Map(options.routes.map((r) => [routeKey(r), r]));
  return {
    // Outside /v1, no key: the shopper's routes (/, /busca, /api/search, /p/…), the channel feeds (/feeds/…) and the
    // partner portal (/portal…).
    public: publicRoutes(deps),
    routes: async (ctx: DoorContext) => {
      const doc = options.publicDocument(ctx.path.slice(API_PREFIX.length));
      if (doc) {
        const asJson = doc.json !== undefined && ctx.accepts(doc.type, 'application/json') === 'application/json';
        ctx.type = asJson ? 'application/json' : doc.type;
        ctx.body = asJson ? doc.json : doc.body;
        if (doc.json !== undefined) ctx.vary('Accept');
        if (doc.headers) ctx.set(doc.headers);
        return;
      }
      const handler = ctx.state.route && handlers.get(routeKey(ctx.state.route));
      if (!handler) throw notFound('No such resource.');
      const query: Record<string, unknown> = { ...ctx.query };
      const errors = [...pathParamErrors(ctx.state.params), ...validatorFor(handler.query)(query)];
      if (errors.length > 0) throw invalid(errors);
      const caller = ctx.state.caller!;
      const written = await deps.messaging.getNumber(`ryw:${tenantKey(caller)}`);
      if (written !== undefined) await deps.waitForPosition(written, options.readYourWritesTimeoutMs ?? 5000);
      ctx.body = await handler.handle(ctx, query, deps);
    },
  };
}

function publicRoutes(deps: QueryDeps): DoorMiddleware {
  const shopper = shopperRoutes(deps);
  const feeds = feedRoutes(deps);
  const portal = portalRoutes(deps);
  return (ctx, next) => shopper(ctx, () => feeds(ctx, () => portal(ctx, next)));
}
