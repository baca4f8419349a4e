/**
 * Body validation of the write side: the JSON Schema (every field at once) plus the cross-field rules the schema
 * cannot say (`not_higher`, `future`, CNPJ check digits, public suffixes), reported together in one 422.
 */
import { bodyValidator, joinPath } from '../shared-schema/contract/validation.js';
import {
  ProductInput as ProductInputSchema,
  ProductPatch as ProductPatchSchema,
  StoreInput as StoreInputSchema,
} from '../shared-schema/contract/schemas/catalog.js';
import type { ProductInput, ProductPatch } from '../shared-schema/events/product.js';
import type { StoreInput } from '../shared-schema/events/store.js';
import { fieldError, invalid, type FieldError } from '../shared-schema/contract/problems.js';
import { isValidCnpj, normalizeCnpj } from '../shared-schema/domain/cnpj.js';
import { notHigher } from '../shared-schema/domain/product-rules.js';
import { publicSuffixErrors } from '../shared-schema/domain/public-suffix.js';

const storeInput = bodyValidator<StoreInput>(StoreInputSchema);
const productInput = bodyValidator<ProductInput>(ProductInputSchema);
const productPatch = bodyValidator<ProductPatch>(ProductPatchSchema);

const FUTURE_MS = 24 * 60 * 60 * 1000;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const hasField = (errors: FieldError[], field: string) => errors.some((e) => e.field === field);

export function validateStoreInput(body: unknown): StoreInput {
  const errors = storeInput(body);
  if (isObject(body)) {
    if (typeof body.cnpj === 'string' && !hasField(errors, 'cnpj') && !isValidCnpj(normalizeCnpj(body.cnpj))) {
      errors.push(fieldError('cnpj', 'invalid', 'The CNPJ check digits do not match.'));
    }
    const refused = new Set(errors.map((e) => e.field));
    errors.push(
      ...publicSuffixErrors('domains', body.domains, refused),
      ...publicSuffixErrors('image_hosts', body.image_hosts, refused),
    );
  }
  if (errors.length > 0) throw invalid(errors);
  const input = body as StoreInput;
  return { ...input, cnpj: normalizeCnpj(input.cnpj) };
}

function futureCheck(body: Record<string, unknown>, now: Date, errors: FieldError[]): void {
  if (typeof body.updated_at !== 'string' || hasField(errors, 'updated_at')) return;
  if (Date.parse(body.updated_at) > now.getTime() + FUTURE_MS) {
    errors.push(fieldError('updated_at', 'future', 'updated_at is more than 24 h in the future.'));
  }
}

function priceCheck(body: Record<string, unknown>, errors: FieldError[]): void {
  const error = notHigher(body.price_cents, body.original_price_cents);
  if (error && !hasField(errors, error.field)) errors.push(error);
}

/** A product of a PUT or of a batch upsert; `prefix` places the errors (`items[3].product.`). */
export function productInputErrors(body: unknown, now: Date, prefix = ''): FieldError[] {
  const errors = productInput(body);
  if (isObject(body)) {
    futureCheck(body, now, errors);
    priceCheck(body, errors);
  }
  return prefix ? errors.map((e) => ({ ...e, field: joinPath(prefix, e.field) })) : errors;
}

export function validateProductInput(body: unknown, now: Date): ProductInput {
  const errors = productInputErrors(body, now);
  if (errors.length > 0) throw invalid(errors);
  return body as ProductInput;
}

export function validateProductPatch(body: unknown, now: Date): ProductPatch {
  const errors = productPatch(body);
  if (isObject(body)) {
    futureCheck(body, now, errors);
    priceCheck(body, errors);
  }
  if (errors.length > 0) throw invalid(errors);
  return body as ProductPatch;
}
