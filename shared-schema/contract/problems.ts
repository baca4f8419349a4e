/**
 * Problems (RFC 9457) as Error subclasses that carry a status and the list of field errors.
 * One middleware turns them into `application/problem+json`; nothing else formats errors.
 */

export interface FieldError {
  /** JSON path such as `items[3].unit_price_cents`, `store_id`, or `""` for the whole body. */
  field: string;
  code: string;
  message: string;
  /** Which cause of a code applies, where one code has several (`invalid_attribution`: `unknown_click`, …). */
  reason?: string;
}

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail?: string;
  request_id?: string;
  errors?: FieldError[];
  /** True when more was wrong than `errors` lists (it holds at most MAX_FIELD_ERRORS). */
  errors_truncated?: boolean;
}

/**
 * A problem lists at most this many field errors (a batch at most MAX_ITEM_ERRORS per item): past it the answer says
 * `errors_truncated: true`. Validators stop there too, so a body full of mistakes costs no more than a short one.
 */
export const MAX_FIELD_ERRORS = 100;
export const MAX_ITEM_ERRORS = 20;

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  408: 'Request Timeout',
  409: 'Conflict',
  410: 'Gone',
  413: 'Content Too Large',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  499: 'Client Closed Request',
  500: 'Internal Server Error',
  501: 'Not Implemented',
  503: 'Service Unavailable',
};

export class ProblemError extends Error {
  readonly expose = true;
  readonly errors: FieldError[];
  /** More errors were found (or left unsought) than `errors` holds. */
  readonly truncated: boolean;
  constructor(
    readonly status: number,
    errors: FieldError[] = [],
    readonly detail?: string,
    readonly headers: Record<string, string> = {},
    truncated = false,
  ) {
    const listed = errors.length > MAX_FIELD_ERRORS ? errors.slice(0, MAX_FIELD_ERRORS) : errors;
    super(detail ?? listed.map((e) => `${e.field}: ${e.code}`).join('; '));
    this.name = 'ProblemError';
    this.errors = listed;
    this.truncated = truncated || listed.length < errors.length;
  }

  toBody(baseUrl: string, requestId?: string): ProblemBody {
    const body: ProblemBody = {
      type: `${baseUrl}/problemas/${this.status}`,
      title: titleOf(this.status),
      status: this.status,
    };
    const detail = this.detail ?? summary(this.status, this.errors, this.truncated);
    if (detail) body.detail = detail;
    if (requestId) body.request_id = requestId;
    if (this.errors.length > 0) body.errors = this.errors;
    if (this.truncated) body.errors_truncated = true;
    return body;
  }
}

/** A 422 without a detail of its own says, in one sentence, what its `errors` list. */
function summary(status: number, errors: readonly FieldError[], truncated: boolean): string | undefined {
  if (status !== 422 || errors.length === 0) return undefined;
  if (truncated) {
    return `errors lists the first ${errors.length} problems found, where the check stopped: correct them and send the body again to find any others.`;
  }
  const fields = [...new Set(errors.map((e) => e.field || '(the body)'))];
  const named =
    fields.length > 5 ? `${fields.slice(0, 5).join(', ')} and ${fields.length - 5} more` : fields.join(', ');
  return errors.length === 1
    ? `${errors[0].message.replace(/\.?$/, '.')} Correct it before repeating.`
    : `${errors.length} problems in ${named}: correct every one listed in errors before repeating.`;
}

export function titleOf(status: number): string {
  return TITLES[status] ?? 'Error';
}

export const fieldError = (field: string, code: string, message: string): FieldError => ({ field, code, message });

/** 422 with every invalid field (up to MAX_FIELD_ERRORS; `truncated` when the validator stopped there). */
export const invalid = (errors: FieldError[], truncated = false): ProblemError =>
  new ProblemError(422, errors, undefined, {}, truncated);
export const invalidField = (field: string, code: string, message: string): ProblemError =>
  new ProblemError(422, [fieldError(field, code, message)]);
export const conflict = (field: string, code: string, message: string): ProblemError =>
  new ProblemError(409, [fieldError(field, code, message)]);
export const notFound = (detail: string): ProblemError => new ProblemError(404, [], detail);
/** 405: the method is not served at this path; `allow` lists those that are (`GET, HEAD`), sent as `Allow`. */
export const methodNotAllowed = (method: string, allow: string): ProblemError =>
  new ProblemError(405, [], `${method} is not allowed here; allowed: ${allow}.`, { Allow: allow });
/** RFC 6750: a 401 names the scheme it wants. */
export const BEARER_CHALLENGE = { 'WWW-Authenticate': 'Bearer realm="partner-commerce"' } as const;
export const unauthorized = (): ProblemError =>
  new ProblemError(401, [], 'Send a valid API key in the header `Authorization: Bearer <API_KEY>`.', {
    ...BEARER_CHALLENGE,
  });
export const forbidden = (detail: string, code?: string): ProblemError =>
  new ProblemError(403, code ? [fieldError('', code, detail)] : [], detail);
