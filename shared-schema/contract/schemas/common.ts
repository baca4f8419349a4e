/**
 * JSON Schemas (draft 2020-12 subset ajv compiles) shared by the request validators and the published OpenAPI
 * document. Patterns that the contract writes `\\.` / `\\d` are Markdown escapes: they read `\.` and `\d`.
 */
import { MAX_FIELD_ERRORS, MAX_ITEM_ERRORS } from '../problems.js';

export type JsonSchema = Record<string, unknown>;

export const EXTERNAL_ID_PATTERN = '^[A-Za-z0-9._-]{1,80}$';

export const ExternalId: JsonSchema = { type: 'string', pattern: EXTERNAL_ID_PATTERN };

/** HTTPS URLs: a `pattern` failure here is reported with the code `https`. */
export const HTTPS_PATTERN = '^https://';
export const HttpsUrl: JsonSchema = { type: 'string', format: 'uri', pattern: HTTPS_PATTERN, maxLength: 2048 };

export const Domain: JsonSchema = { type: 'string', pattern: '^[a-z0-9.-]+\\.[a-z]{2,}$' };

/**
 * The one character rule for text a shopper sees: no C0 control (U+0000–U+001F), no DEL or C1 control
 * (U+007F–U+009F), no bidirectional override or isolate (U+202A–U+202E, U+2066–U+2069), which can make a title or
 * a store name read as something else. Zero-width marks (U+200B–U+200F) stay: emoji sequences and some scripts need
 * them (docs/adr/0069-shopper-text-characters.md). `MULTILINE_TEXT_PATTERN` also lets tab and newline through, for a
 * description. A failure is `control_character` (shared-schema/contract/validation.ts).
 */
export const REFUSED_BEYOND_C0 = '\\u007f-\\u009f\\u202a-\\u202e\\u2066-\\u2069';
export const TEXT_PATTERN = `^[^\\u0000-\\u001f${REFUSED_BEYOND_C0}]*$`;
export const MULTILINE_TEXT_PATTERN = `^[^\\u0000-\\u0008\\u000b-\\u001f${REFUSED_BEYOND_C0}]*$`;

/** Text a shopper sees, on one line (a title, a store name, an attribute value). */
export const ShopperText = (minLength: number, maxLength: number): JsonSchema => ({
  type: 'string',
  ...(minLength > 0 ? { minLength } : {}),
  maxLength,
  pattern: TEXT_PATTERN,
});

/**
 * A key of a partner's map (`attributes`, `variant_attributes`): 1 to 80 characters, none refused by the character
 * rule of text a shopper sees (the key is shown beside its value). Any other text is partner data — `$where`, `a.b`,
 * `__proto__` — and is stored and read back exactly (each read-store adapter's duty). Failures are `key_empty`,
 * `key_too_long`, `key_control_character` (shared-schema/contract/validation.ts).
 */
export const MAX_MAP_KEY_LENGTH = 80;
export const MapKey: JsonSchema = {
  type: 'string',
  minLength: 1,
  maxLength: MAX_MAP_KEY_LENGTH,
  pattern: TEXT_PATTERN,
};

export const DateTime: JsonSchema = { type: 'string', format: 'date-time' };

export const MAX_SAFE = 9007199254740991;

/** An integer the service holds exactly (JSON numbers above 2^53 - 1 lose digits): `maximum` beyond it. */
export const SafeInt = (minimum: number): JsonSchema => ({ type: 'integer', minimum, maximum: MAX_SAFE });

/** Commission: percentage, fixed, or null. Written with if/then so a bad rule reports only its own fields. */
export const Commission: JsonSchema = {
  type: ['object', 'null'],
  allOf: [
    {
      if: { type: 'object' },
      then: { required: ['type'], properties: { type: { enum: ['percentage', 'fixed'] } } },
    },
    {
      if: { type: 'object', properties: { type: { const: 'percentage' } }, required: ['type'] },
      then: {
        required: ['rate'],
        properties: { type: true, rate: { type: 'number', minimum: 0, maximum: 100, multipleOf: 0.01 } },
        additionalProperties: false,
      },
    },
    {
      if: { type: 'object', properties: { type: { const: 'fixed' } }, required: ['type'] },
      then: {
        required: ['amount_cents'],
        properties: { type: true, amount_cents: { type: 'integer', minimum: 0, maximum: MAX_SAFE } },
        additionalProperties: false,
      },
    },
  ],
};

export const Shipping: JsonSchema = {
  type: 'object',
  allOf: [
    { required: ['type'], properties: { type: { enum: ['free', 'fixed'] } } },
    {
      if: { properties: { type: { const: 'free' } }, required: ['type'] },
      then: {
        properties: {
          type: true,
          min_order_cents: SafeInt(0),
          delivery_days_min: SafeInt(0),
          delivery_days_max: SafeInt(0),
        },
        additionalProperties: false,
      },
    },
    {
      if: { properties: { type: { const: 'fixed' } }, required: ['type'] },
      then: {
        required: ['cost_cents'],
        properties: {
          type: true,
          cost_cents: SafeInt(0),
          delivery_days_min: SafeInt(0),
          delivery_days_max: SafeInt(0),
        },
        additionalProperties: false,
      },
    },
  ],
};

export const RejectionReason: JsonSchema = {
  type: 'object',
  required: ['code', 'message'],
  properties: { code: { type: 'string' }, field: { type: 'string' }, message: { type: 'string' } },
};

export const Problem: JsonSchema = {
  type: 'object',
  required: ['type', 'title', 'status'],
  properties: {
    type: { type: 'string' },
    title: { type: 'string' },
    status: { type: 'integer' },
    detail: { type: 'string' },
    request_id: { type: 'string' },
    errors: {
      type: 'array',
      maxItems: MAX_FIELD_ERRORS,
      description: `Every invalid field, up to ${MAX_FIELD_ERRORS} (a batch: up to ${MAX_ITEM_ERRORS} per item); past that, \`errors_truncated\`.`,
      items: {
        type: 'object',
        required: ['field', 'code', 'message'],
        properties: {
          field: { type: 'string' },
          code: { type: 'string' },
          message: { type: 'string' },
          reason: {
            type: 'string',
            description:
              'Which cause applies where a code has several (`invalid_attribution`: `unknown_click`, `other_store`, `click_after_payment`, `click_too_old`).',
          },
        },
      },
    },
    errors_truncated: {
      type: 'boolean',
      enum: [true],
      description:
        'Present (true) when more was wrong than `errors` lists: validation stopped at the cap. Correct what is listed and send again.',
    },
  },
};

/** Query parameters of every list. */
export const Limit: JsonSchema = { type: 'integer', minimum: 1, maximum: 200 };
/** Any malformed cursor, an oversized one included, is refused by the decoder as `cursor` + `invalid`. */
export const Cursor: JsonSchema = { type: 'string' };

export const nullable = (schema: JsonSchema): JsonSchema => ({ anyOf: [schema, { type: 'null' }] });
