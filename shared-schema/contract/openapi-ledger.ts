/**
 * What the OpenAPI document says about the movement statement and the monthly closings (spec LEDGER.md): their
 * operations, named schemas and examples, merged into the document by openapi-operations.ts, openapi.ts and
 * examples.ts.
 */
import type { Json } from './openapi-publish.js';
import type { JsonSchema } from './schemas/common.js';
import {
  Closing,
  ClosingPage,
  LedgerBalance,
  ListClosingsQuery,
  Movement,
  StatementPage,
  StatementQuery,
} from './schemas/ledger.js';
import { PERIOD_PATTERN } from '../http/parameters.js';

/** An OperationSpec (openapi-operations.ts), kept structural here so that the two files do not import each other. */
interface LedgerOperation {
  operationId: string;
  tag: string;
  summary: string;
  description: string;
  query?: JsonSchema;
  ok: { status: 200; description: string; schema?: JsonSchema; type?: string };
  extraProblems?: number[];
}

const PERIOD_RULE =
  ' `period` is a calendar month `YYYY-MM` in Brasília time (America/Sao_Paulo, UTC−03:00): `2026-10` is' +
  ' [2026-10-01T03:00:00Z, 2026-11-01T03:00:00Z) of `recorded_at`. Another form answers 422 on `period`; a period' +
  ' that has not ended by the service clock answers 409 `period_open`.';

export const LEDGER_OPERATIONS: Record<string, LedgerOperation> = {
  'GET /statement': {
    operationId: 'getStatement',
    tag: 'Reports',
    summary: 'Movement statement',
    description:
      'Every conversion event applied to an order balance is one movement (duplicates, stale events and refused events are not), booked at its `recorded_at` (when the service recorded it, not `occurred_at`), in recording order. `opening` and `closing` are the running totals of the scope (the partner and environment, or `store_id`) just before the window and at its end, whatever the page; each movement carries its signed deltas and the running balances after it. A window that ended before the request never changes afterwards: it is answered once every event recorded before the request is in it (503 with `Retry-After` if that takes more than a few seconds). Window on `recorded_at`: `since` and `until` (date-time), UTC half-open [since, until), at most 31 days, default the last 30 days up to now; a longer window or `since >= until` answers 422 code `window`.',
    query: StatementQuery,
    ok: { status: 200, description: 'A page of movements with the balances of the window.', schema: StatementPage },
    extraProblems: [503],
  },
  'GET /closings': {
    operationId: 'listClosings',
    tag: 'Reports',
    summary: 'Monthly closings',
    description:
      'Every closed period of the partner and environment, newest first, from the period of its first movement to the last closed one (periods without movements included). No movement ever: an empty list.',
    query: ListClosingsQuery,
    ok: { status: 200, description: 'A page of closings.', schema: ClosingPage },
    extraProblems: [503],
  },
  'GET /closings/:period': {
    operationId: 'getClosing',
    tag: 'Reports',
    summary: 'One monthly closing',
    description:
      'The totals of a closed period over the whole scope, and the SHA-256 of its CSV chained to the previous period. A closed period never changes.' +
      PERIOD_RULE,
    ok: { status: 200, description: 'The closing.', schema: Closing },
    extraProblems: [409, 503],
  },
  'GET /closings/:period/movements.csv': {
    operationId: 'getClosingMovementsCsv',
    tag: 'Reports',
    summary: 'Movements of a closing (CSV)',
    description:
      "The movements of a closed period, all stores, as CSV: UTF-8 without byte-order mark, lines ending CRLF, a header line, RFC 4180 quoting, dates `YYYY-MM-DDTHH:MM:SS.sssZ`, integers in cents, an unknown `expected_commission_delta_cents` as an empty field. Every download is byte-identical; its SHA-256 is the closing's `sha256`." +
      PERIOD_RULE,
    ok: {
      status: 200,
      description: 'The CSV (`text/csv; charset=utf-8`).',
      type: 'text/csv',
      schema: { type: 'string' },
    },
    extraProblems: [409, 503],
  },
};

export const LEDGER_COMPONENTS: Record<string, JsonSchema> = {
  Movement,
  LedgerBalance,
  StatementPage,
  Closing,
  ClosingPage,
};

export const PERIOD_PARAM = {
  schema: { type: 'string', pattern: PERIOD_PATTERN } as JsonSchema,
  description: 'A calendar month in America/Sao_Paulo, `YYYY-MM`.',
};

const MOVEMENTS: Json[] = [
  {
    event_id: 'evt-9001-paid',
    store_id: 'loja-centro',
    order_id: '9001',
    type: 'paid',
    occurred_at: '2026-10-02T10:00:00.000Z',
    recorded_at: '2026-10-02T10:00:01.000Z',
    net_delta_cents: 50000,
    known_expected_commission_delta_cents: 2500,
    expected_commission_delta_cents: 2500,
    net_balance_cents: 50000,
    known_expected_commission_balance_cents: 2500,
  },
  {
    event_id: 'evt-9001-refund',
    store_id: 'loja-centro',
    order_id: '9001',
    type: 'refunded',
    occurred_at: '2026-10-05T14:00:00.000Z',
    recorded_at: '2026-10-05T14:00:02.000Z',
    net_delta_cents: -25000,
    known_expected_commission_delta_cents: -1250,
    expected_commission_delta_cents: -1250,
    net_balance_cents: 25000,
    known_expected_commission_balance_cents: 1250,
  },
];

const CLOSING: Json = {
  period: '2026-10',
  timezone: 'America/Sao_Paulo',
  since: '2026-10-01T03:00:00.000Z',
  until: '2026-11-01T03:00:00.000Z',
  environment: 'test',
  currency: 'BRL',
  opening: { net_cents: 0, known_expected_commission_cents: 0 },
  closing: { net_cents: 25000, known_expected_commission_cents: 1250 },
  movements: 2,
  net_delta_cents: 25000,
  known_expected_commission_delta_cents: 1250,
  sha256: '5d2f0c61a1b3e4f5a6b7c8d9e0f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3',
  previous_sha256: null,
};

export const LEDGER_EXAMPLES: Record<string, { response: Json }> = {
  getStatement: {
    response: {
      since: '2026-10-01T03:00:00.000Z',
      until: '2026-11-01T03:00:00.000Z',
      store_id: null,
      environment: 'test',
      currency: 'BRL',
      opening: { net_cents: 0, known_expected_commission_cents: 0 },
      closing: { net_cents: 25000, known_expected_commission_cents: 1250 },
      data: MOVEMENTS,
      next_cursor: null,
    },
  },
  listClosings: { response: { data: [CLOSING], next_cursor: null } },
  getClosing: { response: CLOSING },
  getClosingMovementsCsv: {
    response:
      'recorded_at,occurred_at,store_id,order_id,event_id,type,net_delta_cents,known_expected_commission_delta_cents,expected_commission_delta_cents,net_balance_cents,known_expected_commission_balance_cents\r\n' +
      '2026-10-02T10:00:01.000Z,2026-10-02T10:00:00.000Z,loja-centro,9001,evt-9001-paid,paid,50000,2500,2500,50000,2500\r\n' +
      '2026-10-05T14:00:02.000Z,2026-10-05T14:00:00.000Z,loja-centro,9001,evt-9001-refund,refunded,-25000,-1250,-1250,25000,1250\r\n',
  },
};
