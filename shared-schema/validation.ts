/**
 * Request validation with ajv: every invalid field at once, as `{field, code, message}` with JSON paths such as
 * `items[3].unit_price_cents`. Bodies and queries refuse fields outside the contract (`unknown_field`).
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { HTTPS_PATTERN, type JsonSchema } from './schemas/common.js';
import type { FieldError } from './problems.js';

// ajv-formats ships CommonJS with a default export; under NodeNext the callable sits on `.default`.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (
  ajv: Ajv,
) => Ajv;

// multipleOfPrecision: `0.07 / 0.01` is 7.000000000000001 in binary floating point; without a tolerance ajv would
// refuse every such decimal rate (1363 of the 10001 valid percentages).
const bodies = addFormats(new Ajv({ allErrors: true, strict: false, multipleOfPrecision: 9 }));
const queries = addFormats(new Ajv({ allErrors: true, strict: false, coerceTypes: true, multipleOfPrecision: 9 }));

const CODES: Record<string, string> = {
  minimum: 'minimum',
  maximum: 'maximum',
  exclusiveMinimum: 'minimum',
  exclusiveMaximum: 'maximum',
  minLength: 'min_length',
  maxLength: 'max_length',
  minItems: 'min_items',
  maxItems: 'max_items',
  minProperties: 'min_properties',
  maxProperties: 'max_properties',
  enum: 'enum',
  const: 'enum',
  multipleOf: 'multiple_of',
  uniqueItems: 'unique',
};

/** `/items/3/unit_price_cents` → `items[3].unit_price_cents`. */
export function jsonPath(pointer: string, child?: string): string {
  const parts = pointer === '' ? [] : pointer.slice(1).split('/').map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (child !== undefined) parts.push(child);
  let out = '';
  for (const part of parts) {
    if (/^\d+$/.test(part)) out += `[${part}]`;
    else out += out === '' ? part : `.${part}`;
  }
  return out;
}

function toFieldError(e: ErrorObject): FieldError | null {
  const params = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'if':
    case 'allOf':
    case 'anyOf':
    case 'oneOf':
    case 'not':
      return null;
    case 'required': {
      const field = jsonPath(e.instancePath, String(params.missingProperty));
      return { field, code: 'required', message: `${field} is required` };
    }
    case 'additionalProperties': {
      const field = jsonPath(e.instancePath, String(params.additionalProperty));
      return { field, code: 'unknown_field', message: `${field} is not a field of this contract` };
    }
    case 'type': {
      const field = jsonPath(e.instancePath);
      // A nullable field (`['integer', 'null']`) reports the type it expects when not null.
      const t = typeof params.type === 'string' ? params.type.split(',') : params.type;
      const named = Array.isArray(t) ? t.filter((x) => x !== 'null') : [];
      const code = named.length === 1 ? String(named[0]) : 'type';
      return { field, code, message: `${field || 'body'} must be ${Array.isArray(t) ? t.join(' or ') : String(t)}` };
    }
    case 'pattern': {
      const field = jsonPath(e.instancePath);
      if (params.pattern === HTTPS_PATTERN) return { field, code: 'https', message: `${field} must be an https:// URL` };
      return { field, code: 'pattern', message: `${field} must match ${String(params.pattern)}` };
    }
    case 'format': {
      const field = jsonPath(e.instancePath);
      const format = String(params.format);
      return { field, code: format.replace(/-/g, '_'), message: `${field} must be a valid ${format}` };
    }
    default: {
      const field = jsonPath(e.instancePath);
      return { field, code: CODES[e.keyword] ?? e.keyword, message: `${field || 'body'} ${e.message ?? 'is invalid'}` };
    }
  }
}

export function toFieldErrors(errors: readonly ErrorObject[] | null | undefined): FieldError[] {
  const out: FieldError[] = [];
  const seen = new Set<string>();
  for (const e of errors ?? []) {
    const fe = toFieldError(e);
    if (!fe) continue;
    const key = `${fe.field}\u0000${fe.code}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(fe);
  }
  return out;
}

export interface Validator<T> {
  /** Returns the field errors (empty when valid). Query validators coerce `value` in place. */
  (value: unknown): FieldError[];
  readonly schema: JsonSchema;
  readonly _type?: T;
}

function make<T>(ajv: Ajv, schema: JsonSchema): Validator<T> {
  const fn: ValidateFunction = ajv.compile(schema);
  const v = ((value: unknown) => (fn(value) ? [] : toFieldErrors(fn.errors))) as Validator<T>;
  (v as { schema: JsonSchema }).schema = schema;
  return v;
}

export const bodyValidator = <T>(schema: JsonSchema): Validator<T> => make<T>(bodies, schema);
export const queryValidator = <T>(schema: JsonSchema): Validator<T> => make<T>(queries, schema);
