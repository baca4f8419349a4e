/** 422s of a request's path and query parameters, shared by both doors (pure: they read plain objects). */
import { fieldError, type FieldError } from '../contract/problems.js';
import { EXTERNAL_ID_PATTERN } from '../contract/schemas/common.js';

/** Path parameters that are ExternalIds (`job_id` is an opaque string: an unknown one is simply 404). */
const EXTERNAL_ID_PARAMS = ['store_id', 'sku', 'order_id'];
const EXTERNAL_ID = new RegExp(EXTERNAL_ID_PATTERN);

/** 422 `pattern` for a path parameter outside ExternalId (it could never name a resource). */
export function pathParamErrors(params: Record<string, string>): FieldError[] {
  const errors = EXTERNAL_ID_PARAMS.filter((name) => params[name] !== undefined && !EXTERNAL_ID.test(params[name])).map(
    (name) => fieldError(name, 'pattern', `${name} must match ${EXTERNAL_ID_PATTERN}`),
  );
  if (params.period !== undefined && !PERIOD.test(params.period))
    errors.push(fieldError('period', 'pattern', 'period must be a month, YYYY-MM (e.g. 2026-10)'));
  return errors;
}

/** A closing's period: a calendar month (LEDGER.md "Monthly closings"). */
export const PERIOD_PATTERN = '^[0-9]{4}-(0[1-9]|1[0-2])$';
const PERIOD = new RegExp(PERIOD_PATTERN);

/** Writes take no query parameter: each one is `unknown_field`, as in bodies. */
export function writeQueryErrors(query: Record<string, unknown>): FieldError[] {
  return Object.keys(query).map((name) =>
    fieldError(name, 'unknown_field', `${name} is not a parameter of this route`),
  );
}

/**
 * The query of a public GET outside `/v1` (the shopper search, the changes feed): every name outside `allowed` is
 * `unknown_field`; `one` reads a parameter sent at most once (twice is `invalid`); `limit` reads an integer from 1 to
 * `max`. Each adds its failures to `errors`, so the caller answers one 422 listing them all.
 */
export function publicQuery(
  query: Record<string, string | string[] | undefined>,
  allowed: readonly string[],
  of: string,
) {
  const errors: FieldError[] = [];
  for (const k of Object.keys(query))
    if (!allowed.includes(k)) errors.push(fieldError(k, 'unknown_field', `\`${k}\` is not a parameter of ${of}.`));
  const one = (name: string): string | undefined => {
    const v = query[name];
    if (!Array.isArray(v)) return v;
    errors.push(fieldError(name, 'invalid', `Send \`${name}\` once.`));
    return undefined;
  };
  const limit = (fallback: number, max: number): number => {
    const raw = one('limit');
    if (raw === undefined) return fallback;
    // Four digits at most: no limit reaches 10000, and a longer string is never turned into a number.
    const n = /^[0-9]{1,4}$/.test(raw) ? Number(raw) : NaN;
    if (!(n >= 1 && n <= max))
      errors.push(fieldError('limit', 'out_of_range', `\`limit\` is an integer from 1 to ${max}.`));
    return n;
  };
  return { errors, one, limit };
}
