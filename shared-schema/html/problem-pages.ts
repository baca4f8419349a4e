/**
 * The pages behind every problem `type` (`{base_url}/problemas/<status>`): public, no key, one short page per status
 * saying when the service answers it and what the client does next (the contract's "client handling"). HTML by
 * default, JSON when the client prefers `application/json`.
 */
import { MAX_FIELD_ERRORS, MAX_ITEM_ERRORS, titleOf } from '../contract/problems.js';
import { MAX_JSON_DEPTH } from '../http/json.js';

interface ProblemPage {
  when: string;
  what_to_do: string;
}

export const PROBLEM_PAGES: Readonly<Record<number, ProblemPage>> = {
  400: {
    when: 'The request is not valid HTTP (a malformed request line or header); the service never read it.',
    what_to_do: 'Correct the request: an HTTP client library sends valid requests.',
  },
  401: {
    when: 'The `Authorization: Bearer <API_KEY>` header is missing, or the key is unknown or revoked.',
    what_to_do:
      'Send a valid key (`ik_test_…` for the test environment, `ik_live_…` for the site). Ask the operator for a new key if yours was revoked.',
  },
  403: {
    when: 'The key lacks the scope the endpoint needs (catalog, clicks, conversions, reports), or a live key called a test-only endpoint (`test_key_required`).',
    what_to_do:
      'Use a key issued with that scope, or a test key for `/sandbox/*`. Repeating with the same key gives the same answer.',
  },
  404: {
    when: 'The resource does not exist for this partner in the environment of the key, or the path is not part of the API (phase 3 paths included).',
    what_to_do:
      'Check the id and the key: the key decides the environment, so a resource written with a test key is not found with a live key.',
  },
  405: {
    when: 'The path exists but not with this method.',
    what_to_do: 'Use one of the methods of the `Allow` header.',
  },
  408: {
    when: 'The request line and headers did not arrive within 66 seconds, or the request body did not arrive within 30 s of its headers (60 s for `POST /products/batch`): nothing was written, and the connection is closed.',
    what_to_do:
      'Repeat on a new connection with the same `Idempotency-Key`; send the body at once after the headers, and split a batch that your link cannot upload in time.',
  },
  409: {
    when: 'A conversion event conflicts with what the order already holds (`event_conflict`, `order_conflict`, `payment_required`, `invalid_transition`), a SKU was sent with another store (`sku_store_conflict`), or a request with the same `Idempotency-Key` is still running (`idempotency_in_flight`).',
    what_to_do:
      'Read `errors[].code` and correct the cause before repeating (for `payment_required`: send `paid`, then resend the refund).',
  },
  410: {
    when: 'Channel feeds only (`GET /feeds/changes`): the cursor is older than the changes the service still keeps, or no cursor was sent after the oldest changes were dropped; the changes between it and the oldest kept are gone.',
    what_to_do:
      'Take a new snapshot: read `GET /feeds/offers.tsv` again and follow the changes from its `Feed-Cursor`. Follow the changes more often than the retention the operator set (30 days by default).',
  },
  413: {
    when: 'The request body is above the limit: 5 MB for `POST /products/batch`, 1 MB for any other route, or a batch of more than 1000 items.',
    what_to_do: 'Split the batch into smaller ones (1 to 1000 items, at most 5 MB each).',
  },
  422: {
    when: `The body or the query is invalid: \`errors\` lists every invalid field at once, each with \`field\` (a JSON path such as \`items[3].unit_price_cents\`), \`code\` and \`message\`, up to ${MAX_FIELD_ERRORS} (a batch: up to ${MAX_ITEM_ERRORS} per item); past that the problem says \`errors_truncated: true\`. JSON nested deeper than ${MAX_JSON_DEPTH} levels is \`json\` on \`""\`. Also a reused \`Idempotency-Key\` with another route or body, an invalid cursor, and \`invalid_attribution\` on conversions.`,
    what_to_do:
      'Correct every field listed in `errors` before repeating: an identical repeat gives the same answer. With `errors_truncated`, more may follow once those are corrected.',
  },
  429: {
    when: 'The rate brake of the key: 600 writes and 1200 reads per minute (a batch counts as one write); or too many bodies still uploading at once (8 per key, 16 per client address). Outside `/v1`, the brake per client address: 120 searches and 60 recorded clicks per minute.',
    what_to_do: 'Wait the seconds of the `Retry-After` header, then repeat.',
  },
  431: {
    when: 'The request line and headers are above 16 KB together (a query string that long, or a huge header); the service never read it.',
    what_to_do: 'Send shorter parameters and headers: every parameter of the API fits well within the limit.',
  },
  500: {
    when: 'An error of the service.',
    what_to_do:
      'Repeat with growing waits and the same `Idempotency-Key`; quote the `X-Request-Id` to support if it persists.',
  },
  503: {
    when: 'The service is briefly unavailable, too many writes reached the same resource at once, or a statement or closing is still waiting for events recorded before it.',
    what_to_do:
      'Wait the seconds of the `Retry-After` header, then repeat (a write with the same `Idempotency-Key`: nothing was written).',
  },
};

export const PROBLEM_PAGE_PATHS: readonly string[] = Object.keys(PROBLEM_PAGES).map((status) => `/problemas/${status}`);

const escape = (text: string): string =>
  text.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);
const inline = (text: string): string => escape(text).replace(/`([^`]+)`/g, '<code>$1</code>');

export function problemPageJson(status: number, baseUrl: string): string {
  const page = PROBLEM_PAGES[status];
  return JSON.stringify({ type: `${baseUrl}/problemas/${status}`, title: titleOf(status), status, ...page });
}

export function problemPageHtml(status: number, baseUrl: string): string {
  const page = PROBLEM_PAGES[status];
  const title = `${status} ${titleOf(status)}`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escape(title)} · Partner Commerce API</title></head>
<body style="font-family: system-ui, sans-serif; max-width: 40rem; margin: 2rem auto; padding: 0 1rem; line-height: 1.5">
<h1>${escape(title)}</h1>
<h2>When</h2><p>${inline(page.when)}</p>
<h2>What to do</h2><p>${inline(page.what_to_do)}</p>
<p>Every error is an RFC 9457 problem (<code>application/problem+json</code>) whose <code>type</code> is this page. See the <a href="${escape(baseUrl)}/guia.md">integration guide</a>.</p>
</body></html>
`;
}
