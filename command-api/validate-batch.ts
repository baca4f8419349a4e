/**
 * Validation of `POST /products/batch`, in the order of DECISIONS.md: more than 1000 items is 413 (before any
 * field check); then every invalid field at once (422) — the batch and item envelopes, and each upsert's product by
 * the same rules as a single PUT, with paths such as `items[3].product.price_cents` and `items[7].op`.
 */
import { bodyValidator, uniqueFieldErrors } from '../shared-schema/validation.js';
import { BatchShape, MAX_BATCH_ITEMS } from '../shared-schema/schemas/batch.js';
import type { BatchItem } from '../shared-schema/events/job.js';
import { ProblemError, fieldError, invalid, type FieldError } from '../shared-schema/problems.js';
import { productInputErrors } from './validate.js';

const batchShape = bodyValidator<{ items: BatchItem[] }>(BatchShape);

/** An item's product above this (serialized) is refused, so that every stored event stays far below 1 MiB. */
export const MAX_ITEM_BYTES = 512 * 1024;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export function validateBatchInput(body: unknown, now: Date): BatchItem[] {
  if (isObject(body) && Array.isArray(body.items) && body.items.length > MAX_BATCH_ITEMS) {
    throw new ProblemError(
      413,
      [],
      `A batch holds at most ${MAX_BATCH_ITEMS} items; this one has ${body.items.length}.`,
    );
  }
  const errors: FieldError[] = batchShape(body);
  if (isObject(body) && Array.isArray(body.items)) {
    body.items.forEach((item: unknown, i: number) => {
      if (!isObject(item) || !('product' in item)) return;
      const at = `items[${i}].product`;
      if (item.op === 'delete') {
        errors.push(fieldError(at, 'unknown_field', `${at} is not a field of a delete`));
      } else if (item.op === 'upsert') {
        const productErrors = productInputErrors(item.product, now, at);
        errors.push(...productErrors);
        if (productErrors.length === 0 && Buffer.byteLength(JSON.stringify(item.product)) > MAX_ITEM_BYTES) {
          errors.push(fieldError(at, 'too_large', `${at} takes at most ${MAX_ITEM_BYTES} bytes of JSON.`));
        }
      }
    });
  }
  // The batch's own check and each product's both find a lone surrogate inside a product: it is listed once.
  if (errors.length > 0) throw invalid(uniqueFieldErrors(errors));
  return (body as { items: BatchItem[] }).items;
}
