/**
 * Batch input (`POST /products/batch`) and Job (`GET /jobs/{job_id}`). `BatchInput` is the whole contract, for the
 * published document; the door validates with `BatchShape` (the batch and item envelopes) and checks each
 * `product` with the same rules as a single PUT, so every error carries its path (`items[3].product.price_cents`).
 */
import { DateTime, ExternalId, RejectionReason, type JsonSchema } from './common.js';
import { ProductInput } from './catalog.js';

export const MAX_BATCH_ITEMS = 1000;
export const BATCH_CHUNK_ITEMS = 50;

const UpsertItem: JsonSchema = {
  type: 'object',
  required: ['op', 'sku', 'product'],
  additionalProperties: false,
  properties: { op: { const: 'upsert' }, sku: ExternalId, product: ProductInput },
};

const DeleteItem: JsonSchema = {
  type: 'object',
  required: ['op', 'sku'],
  additionalProperties: false,
  properties: { op: { const: 'delete' }, sku: ExternalId },
};

export const BatchInput: JsonSchema = {
  type: 'object',
  required: ['items'],
  additionalProperties: false,
  properties: { items: { type: 'array', minItems: 1, maxItems: MAX_BATCH_ITEMS, items: { oneOf: [UpsertItem, DeleteItem] } } },
};

/** Envelope of an item: `op` and `sku` checked here, `product` checked by the product rules. */
const BatchItemShape: JsonSchema = {
  type: 'object',
  required: ['op', 'sku'],
  additionalProperties: false,
  properties: { op: { enum: ['upsert', 'delete'] }, sku: ExternalId, product: true },
  allOf: [{ if: { properties: { op: { const: 'upsert' } }, required: ['op'] }, then: { required: ['product'] } }],
};

export const BatchShape: JsonSchema = {
  type: 'object',
  required: ['items'],
  additionalProperties: false,
  properties: { items: { type: 'array', minItems: 1, items: BatchItemShape } },
};

const Count: JsonSchema = { type: 'integer', minimum: 0 };

export const Job: JsonSchema = {
  type: 'object',
  required: ['job_id', 'state', 'totals', 'created_at'],
  properties: {
    job_id: { type: 'string' },
    state: { enum: ['queued', 'running', 'done', 'failed'] },
    totals: {
      type: 'object',
      required: ['received', 'accepted', 'rejected', 'pending'],
      properties: { received: Count, accepted: Count, rejected: Count, pending: Count, removed: Count },
    },
    errors: {
      type: 'array',
      items: {
        type: 'object',
        required: ['index', 'sku', 'reasons'],
        properties: { index: Count, sku: { type: 'string' }, reasons: { type: 'array', items: RejectionReason } },
      },
    },
    created_at: DateTime,
    finished_at: { type: ['string', 'null'], format: 'date-time' },
  },
};
