/**
 * Validation of `POST /products/batch`, in the order of DECISIONS.md: more than 1000 items is 413 (before any
 * field check); then every invalid field at once (422) — the batch and item envelopes, and each upsert's product by
 * the same rules as a single PUT, with paths such as `items[3].product.price_cents` and `items[7].op`. At most
 * MAX_ITEM_ERRORS are listed per item and MAX_FIELD_ERRORS in all: there the check stops, and the problem says
 * `errors_truncated`.
 */
import {
  bodyValidator,
  shapeValidator,
  uniqueFieldErrors,
  unicodeErrors,
} from '../shared-schema/contract/validation.js';
import { BatchItemShape, BatchTopShape, MAX_BATCH_ITEMS } from '../shared-schema/contract/schemas/batch.js';
import type { BatchItem } from '../shared-schema/events/job.js';
import {
  MAX_FIELD_ERRORS,
  MAX_ITEM_ERRORS,
  ProblemError,
  fieldError,
  invalid,
  type FieldError,
} from '../shared-schema/contract/problems.js';
import { productInputErrors } from './validate.js';

const batchTop = shapeValidator<{ items: unknown[] }>(BatchTopShape);
const itemShape = bodyValidator<BatchItem>(BatchItemShape);

/** An item's product above this (serialized) is refused, so that every stored event stays far below 1 MiB. */
export const MAX_ITEM_BYTES = 512 * 1024;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The errors of one item, its paths under `items[i]`; the item check also finds a lone surrogate of its product. */
function itemErrors(item: unknown, i: number, now: Date): FieldError[] {
  const at = `items[${i}]`;
  const errors = itemShape(item, at);
  if (isObject(item) && 'product' in item) {
    const product = `${at}.product`;
    if (item.op === 'delete') {
      errors.push(fieldError(product, 'unknown_field', `${product} is not a field of a delete`));
    } else if (item.op === 'upsert') {
      const productErrors = productInputErrors(item.product, now, product);
      errors.push(...productErrors);
      if (productErrors.length === 0 && Buffer.byteLength(JSON.stringify(item.product)) > MAX_ITEM_BYTES) {
        errors.push(fieldError(product, 'too_large', `${product} takes at most ${MAX_ITEM_BYTES} bytes of JSON.`));
      }
    }
  }
  return uniqueFieldErrors(errors);
}

export function validateBatchInput(body: unknown, now: Date): BatchItem[] {
  if (isObject(body) && Array.isArray(body.items) && body.items.length > MAX_BATCH_ITEMS) {
    throw new ProblemError(
      413,
      [],
      `A batch holds at most ${MAX_BATCH_ITEMS} items; this one has ${body.items.length}.`,
    );
  }
  // The envelope's keys and values other than `items` (each item is checked, lone surrogates included, below).
  const errors: FieldError[] = [...batchTop(body), ...unicodeErrors(isObject(body) ? { ...body, items: null } : body)];
  let truncated = errors.length > MAX_FIELD_ERRORS;
  if (isObject(body) && Array.isArray(body.items)) {
    const items: unknown[] = body.items;
    // Stops at the cap: what lies past it would never be listed.
    for (let i = 0; i < items.length && errors.length < MAX_FIELD_ERRORS; i++) {
      const found = itemErrors(items[i], i, now);
      if (found.length > MAX_ITEM_ERRORS) truncated = true;
      errors.push(...found.slice(0, MAX_ITEM_ERRORS));
      if (errors.length >= MAX_FIELD_ERRORS && i < items.length - 1) truncated = true;
    }
  }
  if (errors.length > 0) throw invalid(errors, truncated);
  return (body as { items: BatchItem[] }).items;
}
