import {
  Commission,
  DateTime,
  Domain,
  MapKey,
  ExternalId,
  HttpsUrl,
  RejectionReason,
  Shipping,
  MAX_SAFE,
  SafeInt,
  Cursor,
  Limit,
  MULTILINE_TEXT_PATTERN,
  ShopperText,
  type JsonSchema,
} from './common.js';

export const StoreInput: JsonSchema = {
  type: 'object',
  required: ['name', 'cnpj', 'website_url', 'domains'],
  additionalProperties: false,
  properties: {
    default_commission: Commission,
    name: ShopperText(2, 80),
    cnpj: { type: 'string', pattern: '^[A-Za-z0-9./-]{14,18}$' },
    logo_url: HttpsUrl,
    website_url: HttpsUrl,
    domains: { type: 'array', minItems: 1, maxItems: 5, items: Domain },
    image_hosts: { type: 'array', maxItems: 5, items: Domain },
    returns_days: { type: 'integer', minimum: 0, maximum: 365 },
    handling_days: { type: 'integer', minimum: 0, maximum: 60 },
  },
};

export const Store: JsonSchema = {
  type: 'object',
  required: ['store_id', 'status', 'name', 'cnpj', 'website_url', 'domains', 'domains_approved'],
  properties: {
    ...(StoreInput.properties as Record<string, JsonSchema>),
    store_id: ExternalId,
    status: { enum: ['pending_review', 'active', 'suspended'] },
    domains_approved: { type: 'array', items: { type: 'string' } },
  },
};

const Installments: JsonSchema = {
  type: 'object',
  required: ['count', 'value_cents', 'interest_free'],
  additionalProperties: false,
  properties: {
    count: { type: 'integer', minimum: 2, maximum: 24 },
    value_cents: SafeInt(1),
    interest_free: { type: 'boolean' },
  },
};

const Rating: JsonSchema = {
  type: 'object',
  required: ['average', 'count'],
  additionalProperties: false,
  properties: { average: { type: 'number', minimum: 0, maximum: 5 }, count: SafeInt(1) },
};

const StringMap = (maxKeys: number, maxValue: number): JsonSchema => ({
  type: 'object',
  maxProperties: maxKeys,
  propertyNames: MapKey,
  additionalProperties: ShopperText(0, maxValue),
});

export const ProductInput: JsonSchema = {
  type: 'object',
  required: ['store_id', 'title', 'product_url', 'image_urls', 'price_cents', 'available', 'updated_at'],
  additionalProperties: false,
  properties: {
    commission: Commission,
    store_id: ExternalId,
    title: ShopperText(5, 200),
    description: { type: 'string', maxLength: 5000, pattern: MULTILINE_TEXT_PATTERN },
    brand: ShopperText(0, 80),
    model: ShopperText(0, 80),
    gtin: { type: 'string', pattern: '^(\\d{8}|\\d{12,14})$' },
    category: ShopperText(0, 200),
    attributes: StringMap(50, 200),
    condition: { enum: ['new', 'used', 'refurbished'] },
    group_id: ExternalId,
    variant_attributes: StringMap(5, 40),
    product_url: HttpsUrl,
    image_urls: { type: 'array', minItems: 1, maxItems: 10, items: HttpsUrl },
    price_cents: SafeInt(1),
    original_price_cents: SafeInt(1),
    available: { type: 'boolean' },
    stock_quantity: SafeInt(0),
    shipping: Shipping,
    installments: Installments,
    rating: Rating,
    updated_at: DateTime,
  },
};

export const ProductPatch: JsonSchema = {
  type: 'object',
  required: ['updated_at'],
  minProperties: 2,
  additionalProperties: false,
  properties: {
    commission: Commission,
    price_cents: SafeInt(1),
    original_price_cents: { type: ['integer', 'null'], minimum: 1, maximum: MAX_SAFE },
    available: { type: 'boolean' },
    stock_quantity: SafeInt(0),
    shipping: Shipping,
    updated_at: DateTime,
  },
};

export const ProductStateSchema: JsonSchema = { enum: ['pending', 'accepted', 'rejected', 'stale', 'removed'] };

export const ProductStatus: JsonSchema = {
  type: 'object',
  required: ['sku', 'store_id', 'state', 'received_at'],
  properties: {
    sku: ExternalId,
    store_id: ExternalId,
    state: ProductStateSchema,
    received_at: DateTime,
    published_at: { type: ['string', 'null'], format: 'date-time' },
    reasons: { type: 'array', items: RejectionReason },
    ignored_stale: { type: 'boolean' },
    commission: Commission,
    commission_source: { enum: ['product', 'store', null] },
    expected_commission_cents: { type: ['integer', 'null'], minimum: 0, maximum: MAX_SAFE },
    svc_url: { type: 'string' },
  },
};

export const page = (item: JsonSchema): JsonSchema => ({
  type: 'object',
  required: ['data', 'next_cursor'],
  properties: { data: { type: 'array', items: item }, next_cursor: { type: ['string', 'null'] } },
});

export const ListStoresQuery: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: { cursor: Cursor, limit: Limit },
};

export const ListProductsQuery: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: { store_id: ExternalId, state: ProductStateSchema, cursor: Cursor, limit: Limit },
};

export const Account: JsonSchema = {
  type: 'object',
  required: ['partner_id', 'name', 'partner_type', 'environment', 'scopes'],
  properties: {
    partner_id: { type: 'string' },
    name: { type: 'string' },
    partner_type: { enum: ['hub', 'store'] },
    environment: { enum: ['live', 'test'] },
    scopes: { type: 'array', items: { enum: ['catalog', 'clicks', 'promotions', 'conversions', 'reports'] } },
  },
};
