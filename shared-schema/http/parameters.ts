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
