/** Queries and answers of the movement statement and the monthly closings (spec LEDGER.md). */
import { Cursor, DateTime, Limit, type JsonSchema } from './common.js';
import { windowQuery } from './commerce.js';
import { PERIOD_PATTERN } from '../../http/parameters.js';

// ----------------------------------------------------------------------------------------------------- queries

/** `GET /statement`: the window rules of `GET /clicks`, a store filter, cursor and limit. */
export const StatementQuery: JsonSchema = windowQuery({ cursor: Cursor, limit: Limit });

/** `GET /closings`. */
export const ListClosingsQuery: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: { cursor: Cursor, limit: Limit },
};

// --------------------------------------------------------------------------------------------------- responses

const integer: JsonSchema = { type: 'integer' };
const exactly = (properties: Record<string, JsonSchema>): JsonSchema => ({
  type: 'object',
  additionalProperties: false,
  required: Object.keys(properties),
  properties,
});

export const Movement: JsonSchema = exactly({
  event_id: { type: 'string' },
  store_id: { type: 'string' },
  order_id: { type: 'string' },
  type: { enum: ['paid', 'refunded', 'cancelled'] },
  occurred_at: DateTime,
  recorded_at: DateTime,
  net_delta_cents: integer,
  known_expected_commission_delta_cents: integer,
  expected_commission_delta_cents: { type: ['integer', 'null'] },
  net_balance_cents: integer,
  known_expected_commission_balance_cents: integer,
});

export const LedgerBalance: JsonSchema = exactly({ net_cents: integer, known_expected_commission_cents: integer });

const Environment: JsonSchema = { enum: ['test', 'live'] };
const Currency: JsonSchema = { const: 'BRL' };

export const StatementPage: JsonSchema = exactly({
  since: DateTime,
  until: DateTime,
  store_id: { type: ['string', 'null'] },
  environment: Environment,
  currency: Currency,
  opening: LedgerBalance,
  closing: LedgerBalance,
  data: { type: 'array', items: Movement },
  next_cursor: { type: ['string', 'null'] },
});

export const Closing: JsonSchema = exactly({
  period: { type: 'string', pattern: PERIOD_PATTERN },
  timezone: { const: 'America/Sao_Paulo' },
  since: DateTime,
  until: DateTime,
  environment: Environment,
  currency: Currency,
  opening: LedgerBalance,
  closing: LedgerBalance,
  movements: { type: 'integer', minimum: 0 },
  net_delta_cents: integer,
  known_expected_commission_delta_cents: integer,
  sha256: { type: 'string', pattern: '^[0-9a-f]{64}$' },
  previous_sha256: { type: ['string', 'null'], pattern: '^[0-9a-f]{64}$' },
});

export const ClosingPage: JsonSchema = exactly({
  data: { type: 'array', items: Closing },
  next_cursor: { type: ['string', 'null'] },
});
