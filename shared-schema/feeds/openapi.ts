/**
 * The channels' own OpenAPI document (FEEDS.md), served at `/feeds/openapi.json`: the two feeds a channel calls with
 * its token. It is apart from the partner contract's document (`/v1/openapi.json`): channels are not partners, hold
 * no API key, and nothing here changes a `/v1` answer (docs/adr/0086-feeds-openapi.md).
 */
import { Problem } from '../contract/schemas/common.js';
import { TSV_COLUMNS } from './feed-offer.js';
import { MAX_CHANGES_LIMIT, DEFAULT_CHANGES_LIMIT } from './limits.js';

const nullable = (type: string, extra: Record<string, unknown> = {}) => ({ type: [type, 'null'], ...extra });
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

const Shipping = {
  type: 'object',
  additionalProperties: false,
  required: ['kind', 'cost_cents', 'delivery_days_min', 'delivery_days_max'],
  properties: {
    kind: { enum: ['free', 'fixed', 'to_be_calculated'] },
    cost_cents: nullable('integer', { description: '0 when free, null when to be calculated.' }),
    delivery_days_min: nullable('integer'),
    delivery_days_max: nullable('integer'),
  },
};

const FeedOffer = {
  type: 'object',
  additionalProperties: false,
  description:
    'A searchable offer: the Offer shape of the shopper side plus `description`, `brand`, `gtin`, `category` and `id`. `offer_url` and `buy_url` carry `canal=<channel_id>`. Never a commission.',
  required: [
    'store',
    'sku',
    'title',
    'price_cents',
    'original_price_cents',
    'installments',
    'shipping',
    'condition',
    'condition_label',
    'rating',
    'image_url',
    'offer_url',
    'buy_url',
    'updated_at',
    'description',
    'brand',
    'gtin',
    'category',
    'id',
  ],
  properties: {
    store: {
      type: 'object',
      additionalProperties: false,
      required: ['store_id', 'name'],
      properties: { store_id: { type: 'string' }, name: { type: 'string' } },
    },
    sku: { type: 'string' },
    title: { type: 'string' },
    price_cents: { type: 'integer', minimum: 0 },
    original_price_cents: nullable('integer'),
    installments: {
      oneOf: [
        { type: 'null' },
        {
          type: 'object',
          required: ['count', 'value_cents', 'interest_free'],
          properties: {
            count: { type: 'integer' },
            value_cents: { type: 'integer' },
            interest_free: { type: 'boolean' },
          },
        },
      ],
    },
    shipping: ref('FeedShipping'),
    condition: { enum: ['new', 'used', 'refurbished'] },
    condition_label: nullable('string', { description: 'null for `new`; `Usado`, `Recondicionado`.' }),
    rating: {
      oneOf: [
        { type: 'null' },
        {
          type: 'object',
          required: ['average', 'count'],
          properties: { average: { type: 'number' }, count: { type: 'integer' } },
        },
      ],
    },
    image_url: { type: 'string', format: 'uri' },
    offer_url: { type: 'string', format: 'uri' },
    buy_url: { type: 'string', format: 'uri' },
    updated_at: { type: 'string' },
    description: nullable('string'),
    brand: nullable('string'),
    gtin: nullable('string'),
    category: nullable('string'),
    id: {
      type: 'string',
      pattern: '^[A-Za-z0-9_-]{1,50}$',
      description:
        'Stable: the same offer (partner, store, SKU) has the same id in every feed and read, never another.',
    },
  },
};

const FeedChange = {
  oneOf: [
    {
      type: 'object',
      additionalProperties: false,
      required: ['op', 'offer'],
      properties: { op: { const: 'upsert' }, offer: ref('FeedOffer') },
    },
    {
      type: 'object',
      additionalProperties: false,
      required: ['op', 'id'],
      properties: { op: { const: 'delete' }, id: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,50}$' } },
    },
  ],
};

const FeedChangesPage = {
  type: 'object',
  additionalProperties: false,
  required: ['changes', 'next_cursor'],
  properties: {
    changes: { type: 'array', items: ref('FeedChange') },
    next_cursor: { type: 'string', description: 'Never null: with no change yet, call again with it later.' },
  },
};

const problem = (description: string) => ({
  description,
  content: { 'application/problem+json': { schema: ref('Problem') } },
});

const COMMON_ANSWERS = {
  '401': problem('No token, or not a valid one (unknown or revoked).'),
  '429': {
    ...problem('Above 60 requests a minute for this channel.'),
    headers: { 'Retry-After': { schema: { type: 'integer' }, description: 'Seconds until the next minute.' } },
  },
};

export function buildFeedsOpenApi(publicBaseUrl: string): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Channel feeds',
      version: '1.0.0',
      description:
        'The searchable offers for storefronts, messaging-app bots and comparison sites: the full feed, then what changed. The full feed read at cursor X, with every change after X applied in order up to cursor Y, equals the full feed read at Y.',
    },
    servers: [{ url: publicBaseUrl }],
    security: [{ channelToken: [] }],
    paths: {
      '/feeds/offers.tsv': {
        get: {
          operationId: 'getFullFeed',
          summary: 'Every searchable offer now, as a product data feed (TSV)',
          description: `UTF-8, tab-separated, one header line then one line per offer, lines ending \`\\n\`; a tab, CR or LF inside a value is a space. Columns: ${TSV_COLUMNS.map((c) => `\`${c}\``).join(', ')}. Prices as \`1234.56 BRL\` (with a from-price, \`price\` is the from-price and \`sale_price\` the current one); \`shipping\` \`BR:::0.00 BRL\` when free, \`BR:::12.34 BRL\` when fixed, empty when to be calculated. Streamed; gzip with \`Accept-Encoding: gzip\`.`,
          parameters: [{ name: 'If-None-Match', in: 'header', required: false, schema: { type: 'string' } }],
          responses: {
            '200': {
              description: 'The feed.',
              headers: {
                ETag: { schema: { type: 'string' } },
                'Feed-Cursor': {
                  schema: { type: 'string' },
                  description: 'Where `/feeds/changes` continues from this snapshot.',
                },
              },
              content: { 'text/tab-separated-values': { schema: { type: 'string' } } },
            },
            '304': { description: 'Nothing changed since the ETag sent in `If-None-Match`.' },
            ...COMMON_ANSWERS,
          },
        },
      },
      '/feeds/changes': {
        get: {
          operationId: 'getFeedChanges',
          summary: 'What changed in the feed after a cursor, in order',
          description:
            'An `upsert` when an offer entered the feed or any of its fields changed; a `delete` when it left (removed, rejected, unavailable, store suspended, domain dropped, or 48 h with no write). Empty `changes`: up to date. Changes are kept for a number of days (30 by default): follow them more often than that, or take a new snapshot when answered 410.',
          parameters: [
            {
              name: 'cursor',
              in: 'query',
              required: false,
              schema: { type: 'string' },
              description:
                '`Feed-Cursor` of the full feed, or the `next_cursor` of a page. Without it: from the beginning (410 once the oldest changes were dropped: start from the full feed instead).',
            },
            {
              name: 'limit',
              in: 'query',
              required: false,
              schema: { type: 'integer', minimum: 1, maximum: MAX_CHANGES_LIMIT, default: DEFAULT_CHANGES_LIMIT },
            },
          ],
          responses: {
            '200': {
              description: 'A page of changes.',
              content: { 'application/json': { schema: ref('FeedChangesPage') } },
            },
            '410': problem(
              'The changes after this cursor are no longer kept (the service keeps each change for a number of days the operator sets, 30 by default), or no cursor was sent once the oldest changes were dropped: `errors` holds `cursor` `expired`. Read `/feeds/offers.tsv` again and follow the changes from its `Feed-Cursor`.',
            ),
            '422': problem(
              'A cursor the service did not issue, a limit out of range, an unknown parameter: every one listed.',
            ),
            ...COMMON_ANSWERS,
          },
        },
      },
    },
    components: {
      securitySchemes: {
        channelToken: {
          type: 'http',
          scheme: 'bearer',
          description: 'The token given once when the channel was created.',
        },
      },
      schemas: { FeedOffer, FeedShipping: Shipping, FeedChange, FeedChangesPage, Problem },
    },
  };
}
