/** 422s of a request's path and query parameters, shared by both doors (pure: they read plain objects). */
import { fieldError, type FieldError } from '../problems.js';
import { EXTERNAL_ID_PATTERN } from '../schemas/common.js';

/** Path parameters that are ExternalIds (`job_id` is an opaque string: an unknown one is simply 404). */
const EXTERNAL_ID_PARAMS = ['store_id', 'sku', 'order_id'];
const EXTERNAL_ID = new RegExp(EXTERNAL_ID_PATTERN);

/** 422 `pattern` for a path parameter outside ExternalId (it could never name a resource). */
export function pathParamErrors(params: Record<string, string>): FieldError[] {
  return EXTERNAL_ID_PARAMS.filter((name) => params[name] !== undefined && !EXTERNAL_ID.test(params[name])).map(
    (name) => fieldError(name, 'pattern', `${name} must match ${EXTERNAL_ID_PATTERN}`),
  );
}

/** Writes take no query parameter: each one is `unknown_field`, as in bodies. */
export function writeQueryErrors(query: Record<string, unknown>): FieldError[] {
  return Object.keys(query).map((name) =>
    fieldError(name, 'unknown_field', `${name} is not a parameter of this route`),
  );
}
