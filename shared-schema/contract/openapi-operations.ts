/**
 * What the OpenAPI document says about each route the doors declare: summary and description (from the
 * contract), the query schema, the request body schema and the success answer. The schemas are the very objects the
 * doors validate with; the builder (openapi.ts) turns them into components and `$ref`s.
 */
import {
  Account,
  ListProductsQuery,
  ListStoresQuery,
  ProductInput,
  ProductPatch,
  ProductStatus,
  Store,
  StoreInput,
  page,
} from './schemas/catalog.js';
import {
  BatchInput,
  ClickPage,
  CommissionReport,
  CommissionReportQuery,
  ConversionEventSchema,
  ConversionPage,
  ConversionReceipt,
  GetConversionQuery,
  Job,
  ListClicksQuery,
  ListConversionsQuery,
  OrderView,
  PartnerClick,
  SandboxClickInput,
} from './schemas/commerce.js';
import type { JsonSchema } from './schemas/common.js';
import { ListEventsQuery, NotificationPage } from './schemas/notifications.js';
import { Webhook, WebhookInput, WebhookRegistration } from './schemas/webhooks.js';
import {
  CatalogInsights,
  CatalogInsightsQuery,
  DailyInsights,
  DailyInsightsQuery,
  Visibility,
} from './schemas/insights.js';
import { LEDGER_OPERATIONS } from './openapi-ledger.js';

export const StorePage: JsonSchema = page(Store);
export const ProductPage: JsonSchema = page(ProductStatus);

export interface OperationSpec {
  operationId: string;
  tag: string;
  summary: string;
  description: string;
  /** Query schema (`type: object`, properties = parameters); absent when the route takes no parameter. */
  query?: JsonSchema;
  /** Request body schema (JSON). */
  body?: JsonSchema;
  /** `type`: the answer's media type when it is not JSON (default `application/json`). */
  ok: { status: 200 | 202 | 204; description: string; schema?: JsonSchema; type?: string };
  /** Problem statuses beyond the ones every route of its kind can answer (see openapi.ts). */
  extraProblems?: number[];
}

const WINDOW =
  ' Window: `since` and `until` (date-time), UTC half-open interval [since, until), at most 31 days, default the' +
  ' last 30 days up to now; a longer window or `since >= until` answers 422 code `window`.';

/**
 * Keyed by routeKey (`METHOD path`) of each route the doors declare, in the order of the published document;
 * buildOpenApi refuses any drift either way.
 */
export const OPERATIONS: Record<string, OperationSpec> = {
  'GET /me': {
    operationId: 'getMe',
    tag: 'Account',
    summary: 'Identity of the key',
    description:
      "Reports the key's `partner_id`, `name`, `partner_type` (`hub` or `store`), `environment` (`live` or `test`, decided by the key) and `scopes`.",
    ok: { status: 200, description: 'The account of the key.', schema: Account },
  },
  'GET /stores': {
    operationId: 'listStores',
    tag: 'Stores',
    summary: 'List stores',
    description:
      'Stores of the partner in the environment of the key, ordered by `store_id`. Pagination: `cursor` and `limit` (1 to 200, default 50); follow `next_cursor` until it is null.',
    query: ListStoresQuery,
    ok: { status: 200, description: 'A page of stores.', schema: StorePage },
  },
  'GET /stores/:store_id': {
    operationId: 'getStore',
    tag: 'Stores',
    summary: 'One store',
    description: 'One store with its `status` and `domains_approved`. 404 when it does not exist for this partner.',
    ok: { status: 200, description: 'The store.', schema: Store },
    extraProblems: [404],
  },
  'PUT /stores/:store_id': {
    operationId: 'putStore',
    tag: 'Stores',
    summary: 'Create or replace a store',
    description:
      'Registers the store under the partner-chosen `store_id`. A new store starts `pending_review`; the service approves the store and each domain before any product is published. New domains stay unapproved; products are accepted meanwhile but shown only after approval. `cnpj` check digits are verified (422 `invalid`), one CNPJ is one store (422 `already_registered`), and the CNPJ of an existing store never changes (422 `immutable`); a direct-store account refuses a second store (422 `single_store` on `store_id`). A replacement keeps the status, except that a new `name` sends an `active` store back to `pending_review` until the service approves it again (a `suspended` store stays `suspended`). A public suffix of the Public Suffix List (`com.br`, `github.io`) is refused in `domains` and `image_hosts` (422 `public_suffix` on its index). `name` refuses control characters and bidirectional overrides (422 `control_character`).',
    body: StoreInput,
    ok: { status: 200, description: 'The store as registered (CNPJ without punctuation).', schema: Store },
  },
  'GET /products': {
    operationId: 'listProducts',
    tag: 'Products',
    summary: 'List products with states',
    description:
      'Products of the partner, ordered by `sku`, filtered by `store_id` and `state`. Meant for reconciliation. Pagination: `cursor` and `limit`.',
    query: ListProductsQuery,
    ok: { status: 200, description: 'A page of product statuses.', schema: ProductPage },
  },
  'POST /products/batch': {
    operationId: 'postProductBatch',
    tag: 'Products',
    summary: 'Batch of up to 1000 items',
    description:
      'Upserts and deletes in one call, applied in array order in chunks of up to 50 items. Answers 202 with the Job in state `queued` only after the batch is persisted; read progress with `GET /jobs/{job_id}`. Counts as a single write for the rate limit. 413 above 5 MB or above 1000 items. In `done`, `received = accepted + rejected + pending + removed`.',
    body: BatchInput,
    ok: { status: 202, description: 'The batch is persisted and queued.', schema: Job },
  },
  'GET /products/:sku': {
    operationId: 'getProduct',
    tag: 'Products',
    summary: "One product's status",
    description:
      'State of the product and, if refused or held, its `reasons`. A removed SKU answers 200 with state `removed`; a SKU never sent answers 404.',
    ok: { status: 200, description: 'The product status.', schema: ProductStatus },
    extraProblems: [404],
  },
  'GET /products/:sku/visibility': {
    operationId: 'getProductVisibility',
    tag: 'Products',
    summary: 'Why is my offer (not) in search',
    description:
      'Whether the offer is in the shopper search now, by the very checks the search applies, in this order: `live` (the environment is live), `accepted` (the state `GET /products/{sku}` answers), `fresh` (an applied PUT/PATCH within the last 48 h), `store_active`, `domain_approved` (the domain of `product_url`), `available`. `searchable` is true exactly when every check is ok; a failed check carries a `detail` in Portuguese saying what to do. For a test key only `live` keeps a product out: a test product passing every other check is what its live twin would show. `fresh_until` is when an `accepted` offer leaves search unless written again (null while not accepted); `svc_url` as `GET /products/{sku}` gives it, or null. 404 when the SKU was never sent for this partner and environment.',
    ok: { status: 200, description: 'The visibility of the product.', schema: Visibility },
    extraProblems: [404],
  },
  'PUT /products/:sku': {
    operationId: 'putProduct',
    tag: 'Products',
    summary: 'Create or replace a product',
    description:
      'Replaces the whole registration (omitting `commission` removes the product-level exception). Answers state `pending` at first; the cover check runs asynchronously. A submission whose `updated_at` is older than the last received answers 200 with `ignored_stale` true and changes nothing: the greatest `updated_at` prevails. The `store_id` of an existing SKU never changes (409 `sku_store_conflict` on `store_id`). SKUs are unique per partner and environment across the stores of a hub. Text a shopper sees (`title`, `description`, `brand`, `model`, `category`, attribute values) refuses control characters (U+0000–U+001F, U+007F–U+009F; `description` takes tab and newline) and bidirectional overrides or isolates (U+202A–U+202E, U+2066–U+2069): 422 `control_character` on the field.',
    body: ProductInput,
    ok: { status: 200, description: 'The product status after the write.', schema: ProductStatus },
  },
  'PATCH /products/:sku': {
    operationId: 'patchProduct',
    tag: 'Products',
    summary: 'Partial update',
    description:
      'Only the fields sent change (`updated_at` plus at least one other). Same `updated_at` rule as PUT. `original_price_cents` null removes the from-price; `commission` null returns to the store rule.',
    body: ProductPatch,
    ok: { status: 200, description: 'The product status after the write.', schema: ProductStatus },
    extraProblems: [404],
  },
  'DELETE /products/:sku': {
    operationId: 'deleteProduct',
    tag: 'Products',
    summary: 'Remove a product',
    description:
      'The product leaves search and its state becomes `removed`. 204 also when the product was already absent. No body.',
    ok: { status: 204, description: 'Removed, or already absent.' },
  },
  'GET /jobs/:job_id': {
    operationId: 'getJob',
    tag: 'Products',
    summary: 'Batch progress',
    description:
      'State and totals of a batch; refused items are listed in `errors` with their index, SKU and reasons. `pending` is the state at processing time: read the product for its current state.',
    ok: { status: 200, description: 'The job.', schema: Job },
    extraProblems: [404],
  },
  'GET /clicks': {
    operationId: 'listClicks',
    tag: 'Clicks',
    summary: 'List clicks',
    description:
      'Clicks of the partner and environment, ordered by `occurred_at`, `store_id`, `click_id`. Clicks carry no personal data.' +
      WINDOW,
    query: ListClicksQuery,
    ok: { status: 200, description: 'A page of clicks with the normalized window.', schema: ClickPage },
  },
  'POST /sandbox/clicks': {
    operationId: 'postSandboxClick',
    tag: 'Clicks',
    summary: 'Test click (test key only)',
    description:
      'Creates a test click for a SKU of that store (no approval needed). Use its `click_id` and `occurred_at` in a `paid` event. A live key answers 403 `test_key_required`; an unknown SKU answers 422.',
    body: SandboxClickInput,
    ok: { status: 200, description: 'The click.', schema: PartnerClick },
  },
  'POST /conversions': {
    operationId: 'postConversion',
    tag: 'Conversions',
    summary: 'Report a paid, refunded or cancelled event',
    description:
      'A store-to-server call. The first event of an order is `paid` (`occurred_at` = `paid_at`, every `refunded_cents` 0). `refunded` and `cancelled` repeat all original items and `paid_at`; `refunded_cents` is the cumulative refund of the whole line. The click must belong to the partner, environment and store and have occurred up to 30 days before `paid_at` (422 `invalid_attribution`). `event_id` deduplicates forever: the same body returns the first receipt with `duplicate` true, another body answers 409 `event_conflict`. Other 409 codes: `order_conflict`, `payment_required`, `invalid_transition`. An event older than the last applied answers `ignored_stale` true. Event dates at most 5 minutes in the future. No buyer personal data.',
    body: ConversionEventSchema,
    ok: { status: 200, description: 'Order and event persisted atomically.', schema: ConversionReceipt },
  },
  'GET /conversions': {
    operationId: 'listConversions',
    tag: 'Conversions',
    summary: 'List orders',
    description:
      'Orders by `paid_at` (not by refund date: an earlier period may change after a later refund), then `store_id`, `order_id`, with their current state.' +
      WINDOW,
    query: ListConversionsQuery,
    ok: { status: 200, description: 'A page of orders with the normalized window.', schema: ConversionPage },
  },
  'GET /conversions/:order_id': {
    operationId: 'getConversion',
    tag: 'Conversions',
    summary: 'One order',
    description:
      'Current state of one order; an order is unique per `store_id` and `order_id`. 404 when not found for this partner, environment and store.',
    query: GetConversionQuery,
    ok: { status: 200, description: 'The order.', schema: OrderView },
    extraProblems: [404],
  },
  'GET /reports/commission': {
    operationId: 'getCommissionReport',
    tag: 'Reports',
    summary: 'Commission report',
    description:
      'Clicks counted by `occurred_at`, orders by `paid_at` with their current state. Every store with a click or an order appears. `expected_commission_cents` is null if any order with a balance has an unknown rule; `known_expected_commission_cents` is the known subtotal. An expected balance, not a payment nor a financial closing.' +
      WINDOW,
    query: CommissionReportQuery,
    ok: { status: 200, description: 'The report.', schema: CommissionReport },
  },
  'GET /events': {
    operationId: 'listEvents',
    tag: 'Notifications',
    summary: 'What changed since I last looked',
    description:
      "The partner's own notifications in the environment of the key, in the order they happened, from the beginning or after `cursor`: `product.state_changed` (a new SKU's first state and each change of the state `GET /products/{sku}` answers, `stale` included when the 48 h pass), `store.status_changed`, `store.domain_approved`, `job.finished`. `type` filters by one type (an unknown one: 422). `limit` 1 to 200, default 50. `next_cursor` is never null: it is where to ask next, and an empty `data` means nothing new yet. Walking the feed again gives the same notifications with the same ids, in the same order. A cursor the service did not issue for this list and filter answers 422.",
    query: ListEventsQuery,
    ok: { status: 200, description: 'A page of notifications.', schema: NotificationPage },
  },
  'GET /webhook': {
    operationId: 'getWebhook',
    tag: 'Notifications',
    summary: 'The webhook and its recent deliveries',
    description:
      'The registered endpoint (never its secret) and its most recent delivery attempts, newest first: the notification, when, the HTTP status (null when no answer came), whether it was a success and why not. 404 when none is registered.',
    ok: { status: 200, description: 'The webhook.', schema: Webhook },
    extraProblems: [404],
  },
  'PUT /webhook': {
    operationId: 'putWebhook',
    tag: 'Notifications',
    summary: 'Register the webhook',
    description:
      'One HTTPS endpoint per partner and environment receives every notification of `GET /events` after its registration, in the same order, as a JSON POST of the Notification with the headers `Webhook-Id` (the notification id), `Webhook-Timestamp` (seconds since the epoch) and `Webhook-Signature`: `v1,` + base64 of HMAC-SHA256 over `{id}.{timestamp}.{body}` keyed with the bytes of the secret after `whsec_` (the Standard Webhooks scheme). The answer that creates the endpoint holds its `secret`, shown once; a later PUT changes the URL and keeps the secret (DELETE, then PUT, for a new one). Any 2xx is a delivery; anything else is tried again after 1 min, doubling, at most 1 h apart, for 24 h, and later notifications wait behind it. An address that is not public (loopback, private, link-local) is never contacted. The pull feed is the reference.',
    body: WebhookInput,
    ok: {
      status: 200,
      description: 'The endpoint; `secret` only when this request created it.',
      schema: WebhookRegistration,
    },
  },
  'DELETE /webhook': {
    operationId: 'deleteWebhook',
    tag: 'Notifications',
    summary: 'Remove the webhook',
    description: 'Stops the deliveries. 204 also when none was registered. No body.',
    ok: { status: 204, description: 'Removed, or already absent.' },
  },
  'GET /insights/catalog': {
    operationId: 'getCatalogInsights',
    tag: 'Insights',
    summary: 'Catalog health',
    description:
      '`states` counts the SKUs by the state `GET /products?state=` lists them under (the same counts); `searchable` counts the offers whose visibility says searchable (a test key: those passing every check but `live`); `reasons` lists the reasons of the `rejected` and `pending` products, one entry per code with the number of products, the largest count first, then by code. `store_id` narrows to one store.',
    query: CatalogInsightsQuery,
    ok: { status: 200, description: 'The health of the catalog.', schema: CatalogInsights },
  },
  'GET /insights/daily': {
    operationId: 'getDailyInsights',
    tag: 'Insights',
    summary: 'Activity by day',
    description:
      'One entry per UTC date the window touches, oldest first, zeros included: clicks by `occurred_at`, orders by `paid_at` with their current state, only inside the window. `totals` is the sum of `days` and equals the same fields of `GET /reports/commission` for the same window and store.' +
      WINDOW,
    query: DailyInsightsQuery,
    ok: { status: 200, description: 'The activity by day.', schema: DailyInsights },
  },
  ...LEDGER_OPERATIONS,
};

/** The public documents (no key, no rate brake). */
export const DOCUMENTS: Record<string, { operationId: string; summary: string; type: string; schema: JsonSchema }> = {
  '/openapi.json': {
    operationId: 'getOpenApiJson',
    summary: 'This contract, OpenAPI 3.1 (JSON)',
    type: 'application/json',
    schema: { type: 'object', additionalProperties: true },
  },
  '/openapi.yaml': {
    operationId: 'getOpenApiYaml',
    summary: 'This contract, OpenAPI 3.1 (YAML)',
    type: 'application/yaml',
    schema: { type: 'string' },
  },
  '/guia.md': {
    operationId: 'getGuide',
    summary: 'Integration guide (Markdown)',
    type: 'text/markdown',
    schema: { type: 'string' },
  },
};
