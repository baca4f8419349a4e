/**
 * Batches on the write side. The contract's `BatchInput` and `Job` (published in the OpenAPI document) live in
 * `commerce.ts` and are re-exported here. The door validates with `BatchShape` — the batch and item envelopes only —
 * and checks each upsert's `product` with the same rules as a single PUT (command-api/validate.ts
 * `productInputErrors`), so every error is reported once, with its path (`items[3].product.price_cents`).
 */
import { ExternalId, type JsonSchema } from './common.js';

export { BatchInput, Job } from './commerce.js';

export const MAX_BATCH_ITEMS = 1000;
export const BATCH_CHUNK_ITEMS = 50;

/** Envelope of an item: `op` and `sku` checked here, `product` by the product rules. */
export const BatchItemShape: JsonSchema = {
  type: 'object',
  required: ['op', 'sku'],
  additionalProperties: false,
  properties: { op: { enum: ['upsert', 'delete'] }, sku: ExternalId, product: true },
  allOf: [{ if: { properties: { op: { const: 'upsert' } }, required: ['op'] }, then: { required: ['product'] } }],
};

/** The batch without its items' envelopes: the door checks each item on its own, and stops at the errors' cap. */
export const BatchTopShape: JsonSchema = {
  type: 'object',
  required: ['items'],
  additionalProperties: false,
  properties: { items: { type: 'array', minItems: 1 } },
};

/** More than `MAX_BATCH_ITEMS` is 413, checked before this schema. */
export const BatchShape: JsonSchema = {
  ...BatchTopShape,
  properties: { items: { type: 'array', minItems: 1, items: BatchItemShape } },
};
