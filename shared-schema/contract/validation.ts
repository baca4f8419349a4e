/**
 * Request validation with ajv: every invalid field at once, as `{field, code, message}` with JSON paths such as
 * `items[3].unit_price_cents`. Bodies and queries refuse fields outside the contract (`unknown_field`); bodies refuse
 * lone surrogates anywhere (`unicode`), and map keys are checked on their own path (`attributes["a.b"]`).
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import {
  HTTPS_PATTERN,
  MULTILINE_TEXT_PATTERN,
  REFUSED_BEYOND_C0,
  TEXT_PATTERN,
  type JsonSchema,
} from './schemas/common.js';
import { MAX_FIELD_ERRORS, type FieldError } from './problems.js';

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

/** A key written bare in a path (`shipping.type`); any other key is bracket-quoted as a JSON string (`attributes["a.b"]`). */
const PLAIN_KEY = /^[\p{L}_][\p{L}\p{N}_]*$/u;

/** One step of a path: a number is an array index, a string an object key. */
export type PathSegment = string | number;

/** Characters a path spells as `\uXXXX` beyond JSON's own escapes: DEL, C1 controls, bidirectional controls. */
const UNPRINTABLE = new RegExp(`[${REFUSED_BEYOND_C0}]`, 'gu');
const escapeChar = (c: string): string => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

/**
 * A path in the style of `items[3].unit_price_cents`: indexes in brackets, plain keys after dots, and any other key
 * (empty, with `.`, `$`, spaces, control characters, digits only…) as a bracketed JSON string, `attributes["a.b"]`,
 * `attributes["a\u0000b"]`, `attributes[""]`, so every key has exactly one unambiguous, printable path.
 */
export function formatPath(segments: readonly PathSegment[]): string {
  let out = '';
  for (const s of segments) {
    if (typeof s === 'number') out += `[${s}]`;
    else if (PLAIN_KEY.test(s)) out += out === '' ? s : `.${s}`;
    else out += `[${JSON.stringify(s).replace(UNPRINTABLE, escapeChar)}]`; // JSON escapes U+0000–U+001F only
  }
  return out;
}

/** `prefix` + `field` (a path made by formatPath): `items[3].product` + `title`, or + `["a.b"]`, or + `""`. */
export function joinPath(prefix: string, field: string): string {
  if (field === '') return prefix;
  if (prefix === '' || field.startsWith('[')) return prefix + field;
  return `${prefix}.${field}`;
}

const hasOwn = (o: object, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k);

/**
 * `/items/3/unit_price_cents` → `items[3].unit_price_cents`. With `root` (the validated value) each step is an index
 * only where the value holds an array, so a map key made of digits is `attributes["2024"]`; without it, a step of
 * digits is taken for an index.
 */
export function jsonPath(pointer: string, child?: string, root?: unknown): string {
  const parts =
    pointer === ''
      ? []
      : pointer
          .slice(1)
          .split('/')
          .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (child !== undefined) parts.push(child);
  const segments: PathSegment[] = [];
  let node: unknown = root;
  const known = root !== undefined;
  for (const part of parts) {
    const index = Array.isArray(node) || (!known && /^\d+$/.test(part));
    segments.push(index ? Number(part) : part);
    node =
      node !== null && typeof node === 'object' && hasOwn(node, part)
        ? (node as Record<string, unknown>)[part]
        : undefined;
  }
  return formatPath(segments);
}

/** Lone UTF-16 surrogates: with the `u` flag a well-formed pair is one code point and never matches. */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

export const hasLoneSurrogate = (text: string): boolean => LONE_SURROGATE.test(text);

/**
 * `unicode` for every string value and every key of `value` that holds a lone surrogate (`"\ud800"` sent as a JSON
 * escape: UTF-8 cannot carry it, so BSON would store U+FFFD and the text would change on the way to MongoDB).
 * Iterative, so a deeply nested body cannot exhaust the stack. `prefix` places the paths (`items[3]`).
 */
export function unicodeErrors(value: unknown, prefix = ''): FieldError[] {
  const errors: FieldError[] = [];
  // Each entry links to its parent instead of copying the path: a body nested 100 000 deep costs a step per level,
  // not a copy of the whole path per level. A path is spelled out only for an error.
  type At = { segment: PathSegment; parent: At | null } | null;
  const pathOf = (at: At): PathSegment[] => {
    const out: PathSegment[] = [];
    for (let n = at; n !== null; n = n.parent) out.push(n.segment);
    return out.reverse();
  };
  const stack: [unknown, At][] = [[value, null]];
  while (stack.length > 0 && errors.length < MAX_UNICODE_ERRORS) {
    const [node, at] = stack.pop()!;
    if (typeof node === 'string') {
      if (hasLoneSurrogate(node)) {
        const field = joinPath(prefix, formatPath(pathOf(at)));
        errors.push({
          field,
          code: 'unicode',
          message: `${field || 'body'} holds a lone surrogate (a \\uD800–\\uDFFF escape without its pair); send well-formed Unicode text.`,
        });
      }
    } else if (Array.isArray(node)) {
      for (let i = node.length - 1; i >= 0; i--) stack.push([node[i], { segment: i, parent: at }]);
    } else if (node !== null && typeof node === 'object') {
      const keys = Object.keys(node);
      for (let i = keys.length - 1; i >= 0; i--) {
        const key = keys[i];
        const child: At = { segment: key, parent: at };
        if (hasLoneSurrogate(key)) {
          const field = joinPath(prefix, formatPath(pathOf(child)));
          errors.push({
            field,
            code: 'unicode',
            message: `The key of ${field} holds a lone surrogate (a \\uD800–\\uDFFF escape without its pair); send well-formed Unicode text.`,
          });
        }
        stack.push([(node as Record<string, unknown>)[key], child]);
      }
    }
  }
  return errors;
}

/** A body full of lone surrogates is refused on its first hundred (and one, so the problem says it was cut). */
const MAX_UNICODE_ERRORS = MAX_FIELD_ERRORS + 1;

/** The characters TEXT_PATTERN refuses, in a partner's words. */
const REFUSED_CHARACTERS =
  'control characters (U+0000 to U+001F, U+007F to U+009F) or bidirectional overrides (U+202A to U+202E, U+2066 to U+2069)';

/** The errors of a map key (`propertyNames`: MapKey in schemas/common.ts), at the key's own path. */
function keyError(e: ErrorObject, field: string): FieldError {
  const params = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'minLength':
      return { field, code: 'key_empty', message: `${field}: a key must not be empty; give every entry a name.` };
    case 'maxLength':
      return {
        field,
        code: 'key_too_long',
        message: `${field}: a key takes at most ${String(params.limit)} characters.`,
      };
    case 'pattern':
      if (params.pattern === TEXT_PATTERN) {
        return {
          field,
          code: 'key_control_character',
          message: `${field}: a key must not contain ${REFUSED_CHARACTERS}.`,
        };
      }
      return { field, code: 'key_pattern', message: `${field}: the key must match ${String(params.pattern)}` };
    default:
      return { field, code: 'key_invalid', message: `${field}: the key ${e.message ?? 'is invalid'}` };
  }
}

/** The value at a JSON pointer of the validated body (for messages that quote it), or undefined. */
function valueAt(root: unknown, pointer: string): unknown {
  if (pointer === '') return root;
  let node = root;
  for (const raw of pointer.slice(1).split('/')) {
    const part = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (node === null || typeof node !== 'object' || !Object.hasOwn(node, part)) return undefined;
    node = (node as Record<string, unknown>)[part];
  }
  return node;
}

const FORMAT_MESSAGES: Record<string, (field: string) => string> = {
  'date-time': (field) =>
    `${field} must be an ISO 8601 date-time with its offset, such as 2026-03-01T14:30:00Z or 2026-03-01T11:30:00-03:00 (the offset is required).`,
  uri: (field) => `${field} must be an absolute URL such as https://loja.example/p/1.`,
};

/** "must be integer" for money says what an integer of cents is: 29.99 is 2999. */
function typeMessage(field: string, types: readonly string[], nullable: boolean, value: unknown): string {
  const name = field || 'The body';
  const expected = types
    .map((t) => (t === 'integer' ? 'an integer' : t === 'object' ? 'an object' : t === 'array' ? 'an array' : `a ${t}`))
    .join(' or ');
  const orNull = nullable ? ' or null' : '';
  if (types.length === 1 && types[0] === 'integer' && /_cents$/.test(field)) {
    const example =
      typeof value === 'number' && Number.isFinite(value)
        ? `${value} is ${Math.round(value * 100)}`
        : 'R$ 29,99 is 2999';
    return `${name} must be an integer of cents${orNull}: ${example}.`;
  }
  return `${name} must be ${expected}${orNull}.`;
}

/** Bounds and sets in the partner's words, with the limit the contract sets. */
function boundMessage(e: ErrorObject, field: string): string {
  const params = e.params as Record<string, unknown>;
  const name = field || 'The body';
  const limit = params.limit;
  switch (e.keyword) {
    case 'minimum':
      return `${name} must be at least ${String(limit)}.`;
    case 'maximum':
      return `${name} must be at most ${String(limit)}.`;
    case 'exclusiveMinimum':
      return `${name} must be greater than ${String(limit)}.`;
    case 'exclusiveMaximum':
      return `${name} must be less than ${String(limit)}.`;
    case 'minLength':
      return `${name} takes at least ${String(limit)} character${limit === 1 ? '' : 's'}.`;
    case 'maxLength':
      return `${name} takes at most ${String(limit)} characters.`;
    case 'minItems':
      return `${name} takes at least ${String(limit)} item${limit === 1 ? '' : 's'}.`;
    case 'maxItems':
      return `${name} takes at most ${String(limit)} items.`;
    case 'minProperties':
      return field === ''
        ? `Send updated_at and at least one field to change (the body needs at least ${String(limit)} fields).`
        : `${name} needs at least ${String(limit)} entries.`;
    case 'maxProperties':
      return `${name} takes at most ${String(limit)} entries.`;
    case 'enum':
      return `${name} must be one of: ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}.`;
    case 'const':
      return `${name} must be ${JSON.stringify(params.allowedValue)}.`;
    case 'multipleOf':
      return params.multipleOf === 0.01
        ? `${name} takes at most two decimal places (12.34, not 12.345).`
        : `${name} must be a multiple of ${String(params.multipleOf)}.`;
    case 'uniqueItems':
      return `${name} must not repeat an item (items ${String(params.j)} and ${String(params.i)} are equal).`;
    default:
      return `${name} ${e.message ?? 'is invalid'}.`;
  }
}

function toFieldError(e: ErrorObject, root: unknown, at: string): FieldError | null {
  const params = e.params as Record<string, unknown>;
  const path = (child?: string) => joinPath(at, jsonPath(e.instancePath, child, root));
  if (e.propertyName !== undefined && e.keyword !== 'propertyNames') return keyError(e, path(e.propertyName));
  switch (e.keyword) {
    case 'propertyNames': // its failing subschema keywords are reported, on the key (above)
    case 'if':
    case 'allOf':
    case 'anyOf':
    case 'oneOf':
    case 'not':
      return null;
    case 'required': {
      const field = path(String(params.missingProperty));
      return { field, code: 'required', message: `${field} is required.` };
    }
    case 'additionalProperties': {
      const field = path(String(params.additionalProperty));
      return {
        field,
        code: 'unknown_field',
        message: `${field} is not a field of this contract: remove it (the contract accepts no other field).`,
      };
    }
    case 'type': {
      const field = path();
      // A nullable field (`['integer', 'null']`) reports the type it expects when not null.
      const t = typeof params.type === 'string' ? params.type.split(',') : params.type;
      const named = Array.isArray(t) ? t.filter((x) => x !== 'null') : [];
      const code = named.length === 1 ? String(named[0]) : 'type';
      return {
        field,
        code,
        message: typeMessage(
          field,
          named.length > 0 ? named : (t as string[]),
          Array.isArray(t) && t.includes('null'),
          valueAt(root, e.instancePath),
        ),
      };
    }
    case 'pattern': {
      const field = path();
      if (params.pattern === HTTPS_PATTERN)
        return { field, code: 'https', message: `${field} must be an https:// URL.` };
      if (params.pattern === TEXT_PATTERN || params.pattern === MULTILINE_TEXT_PATTERN) {
        const allowed = params.pattern === MULTILINE_TEXT_PATTERN ? ' (tab and newline are fine)' : '';
        return {
          field,
          code: 'control_character',
          message: `${field} must not contain ${REFUSED_CHARACTERS}${allowed}.`,
        };
      }
      return { field, code: 'pattern', message: `${field} must match ${String(params.pattern)}.` };
    }
    case 'format': {
      const field = path();
      const format = String(params.format);
      return {
        field,
        code: format.replace(/-/g, '_'),
        message: FORMAT_MESSAGES[format]?.(field) ?? `${field} must be a valid ${format}.`,
      };
    }
    default: {
      const field = path();
      return { field, code: CODES[e.keyword] ?? e.keyword, message: boundMessage(e, field) };
    }
  }
}

/**
 * `root` is the validated value: paths then tell array indexes from map keys made of digits. Stops one past
 * MAX_FIELD_ERRORS (a problem lists no more, and says it was cut): a body of 100 000 unknown fields is not spelled
 * out 100 000 times.
 */
export function toFieldErrors(
  errors: readonly ErrorObject[] | null | undefined,
  root?: unknown,
  at = '',
): FieldError[] {
  function* mapped(): Generator<FieldError> {
    for (const e of errors ?? []) {
      const fe = toFieldError(e, root, at);
      if (fe) yield fe;
    }
  }
  return uniqueFieldErrors(mapped(), MAX_FIELD_ERRORS + 1);
}

/**
 * Each `field` + `code` once, first one kept (validators whose parts overlap, such as a batch and its products), and
 * at most `limit` of them.
 */
export function uniqueFieldErrors(errors: Iterable<FieldError>, limit = Infinity): FieldError[] {
  const out: FieldError[] = [];
  const seen = new Set<string>();
  for (const fe of errors) {
    if (out.length >= limit) break;
    const key = `${fe.field}\u0000${fe.code}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(fe);
  }
  return out;
}

export interface Validator<T> {
  /**
   * Returns the field errors (empty when valid), their paths and messages under `at` when given (`items[3]`: a part
   * of a larger body). Query validators coerce `value` in place.
   */
  (value: unknown, at?: string): FieldError[];
  readonly schema: JsonSchema;
  readonly _type?: T;
}

function make<T>(ajv: Ajv, schema: JsonSchema, wellFormed: boolean): Validator<T> {
  const fn: ValidateFunction = ajv.compile(schema);
  const v = ((value: unknown, at = '') => {
    const errors = fn(value) ? [] : toFieldErrors(fn.errors, value, at);
    return wellFormed ? uniqueFieldErrors([...errors, ...unicodeErrors(value, at)]) : errors;
  }) as Validator<T>;
  (v as { schema: JsonSchema }).schema = schema;
  return v;
}

/** A body's shape only: no `unicode` check (the caller checks the parts it takes apart). */
export const shapeValidator = <T>(schema: JsonSchema): Validator<T> => make<T>(bodies, schema, false);
/** Bodies also refuse lone surrogates in every string and key, wherever they are (`unicode`). */
export const bodyValidator = <T>(schema: JsonSchema): Validator<T> => make<T>(bodies, schema, true);
export const queryValidator = <T>(schema: JsonSchema): Validator<T> => make<T>(queries, schema, false);
