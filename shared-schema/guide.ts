/**
 * The one-file integration guide served at `{base_url}/guia.md`: what a partner's engineer needs to integrate,
 * with curl examples. Markdown in a template literal (backticks escaped) so that the build ships it.
 */
import { MAX_FIELD_ERRORS, MAX_ITEM_ERRORS } from './problems.js';
import { PROBLEM_PAGES } from './problem-pages.js';
import { LEDGER_GUIDE } from './guide-ledger.js';
import { CONTRACT_VERSION } from './openapi.js';
import {
  BATCH_INPUT,
  CONVERSION_EVENT,
  PRODUCT_INPUT,
  PRODUCT_PATCH,
  SANDBOX_CLICK_INPUT,
  STORE_INPUT,
  WEBHOOK_INPUT,
} from './examples.js';

const WIDTH = 118;

/**
 * The `-d '…'` line(s) of a curl example: the JSON of `body` (the same example the OpenAPI document carries),
 * its top-level members packed into lines of at most WIDTH characters, a long array one element a line.
 */
export function curlBody(body: Record<string, unknown>): string {
  const first = "  -d '{";
  const indent = '       ';
  const members: string[] = [];
  for (const [k, v] of Object.entries(body)) {
    const member = `${JSON.stringify(k)}:${JSON.stringify(v)}`;
    if (indent.length + member.length <= WIDTH || !Array.isArray(v)) members.push(member);
    else members.push(`${JSON.stringify(k)}:[\n${v.map((x) => `${indent}  ${JSON.stringify(x)}`).join(',\n')}]`);
  }
  const out: string[] = [];
  let line = first;
  for (const [i, m] of members.entries()) {
    const piece = m + (i < members.length - 1 ? ',' : "}'");
    if (line !== first && line.length + piece.length > WIDTH) {
      out.push(line);
      line = indent;
    }
    line += piece;
  }
  out.push(line);
  return out.join('\n');
}

export function guide(apiBaseUrl: string): string {
  const PROBLEM_LINKS = Object.keys(PROBLEM_PAGES)
    .map((status) => `[${status}](${apiBaseUrl}/problemas/${status})`)
    .join(', ');
  return `# Guia de integração — Partner Commerce API

Integration guide for a partner's engineer, contract version \`${CONTRACT_VERSION}\`. The machine-readable
contract is \`${apiBaseUrl}/openapi.json\` (also \`${apiBaseUrl}/openapi.yaml\`); where this guide and that
document differ, the document wins. Every request body and answer in it has an example (the ones below), and it
imports as is: Postman (Import → Link → \`${apiBaseUrl}/openapi.json\`), Insomnia (Import → URL, same address) or
Swagger UI; a typed client comes from \`npx openapi-typescript ${apiBaseUrl}/openapi.json -o api.d.ts\`.
Everything below uses:

\`\`\`sh
BASE="${apiBaseUrl}"   # already ends in /v1
API_KEY="ik_test_..."   # your test key
\`\`\`

## 1. Keys and environments

- Every call carries \`Authorization: Bearer <API_KEY>\`. A missing, invalid or revoked key answers 401.
- The key decides the environment: \`ik_test_…\` writes to a test area that nobody sees; \`ik_live_…\` publishes to
  the site. Data is always limited to the partner and environment of the key.
- The operator issues keys: test keys first, a live key after the checklist at the end of this guide. During a
  rotation two keys may be valid at once.
- A **hub** key serves many stores (each product names its \`store_id\`); a **direct store** has one store per
  environment (a second one answers 422 \`single_store\`).
- Each key has scopes (\`catalog\`, \`clicks\`, \`conversions\`, \`reports\`); a route outside them answers 403.

\`\`\`sh
curl -s "$BASE/me" -H "Authorization: Bearer $API_KEY"
# {"partner_id":"pt_…","name":"…","partner_type":"hub","environment":"test","scopes":[…]}
\`\`\`

## 2. Conventions

- **JSON in UTF-8.** Send \`Content-Type: application/json\`. Bodies refuse any field not in the contract
  (\`unknown_field\`); so do query strings. Text must be well-formed Unicode: a lone surrogate escape
  (\`"\\ud800"\` without its pair) answers 422 \`unicode\` on its field.
- **Money** is integer cents of BRL: \`29990\` is R$ 299,90. Never decimals.
- **Dates** are ISO 8601 with a time zone: \`2026-03-01T14:30:00Z\` or \`2026-03-01T11:30:00-03:00\`.
- **Errors** are RFC 9457 problems (\`application/problem+json\`):

  \`\`\`json
  {"type":"${apiBaseUrl}/problemas/422","title":"Unprocessable Content","status":422,
   "request_id":"req_…","errors":[{"field":"items[3].unit_price_cents","code":"maximum","message":"…"}]}
  \`\`\`

  \`errors\` lists every invalid field at once, up to ${MAX_FIELD_ERRORS} (a batch: up to ${MAX_ITEM_ERRORS} per item; past that the problem says
  \`"errors_truncated": true\`); \`field\` is a JSON path (\`""\` means the whole body). Fix them all
  before repeating: an identical repeat gets the same answer. The \`type\` opens, without a key, a short page on
  when that status is answered and what to do: ${PROBLEM_LINKS}.
- **Request id**: every answer carries \`X-Request-Id\` (also in the problem's \`request_id\`). Quote it to support.
- **Idempotency**: writes accept \`Idempotency-Key\` (up to 100 characters). The same key with the same route and
  body within 24 h returns the original answer without writing again; the same key with another route or body
  answers 422. Only successful answers are remembered, so after a 5xx or a network failure repeat with growing
  waits **and the same key**. A repeat while the first request is still running waits for it (409
  \`idempotency_in_flight\` if it takes more than 10 s).
- **Pagination**: lists take \`cursor\` and \`limit\` (1 to 200, default 50) and answer \`{"data": […], "next_cursor": …}\`.
  Pass \`next_cursor\` back as \`cursor\` until it is \`null\`, with the same filters. Cursors are opaque and signed; they
  belong to your key's partner and environment, the list and its filters (any other cursor answers 422 \`invalid\` on
  \`cursor\`: start the list again).
- **Windows**: \`GET /clicks\`, \`GET /conversions\` and \`GET /reports/commission\` take \`since\` and \`until\`
  (date-times; UTC half-open interval [since, until)), at most 31 days, default the last 30 days up to now. A longer
  window or \`since >= until\` answers 422 \`window\`. The answer returns the normalized \`since\` and \`until\`: keep those
  exact values on the following pages.
- **Rate brake**: 600 writes and 1200 reads per minute per key. Above it: 429 with \`Retry-After\` (whole seconds,
  at least 1); wait that long, then repeat. A batch counts as one write.
- **Body size**: 5 MB for a batch, 1 MB for any other write (413 above, nothing written).

## 3. Stores and approval

Register every store before its products. \`store_id\` is yours (\`^[A-Za-z0-9._-]{1,80}$\`).

\`\`\`sh
curl -s -X PUT "$BASE/stores/loja-centro" \\
  -H "Authorization: Bearer $API_KEY" -H "Content-Type: application/json" \\
  -H "Idempotency-Key: store-loja-centro-1" \\
${curlBody(STORE_INPUT)}
\`\`\`

- \`cnpj\` may carry punctuation or not (alphanumeric CNPJs are accepted); check digits are verified (422 \`invalid\`)
  and the answer returns the 14 characters without punctuation. One CNPJ is one store (422 \`already_registered\`),
  and a store keeps its CNPJ for good (422 \`immutable\`; another company is another \`store_id\`).
- \`domains\` (1 to 5) are where your product pages live; \`image_hosts\` (up to 5) are photo CDNs. Every URL must be
  HTTPS. A domain is yours or below yours: a public suffix shared by unrelated sites (\`com.br\`, \`github.io\`,
  \`blogspot.com\`) answers 422 \`public_suffix\` on its index (\`domains[2]\`); declare \`loja.com.br\` instead.
- \`name\` is shown to shoppers: control characters and bidirectional overrides answer 422 \`control_character\`.
- A new store is \`pending_review\`. The service approves the store and each domain (\`domains_approved\`); until then
  your products are accepted but held in \`pending\` with reason \`store_not_active\` or \`domain_not_approved\`. A store
  can later be \`suspended\`.
- \`PUT\` replaces the store and keeps its status, except for a new \`name\`: an \`active\` store goes back to
  \`pending_review\` (its products wait with \`store_not_active\`) until the service approves it again; a
  \`suspended\` store stays \`suspended\`. Domains it adds start unapproved; domains it drops stop being approved.
- \`GET /stores\` and \`GET /stores/{store_id}\` read them back.
- A store's address on the site is your partner id and the \`store_id\`, both lower-cased
  (\`pt_7m2q9xkd4b8nrt6vw3hz/loja-centro\`): another partner's store of the same id never shares it. Two of your
  ids that differ only in case would share one, so the second answers 422 \`conflict\` on \`store_id\`.

## 4. Products

### Create or replace: \`PUT /products/{sku}\`

The SKU is your stable identifier, unique across all stores of your account; each colour or size is its own SKU
(tie variations together with \`group_id\`).

\`\`\`sh
curl -s -X PUT "$BASE/products/SKU-123-AZUL" \\
  -H "Authorization: Bearer $API_KEY" -H "Content-Type: application/json" \\
${curlBody(PRODUCT_INPUT)}
# {"sku":"SKU-123-AZUL","store_id":"loja-centro","state":"pending","received_at":"…",…}
\`\`\`

- \`PUT\` replaces the whole registration: a field you omit is gone (omitting \`commission\` removes the product rule).
- \`product_url\` must be on a declared domain of the store (422 \`domain_not_declared\`), without tracking
  parameters: the service appends \`svc_click\` itself. Photos must be on a store domain or image host
  (422 \`image_host_not_declared\`).
- \`original_price_cents\` (the "from" price) must be greater than \`price_cents\` (422 \`not_higher\`).
- Keys of \`attributes\` and \`variant_attributes\` are names of 1 to 80 characters without control characters
  (422 \`key_empty\`, \`key_too_long\`, \`key_control_character\`, each on the key's own path, such as
  \`attributes["a\\u0000b"]\`). Any other text, \`$\` and \`.\` included, is kept exactly as sent.
- Text a shopper sees (\`title\`, \`description\`, \`brand\`, \`model\`, \`category\`, attribute values) must not hold a
  control character (U+0000–U+001F, U+007F–U+009F; \`description\` takes tab and newline) or a bidirectional
  override or isolate (U+202A–U+202E, U+2066–U+2069): 422 \`control_character\` on the field (in a batch, on the
  item's path). Keys follow the same rule (\`key_control_character\`).
- Send only true data. Shipping you do not send is shown as "to be calculated", never as free; send
  \`{"type":"free"}\` only when it really is free.
- The \`store_id\` of a SKU never changes, even after a delete: 409 \`sku_store_conflict\` on \`store_id\`.

### Ordering by \`updated_at\`

\`updated_at\` is when the data changed on your side. The greatest \`updated_at\` wins: a submission older than the
last one received answers 200 with \`"ignored_stale": true\` and changes nothing, so concurrent senders never roll a
price back. An equal \`updated_at\` is applied. More than 24 h in the future answers 422 \`future\`.

### Partial update: \`PATCH /products/{sku}\`

\`updated_at\` plus at least one of \`price_cents\`, \`original_price_cents\` (null removes it), \`available\`,
\`stock_quantity\`, \`shipping\`, \`commission\` (null returns to the store rule). Only those fields change. 404 if the SKU
was never sent.

\`\`\`sh
curl -s -X PATCH "$BASE/products/SKU-123-AZUL" \\
  -H "Authorization: Bearer $API_KEY" -H "Content-Type: application/json" \\
${curlBody(PRODUCT_PATCH)}
\`\`\`

### Remove: \`DELETE /products/{sku}\`

Answers 204, also when the product was already absent. Its state becomes \`removed\` (\`GET\` still answers it).

### States

| State | Meaning |
| --- | --- |
| \`pending\` | received; cover check running, or held by \`store_not_active\` / \`domain_not_approved\` |
| \`accepted\` | live in search (\`svc_url\` shows where) |
| \`rejected\` | cover refused: \`image_unreachable\`, \`image_type\` or \`image_too_small\` (see \`reasons\`) |
| \`stale\` | no \`PUT\`/\`PATCH\` for more than 48 h; out of search until the next one |
| \`removed\` | deleted |

Read the state with \`GET /products/{sku}\` or reconcile with \`GET /products?store_id=…&state=rejected\`.

**Why is my offer (not) in search**: \`GET /products/{sku}/visibility\` answers \`searchable\` and the checks the
shopper search applies, in order — \`live\`, \`accepted\`, \`fresh\` (an applied write within 48 h), \`store_active\`,
\`domain_approved\`, \`available\` — each failed one with a \`detail\` (in Portuguese) saying what to do, and
\`fresh_until\`, when the offer leaves search unless you write it again. With a test key only \`live\` fails for a
product its live twin would show. \`GET /insights/catalog?store_id=…\` counts your products by state (as
\`GET /products?state=\` lists them), the searchable ones, and the reasons of the pending and rejected ones.

**Keep products fresh**: send a \`PUT\` or \`PATCH\` at least every 48 h for everything you want in search (a price and
stock refresh is enough).

**Cover rules**: the first of \`image_urls\` is the cover. It must open over HTTPS with status 200 on a store domain
or image host (redirects only inside them), be JPEG, PNG or WebP, and measure at least 500 px on the shorter side.
The check is asynchronous (seconds). A rejected cover is re-checked every hour and again within seconds after a
new \`PUT\`; an accepted one every 7 days.

### Commission

A rule is \`{"type":"percentage","rate":5.5}\` (0 to 100, two decimals: applied to the current \`price_cents\`, half a
cent rounded up), \`{"type":"fixed","amount_cents":500}\` (per unit), or \`null\`. The product rule wins over the
store's \`default_commission\`; with neither the expectation is unknown (\`null\`), not zero. Zero is an explicit rule.
Product answers show the effective \`commission\`, its \`commission_source\` and \`expected_commission_cents\` per unit.
Commission never changes search ranking.

## 5. Batches and jobs

Up to 1000 items (5 MB) per call, each an upsert or a delete, applied in array order:

\`\`\`sh
curl -s -X POST "$BASE/products/batch" \\
  -H "Authorization: Bearer $API_KEY" -H "Content-Type: application/json" \\
  -H "Idempotency-Key: batch-2026-03-01T16" \\
${curlBody(BATCH_INPUT)}
# 202 {"job_id":"job_…","state":"queued","totals":{"received":2,"accepted":0,"rejected":0,"pending":0,"removed":0},…}
\`\`\`

The 202 comes only after the batch is persisted. Poll \`GET /jobs/{job_id}\` until \`state\` is \`done\` (or \`failed\`);
then \`received = accepted + rejected + pending + removed\`, and each refused item is in \`errors\` with its \`index\`,
\`sku\` and \`reasons\` (same codes as single writes). \`pending\` is the state at processing time: read the product for
its current state. The body is checked before anything is queued: above 5 MB or 1000 items answers 413, and a body
that does not follow the schema answers 422 listing every invalid field (\`items[3].product.price_cents\`).

## 6. Clicks and \`svc_click\`

A shopper who clicks your product is sent through the service's redirector to your \`product_url\` with
\`?svc_click=<click code>\` (\`ic_…\`). On your site:

1. Read \`svc_click\` on landing and store it for **30 days** (a first-party cookie or your session store).
2. **The last click wins**: a new \`svc_click\` replaces the stored one.
3. Copy it to the order when the buyer pays: it is the \`click_id\` of your conversion events.

\`GET /clicks?since=…&until=…&store_id=…\` lists the clicks (ordered by time, store and id). Clicks carry no personal
data.

Your accepted offers also reach shoppers through **channels** (storefronts, messaging-app bots, comparison sites that
import the service's product feed). Nothing changes for you: a click through a channel's link comes to your page
with \`svc_click\` like any other, and counts and converts the same way.

In the test environment create clicks yourself (test key only; a live key answers 403 \`test_key_required\`):

\`\`\`sh
curl -s -X POST "$BASE/sandbox/clicks" \\
  -H "Authorization: Bearer $API_KEY" -H "Content-Type: application/json" \\
${curlBody(SANDBOX_CLICK_INPUT)}
# {"click_id":"ic_…","store_id":"loja-centro","sku":"SKU-123-AZUL","price_cents":27990,"occurred_at":"…"}
\`\`\`

## 7. Conversions

Your server calls \`POST /conversions\` for each event of an order that came from a click (the service sends no
webhook). Every event carries the whole order; \`click_id\` is the \`svc_click\` stored for that buyer. In test, take
\`click_id\` and \`occurred_at\` from the sandbox click above and use a \`paid_at\` at or after that \`occurred_at\` (a
payment before its click is not attributable):

\`\`\`sh
curl -s -X POST "$BASE/conversions" \\
  -H "Authorization: Bearer $API_KEY" -H "Content-Type: application/json" \\
${curlBody(CONVERSION_EVENT)}
\`\`\`

- **\`paid\`** comes first: \`occurred_at\` equal to \`paid_at\`, every \`refunded_cents\` 0. \`unit_price_cents\` is the net
  value paid per unit after discounts, without shipping. 1 to 200 items, unique SKUs, total up to 1 trillion cents.
- **\`refunded\`** repeats every original item and \`paid_at\`, with a new \`event_id\` and its own \`occurred_at\`.
  \`refunded_cents\` is the **cumulative refund of the whole line** (not per unit, not this event's increment), at
  most \`quantity × unit_price_cents\`. Refunds never go down.
- **\`cancelled\`** repeats every item with each line refunded in full. Nothing follows a cancellation.
- Amounts, quantities, SKUs, \`click_id\` and \`paid_at\` never change after \`paid\`.
- The click must be yours, of that environment and store, and have occurred up to 30 days before \`paid_at\`
  (inclusive); otherwise 422 \`invalid_attribution\` and nothing is written. A sale paid inside the window may be
  reported later.
- Event dates may be at most 5 minutes in the future. Send no buyer data (name, tax id, e-mail, phone, address):
  those fields are refused.

**Deduplication by \`event_id\`**: unique per partner and environment, across all stores, forever. The same body
again answers the first receipt with \`"duplicate": true\`; another body with a used \`event_id\` answers 409
\`event_conflict\`. \`Idempotency-Key\` also works (24 h). An order is unique per \`store_id\` + \`order_id\`; repeating it
never adds revenue. An event older than the last one applied answers 200 with \`"ignored_stale": true\` and changes
nothing.

| Answer | Code | What to do |
| --- | --- | --- |
| 409 | \`payment_required\` | a refund or cancellation arrived before \`paid\`: send \`paid\`, then resend it |
| 409 | \`event_conflict\` | a used \`event_id\` with another body: use a new \`event_id\` per event |
| 409 | \`order_conflict\` | immutable fields differ from the order, or two different events at the same instant |
| 409 | \`invalid_transition\` | \`paid\` after a refund or cancellation, a refund after \`cancelled\`, or a lower refund |
| 422 | \`invalid_attribution\` | the click cannot carry this order; \`errors[0].reason\` says why: \`unknown_click\` (no such click for this partner in this key's environment), \`other_store\`, \`click_after_payment\` (\`paid_at\` before the click), \`click_too_old\` (more than 30 days before \`paid_at\`) |
| 422 | field codes | e.g. \`items[0].refunded_cents\` above the line total, \`currency\` not \`BRL\`, unknown fields |

The answer (\`ConversionReceipt\`) is the order with its commission snapshot: the rule in force at the first \`paid\`
receipt per line, \`gross_cents\`, \`refunded_cents\`, \`net_cents\`, \`expected_commission_cents\` (null when a line with a
balance has no known rule) and \`known_expected_commission_cents\`. Percentage commission applies to the net value;
fixed commission is per unit and shrinks in proportion to refunds. Read orders with
\`GET /conversions?since=…&until=…\` (filtered by \`paid_at\`) or \`GET /conversions/{order_id}?store_id=…\`.

## 8. The commission report

\`\`\`sh
curl -s "$BASE/reports/commission?since=2026-03-01T00:00:00Z&until=2026-03-31T00:00:00Z" \\
  -H "Authorization: Bearer $API_KEY"
\`\`\`

Clicks are counted by \`occurred_at\`, orders by \`paid_at\` with their current state (later refunds included), so a
past period can change. \`totals\` and \`stores\` (every store with a click or an order) come from one snapshot. The
amount is an **expected** commission balance (\`commission_is: expected_not_settled\`), not a payment or a closing.

\`GET /insights/daily?since=…&until=…&store_id=…\` gives the same figures day by day (UTC dates, zeros included,
same window rules): \`clicks\`, \`orders\`, \`net_cents\` and \`known_expected_commission_cents\` per day, and
\`totals\` equal to the report's for the same window and store.

The partner portal at \`{site}/portal\` shows the same reads in a browser — catalog health, why an offer is (not)
in search, the last 30 days, the statement and the monthly closings with their CSV: sign in with an API key (the
session sees what the key sees and ends when the key is revoked, 12 h after sign-in, or on "Sair").

${LEDGER_GUIDE}
## 9. Checklist before asking for a live key

Run each item with your test key and keep the \`X-Request-Id\` of each answer:

1. \`GET /me\` answers your partner, \`environment: test\` and the scopes you need.
2. Each store is registered (\`PUT /stores/{store_id}\`) with valid CNPJ, HTTPS site and every product-page domain.
3. A product \`PUT\` answers \`pending\`, and \`GET /products/{sku}\` later shows \`accepted\` (after approval) or clear
   \`reasons\`; your cover photos pass the rules above.
4. A \`PATCH\` of price and stock works, and an older \`updated_at\` comes back \`ignored_stale: true\`.
5. Your job keeps every product fresh (a write at least every 48 h).
6. A batch is accepted (202) and its job reaches \`done\` with the totals you expect.
7. Your site stores \`svc_click\` for 30 days, last click wins, and copies it to the order.
8. With a sandbox click: \`paid\`, then a partial \`refunded\` (cumulative \`refunded_cents\`), then \`cancelled\`; a resend
   of the same event answers \`duplicate: true\`; a refund sent before its \`paid\` gets 409 \`payment_required\` and
   succeeds after the \`paid\`.
9. Your client handles 422 (fix every field), 409 (fix the cause), 429 (wait \`Retry-After\`) and 5xx / timeouts
   (repeat with growing waits and the same \`Idempotency-Key\`).
10. \`GET /clicks\`, \`GET /conversions\` and \`GET /reports/commission\` reconcile with your own records, following
    \`next_cursor\` with the returned \`since\`/\`until\`.
11. No buyer personal data is sent anywhere.

Then ask the operator for a live key. Live writes publish to the site.

## 10. What changed since you last looked: \`GET /events\`

\`\`\`sh
curl -s "$BASE/events?limit=100" -H "Authorization: Bearer $API_KEY"
curl -s "$BASE/events?cursor=$NEXT_CURSOR" -H "Authorization: Bearer $API_KEY"
\`\`\`

Your own notifications (scope \`catalog\`), in the order they happened: \`product.state_changed\` (a new SKU's first
state, then each change of the state \`GET /products/{sku}\` answers: the cover verdict, a removal, a re-check, a change
of the store, and \`stale\` when 48 h pass without a write), \`store.status_changed\`, \`store.domain_approved\` and
\`job.finished\` (with the job's totals). \`type=product.state_changed\` keeps one type. Keep the \`next_cursor\` of each
answer and ask again with it later: it is never null, and an empty \`data\` means nothing new yet. Each notification
has a stable \`id\`: walking the feed again from the start gives the same ids in the same order.

The same notifications can be pushed to your HTTPS endpoint, one per environment (the feed stays the reference):

\`\`\`sh
curl -s -X PUT "$BASE/webhook" -H "Authorization: Bearer $API_KEY" -H "Content-Type: application/json" \\
${curlBody(WEBHOOK_INPUT)}
\`\`\`

The answer that creates the endpoint holds its \`secret\` (\`whsec_…\`), shown only then: keep it. Each notification
after the registration is POSTed as JSON, in feed order, with \`Webhook-Id\` (the notification id: the same id may come
twice, skip it), \`Webhook-Timestamp\` (seconds) and \`Webhook-Signature\` (\`v1,\` + base64 of HMAC-SHA256 over
\`{id}.{timestamp}.{body}\` keyed with the bytes of the base64 after \`whsec_\`; the Standard Webhooks scheme, which
its libraries check). Answer any 2xx quickly; anything else is tried again after 1 min, 2 min, 4 min… (at most 1 h
apart) for 24 h, and later notifications wait behind it. \`GET /webhook\` shows the recent attempts;
\`DELETE /webhook\` stops them. A private or loopback address is never contacted.

## Changelog

- **\`svc_url\` holds your partner id** (a change of the beta contract, for safety): it was
  \`{site}/p/{store_id}/{sku}\`, so another partner who registered a store with your \`store_id\` could take
  your offer page and the clicks of its "Ir à loja" link. It is now \`{site}/p/{partner_id}/{store_id}/{sku}\`
  (partner and store lower-cased; test environment \`{site}/test/p/…\`). Links of the old shape answer 404:
  read \`svc_url\` from \`GET /products/{sku}\` rather than building it, and replace any copy you keep.
`;
}
