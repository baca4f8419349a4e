/**
 * Examples of the contract, one source for the guide's curl bodies (guide.ts) and the `example` of every request
 * body and answer of the OpenAPI document (openapi.ts). Tests check each against its schema and compile them
 * against a client generated from the document. Pure data.
 */
import type { Json } from './openapi-publish.js';
import { titleOf } from './problems.js';
import { LEDGER_EXAMPLES } from './openapi-ledger.js';

type Obj = { [key: string]: Json };

const AT = '2026-03-01T14:30:00Z';
const SINCE = '2026-03-01T00:00:00Z';
const UNTIL = '2026-03-31T00:00:00Z';
const CLICK_ID = 'ic_8Jx2LmQ4vN7pR1sT5wYz';

// ------------------------------------------------------------------------------------------- request bodies

export const STORE_INPUT: Obj = {
  name: 'Loja Centro',
  cnpj: '11.222.333/0001-81',
  website_url: 'https://www.lojacentro.com.br',
  domains: ['www.lojacentro.com.br'],
  image_hosts: ['cdn.lojacentro.com.br'],
  default_commission: { type: 'percentage', rate: 5 },
};

export const PRODUCT_INPUT: Obj = {
  store_id: 'loja-centro',
  title: 'Tênis de corrida azul 42',
  product_url: 'https://www.lojacentro.com.br/p/sku-123-azul',
  image_urls: ['https://cdn.lojacentro.com.br/sku-123-azul.jpg'],
  price_cents: 29990,
  original_price_cents: 34990,
  available: true,
  stock_quantity: 12,
  shipping: { type: 'fixed', cost_cents: 1990, delivery_days_min: 2, delivery_days_max: 5 },
  updated_at: AT,
};

export const PRODUCT_PATCH: Obj = { price_cents: 27990, stock_quantity: 9, updated_at: '2026-03-01T16:00:00Z' };

export const BATCH_INPUT: Obj = {
  items: [
    {
      op: 'upsert',
      sku: 'SKU-1',
      product: {
        store_id: 'loja-centro',
        title: 'Meia esportiva branca',
        product_url: 'https://www.lojacentro.com.br/p/sku-1',
        image_urls: ['https://cdn.lojacentro.com.br/sku-1.jpg'],
        price_cents: 3990,
        available: true,
        shipping: { type: 'free' },
        commission: { type: 'percentage', rate: 12.34 },
        updated_at: '2026-03-01T16:00:00Z',
      },
    },
    { op: 'delete', sku: 'SKU-OLD' },
  ],
};

export const SANDBOX_CLICK_INPUT: Obj = { store_id: 'loja-centro', sku: 'SKU-123-AZUL' };

export const CONVERSION_EVENT: Obj = {
  event_id: 'evt-9001-paid',
  order_id: '9001',
  store_id: 'loja-centro',
  click_id: CLICK_ID,
  status: 'paid',
  currency: 'BRL',
  paid_at: '2026-03-02T10:00:00Z',
  occurred_at: '2026-03-02T10:00:00Z',
  items: [{ sku: 'SKU-123-AZUL', quantity: 2, unit_price_cents: 25000, refunded_cents: 0 }],
};

// ---------------------------------------------------------------------------------------------------- answers

const ACCOUNT: Obj = {
  partner_id: 'pt_7M2Q9XKD4B8NRT6VW3HZ',
  name: 'Hub Exemplo',
  partner_type: 'hub',
  environment: 'test',
  scopes: ['catalog', 'clicks', 'conversions', 'reports'],
};

const STORE: Obj = {
  ...STORE_INPUT,
  cnpj: '11222333000181',
  store_id: 'loja-centro',
  status: 'pending_review',
  domains_approved: [],
};

const PRODUCT_STATUS: Obj = {
  sku: 'SKU-123-AZUL',
  store_id: 'loja-centro',
  state: 'pending',
  received_at: '2026-03-01T14:30:02Z',
  published_at: null,
  reasons: [{ code: 'store_not_active', field: 'store_id', message: 'The store is pending review.' }],
  ignored_stale: false,
  commission: { type: 'percentage', rate: 5 },
  commission_source: 'store',
  expected_commission_cents: 1500,
};

const ACCEPTED_PRODUCT: Obj = {
  sku: 'SKU-1',
  store_id: 'loja-centro',
  state: 'accepted',
  received_at: '2026-03-01T16:00:01Z',
  published_at: '2026-03-01T16:00:04Z',
  reasons: [],
  commission: { type: 'percentage', rate: 12.34 },
  commission_source: 'product',
  expected_commission_cents: 493,
  svc_url: 'https://www.example.test/test/p/pt_7m2q9xkd4b8nrt6vw3hz/loja-centro/SKU-1',
};

const JOB_QUEUED: Obj = {
  job_id: 'job_01JNQ4W6Z8X2C3V4B5N6M7K8J9',
  state: 'queued',
  totals: { received: 2, accepted: 0, rejected: 0, pending: 0, removed: 0 },
  errors: [],
  created_at: '2026-03-01T16:00:00Z',
  finished_at: null,
};

const JOB_DONE: Obj = {
  ...JOB_QUEUED,
  state: 'done',
  totals: { received: 2, accepted: 1, rejected: 0, pending: 0, removed: 1 },
  finished_at: '2026-03-01T16:00:03Z',
};

const CLICK: Obj = {
  click_id: CLICK_ID,
  store_id: 'loja-centro',
  sku: 'SKU-123-AZUL',
  price_cents: 27990,
  occurred_at: '2026-03-01T18:00:00Z',
};

const ORDER: Obj = {
  ...CONVERSION_EVENT,
  items: [
    {
      sku: 'SKU-123-AZUL',
      quantity: 2,
      unit_price_cents: 25000,
      refunded_cents: 0,
      commission: { type: 'percentage', rate: 5 },
      commission_source: 'store',
      expected_commission_cents: 2500,
    },
  ],
  gross_cents: 50000,
  refunded_cents: 0,
  net_cents: 50000,
  expected_commission_cents: 2500,
  known_expected_commission_cents: 2500,
  commission_snapshot_at: '2026-03-02T10:00:01Z',
  recorded_at: '2026-03-02T10:00:01Z',
  updated_at: '2026-03-02T10:00:01Z',
};

const TOTALS: Obj = {
  clicks: 3,
  orders: 1,
  paid_orders: 1,
  refunded_orders: 0,
  cancelled_orders: 0,
  gross_cents: 50000,
  refunded_cents: 0,
  net_cents: 50000,
  unknown_commission_orders: 0,
  known_expected_commission_cents: 2500,
  expected_commission_cents: 2500,
};

export const WEBHOOK_INPUT: Obj = { url: 'https://hooks.lojacentro.com.br/partner-commerce' };

/** Request body and success answer of each operation, by operationId. */
export const OPERATION_EXAMPLES: Record<string, { request?: Json; response?: Json }> = {
  getMe: { response: ACCOUNT },
  listStores: { response: { data: [STORE], next_cursor: null } },
  getStore: { response: STORE },
  putStore: { request: STORE_INPUT, response: STORE },
  listProducts: { response: { data: [ACCEPTED_PRODUCT, PRODUCT_STATUS], next_cursor: null } },
  postProductBatch: { request: BATCH_INPUT, response: JOB_QUEUED },
  getProduct: { response: ACCEPTED_PRODUCT },
  putProduct: { request: PRODUCT_INPUT, response: PRODUCT_STATUS },
  patchProduct: {
    request: PRODUCT_PATCH,
    response: { ...PRODUCT_STATUS, received_at: '2026-03-01T16:00:01Z', expected_commission_cents: 1400 },
  },
  getJob: { response: JOB_DONE },
  listClicks: { response: { data: [CLICK], next_cursor: null, since: SINCE, until: UNTIL } },
  postSandboxClick: { request: SANDBOX_CLICK_INPUT, response: CLICK },
  postConversion: { request: CONVERSION_EVENT, response: { ...ORDER, duplicate: false, ignored_stale: false } },
  listConversions: { response: { data: [ORDER], next_cursor: null, since: SINCE, until: UNTIL } },
  getConversion: { response: ORDER },
  getProductVisibility: {
    response: {
      sku: 'SKU-1',
      store_id: 'loja-centro',
      environment: 'test',
      searchable: false,
      checks: [
        {
          check: 'live',
          ok: false,
          detail:
            'Este produto está no ambiente de teste, que ninguém vê na busca: envie-o com uma chave live para publicá-lo.',
        },
        { check: 'accepted', ok: true, detail: null },
        { check: 'fresh', ok: true, detail: null },
        { check: 'store_active', ok: true, detail: null },
        { check: 'domain_approved', ok: true, detail: null },
        { check: 'available', ok: true, detail: null },
      ],
      fresh_until: '2026-03-03T16:00:01.000Z',
      svc_url: 'https://www.example.test/test/p/pt_7m2q9xkd4b8nrt6vw3hz/loja-centro/SKU-1',
    },
  },
  getCatalogInsights: {
    response: {
      environment: 'live',
      store_id: null,
      states: { pending: 2, accepted: 40, rejected: 1, stale: 3, removed: 0 },
      searchable: 38,
      reasons: [
        { code: 'domain_not_approved', count: 2 },
        { code: 'image_too_small', count: 1 },
      ],
    },
  },
  getDailyInsights: {
    response: {
      since: '2026-03-01T00:00:00.000Z',
      until: '2026-03-03T00:00:00.000Z',
      store_id: null,
      days: [
        { date: '2026-03-01', clicks: 2, orders: 0, net_cents: 0, known_expected_commission_cents: 0 },
        { date: '2026-03-02', clicks: 1, orders: 1, net_cents: 50000, known_expected_commission_cents: 2500 },
      ],
      totals: { clicks: 3, orders: 1, net_cents: 50000, known_expected_commission_cents: 2500 },
    },
  },
  getCommissionReport: {
    response: {
      since: SINCE,
      until: UNTIL,
      currency: 'BRL',
      environment: 'test',
      basis: 'paid_at_current_state',
      commission_is: 'expected_not_settled',
      totals: TOTALS,
      stores: [{ store_id: 'loja-centro', ...TOTALS }],
    },
  },
  putWebhook: {
    request: WEBHOOK_INPUT,
    response: {
      url: 'https://hooks.lojacentro.com.br/partner-commerce',
      created_at: '2026-03-01T15:00:00Z',
      secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    },
  },
  getWebhook: {
    response: {
      url: 'https://hooks.lojacentro.com.br/partner-commerce',
      created_at: '2026-03-01T15:00:00Z',
      attempts: [
        {
          notification_id: 'ntf_5120_0',
          attempted_at: '2026-03-01T15:03:00Z',
          status: 200,
          ok: true,
          error: null,
        },
        {
          notification_id: 'ntf_5120_0',
          attempted_at: '2026-03-01T15:02:00Z',
          status: 503,
          ok: false,
          error: 'the endpoint answered 503',
        },
      ],
    },
  },
  listEvents: {
    response: {
      data: [
        {
          id: 'ntf_4096_0',
          type: 'product.state_changed',
          occurred_at: '2026-03-01T15:00:03Z',
          data: { sku: 'SKU-1', store_id: 'loja-centro', state: 'accepted', reasons: [] },
        },
        {
          id: 'ntf_5120_0',
          type: 'job.finished',
          occurred_at: '2026-03-01T15:02:00Z',
          data: { job_id: 'job_01HQ', state: 'done', received: 2, accepted: 1, rejected: 0, pending: 0, removed: 1 },
        },
      ],
      next_cursor: 'WzUxMjAsMCwiIl0.c2lnbmF0dXJlLW9mLXRoZS1zZXJ2aWNlLWN1cnNvci1rZXk',
    },
  },
  ...LEDGER_EXAMPLES,
};

const PROBLEM_ERRORS: Record<number, { detail?: string; errors?: { field: string; code: string; message: string }[] }> =
  {
    401: { detail: 'Send a valid API key in the header `Authorization: Bearer <API_KEY>`.' },
    403: {
      detail: 'This route needs a test key.',
      errors: [{ field: '', code: 'test_key_required', message: 'This route needs a test key.' }],
    },
    404: { detail: 'Product SKU-404 not found.' },
    409: {
      errors: [
        { field: 'event_id', code: 'event_conflict', message: 'event_id evt-9001-paid was used with another body' },
      ],
    },
    413: { detail: 'Body above 1 MB.' },
    422: {
      errors: [
        {
          field: 'items[3].unit_price_cents',
          code: 'maximum',
          message: 'items[3].unit_price_cents must be <= 1000000000',
        },
      ],
    },
    429: { detail: 'Rate brake: wait Retry-After seconds.' },
  };

/** The problem answer example of `status`, with the problem type under `apiBaseUrl`. */
export function problemExample(apiBaseUrl: string, status: number): Json {
  return {
    type: `${apiBaseUrl}/problemas/${status}`,
    title: titleOf(status),
    status,
    request_id: 'req_01JNQ4W6Z8X2C3V4B5N6M7K8J9',
    ...(PROBLEM_ERRORS[status] ?? {}),
  };
}
