/**
 * The reads behind the partner portal (PORTAL.md): a product's Visibility, catalog health and activity by day.
 * Every shape carries exactly the fields PORTAL.md lists (`additionalProperties: false`).
 */
import { VISIBILITY_CHECKS } from '../../domain/visibility.js';
import { DateTime, ExternalId, type JsonSchema } from './common.js';
import { CommissionReportQuery } from './commerce.js';

const count: JsonSchema = { type: 'integer', minimum: 0 };
const environment: JsonSchema = { enum: ['test', 'live'] };
const exactly = (properties: Record<string, JsonSchema>): JsonSchema => ({
  type: 'object',
  required: Object.keys(properties),
  additionalProperties: false,
  properties,
});

export const VisibilityCheck: JsonSchema = exactly({
  check: { enum: [...VISIBILITY_CHECKS] },
  ok: { type: 'boolean' },
  detail: { type: ['string', 'null'] },
});

export const Visibility: JsonSchema = exactly({
  sku: { type: 'string' },
  store_id: { type: 'string' },
  environment,
  searchable: { type: 'boolean' },
  checks: { type: 'array', items: VisibilityCheck },
  fresh_until: { type: ['string', 'null'], format: 'date-time' },
  svc_url: { type: ['string', 'null'] },
});

export const CatalogInsightsQuery: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: { store_id: ExternalId },
};

export const CatalogInsights: JsonSchema = exactly({
  environment,
  store_id: { type: ['string', 'null'] },
  states: exactly({ pending: count, accepted: count, rejected: count, stale: count, removed: count }),
  searchable: count,
  reasons: { type: 'array', items: exactly({ code: { type: 'string' }, count }) },
});

/** The window rules of `GET /reports/commission`: the same query. */
export const DailyInsightsQuery: JsonSchema = CommissionReportQuery;

const DAY_FIGURES = {
  clicks: count,
  orders: count,
  net_cents: count,
  known_expected_commission_cents: count,
};

export const DailyActivity: JsonSchema = exactly({
  date: { type: 'string', pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$' },
  ...DAY_FIGURES,
});

export const DailyInsights: JsonSchema = exactly({
  since: DateTime,
  until: DateTime,
  store_id: { type: ['string', 'null'] },
  days: { type: 'array', items: DailyActivity },
  totals: exactly(DAY_FIGURES),
});
