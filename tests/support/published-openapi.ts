/**
 * The published OpenAPI document read by an outside validator: @hyperjump/json-schema (OpenAPI 3.1 dialect), an
 * independent JSON Schema 2020-12 implementation, not the service's ajv. It checks the document against the OAS 3.1
 * schema, example values against their schemas, and (with OPENAPI_CHECK_ANSWERS=1) every JSON answer the test
 * client receives from the partner API against the answer the document gives for that operation and status.
 */
import fs from 'node:fs';
import path from 'node:path';
import { validate, setShouldValidateFormat, type Output, type OutputUnit } from '@hyperjump/json-schema/openapi-3-1';
import '@hyperjump/json-schema/formats';
import { processTempDir } from './process-temp-dir.js';
import { buildOpenApi } from '../../shared-schema/contract/openapi.js';
import { API_ROUTES } from '../../infra/wiring/api-routes.js';
import type { Json } from '../../shared-schema/contract/openapi-publish.js';

export const PUBLISHED_BASE = 'http://127.0.0.1/v1';
export type Doc = { [key: string]: Json };

setShouldValidateFormat(true);

let written: { doc: Doc; uri: string } | undefined;

/** The document as served (buildOpenApi), written once to a temp `*.openapi.json` file the validator loads. */
export function publishedDocument(): { doc: Doc; uri: string } {
  if (!written) {
    const doc = buildOpenApi(PUBLISHED_BASE, API_ROUTES) as Doc;
    const file = path.join(processTempDir('published-openapi-'), 'partner.openapi.json');
    fs.writeFileSync(file, JSON.stringify(doc));
    written = { doc, uri: `file://${file}` };
  }
  return written;
}

/** `['paths', '/products/{sku}', 'put']` → `#/paths/~1products~1%7Bsku%7D/put`. */
export function pointer(parts: readonly string[]): string {
  return '#' + parts.map((p) => '/' + encodeURIComponent(p.replace(/~/g, '~0').replace(/\//g, '~1'))).join('');
}

type Check = (value: Json) => Output;
const compiled = new Map<string, Promise<Check>>();

/** Validates `value` against the schema at `parts` of the published document (compiled once per location). */
export async function validateAt(parts: readonly string[], value: Json): Promise<Output> {
  const { uri } = publishedDocument();
  const at = uri + pointer(parts);
  let check = compiled.get(at);
  if (!check) {
    check = validate(at).then((v) => (x: Json) => v(x, 'BASIC'));
    compiled.set(at, check);
  }
  return (await check)(value);
}

/** The document itself against the OpenAPI 3.1 schema (with the OAS dialect for its schemas). */
export async function validateDocument(): Promise<Output> {
  return validate('https://spec.openapis.org/oas/3.1/schema-base', publishedDocument().doc, 'BASIC');
}

export const describeErrors = (o: Output): string =>
  o.valid
    ? ''
    : JSON.stringify(
        (o.errors ?? []).slice(0, 6).map((e: OutputUnit) => ({
          at: e.instanceLocation,
          keyword: e.keyword,
          schema: e.absoluteKeywordLocation.replace(/^.*#/, '#'),
        })),
      );

/** The curl examples of the guide: method, path and the JSON of `-d '…'`. */
export function guideBodies(text: string): { method: string; path: string; body: Json }[] {
  const out: { method: string; path: string; body: Json }[] = [];
  for (const m of text.matchAll(/curl -s -X (PUT|POST|PATCH) "\$BASE(\/[^"?]*)"[^']*?-d '([^']*)'/g)) {
    out.push({ method: m[1], path: m[2], body: JSON.parse(m[3]) as Json });
  }
  return out;
}

// ------------------------------------------------------------------------------------------- answer checks

/** Answers that did not validate, in the order seen: `METHOD path status: errors`. */
export const answerFailures: string[] = [];
export let answersChecked = 0;

export const checkingAnswers = (): boolean => process.env.OPENAPI_CHECK_ANSWERS === '1';

/** The document's path template and method object for a request path (`/products/SKU-1?x` → `/products/{sku}`). */
function operationOf(doc: Doc, method: string, requestPath: string): { template: string; op: Doc } | null {
  const segments = requestPath.split('?')[0].split('/');
  for (const [template, item] of Object.entries(doc.paths as Doc)) {
    const t = template.split('/');
    if (t.length !== segments.length) continue;
    if (!t.every((s, i) => (s.startsWith('{') && s.endsWith('}') ? segments[i] !== '' : s === segments[i]))) continue;
    const op = (item as Doc)[method.toLowerCase()];
    if (op && typeof op === 'object' && !Array.isArray(op)) return { template, op: op };
  }
  return null;
}

/**
 * Checks one answer of the partner API (`base` ends in `/v1`, not the admin API): a path of the document must
 * answer a status the document lists, and a JSON body must validate against that status's schema. Paths outside
 * the document (Phase 3 paths, unknown routes) and 5xx answers are not part of the contract and are skipped.
 */
export async function checkAnswer(
  base: string,
  method: string,
  requestPath: string,
  status: number,
  contentType: string,
  body: unknown,
): Promise<void> {
  if (!/\/v1$/.test(base) || /\/admin\/v1$/.test(base) || status >= 500) return;
  const { doc } = publishedDocument();
  const found = operationOf(doc, method, requestPath);
  if (!found) return;
  answersChecked++;
  const where = `${method} ${requestPath} ${status}`;
  const responses = found.op.responses as Doc;
  let response = responses[String(status)] as Doc | undefined;
  let parts = ['paths', found.template, method.toLowerCase(), 'responses', String(status)];
  if (!response) {
    answerFailures.push(`${where}: status not in the document (${Object.keys(responses).join(', ')})`);
    return;
  }
  if (typeof response.$ref === 'string') {
    parts = response.$ref.slice(2).split('/');
    response = ((doc.components as Doc).responses as Doc)[parts[2]] as Doc | undefined;
  }
  const media = contentType.split(';')[0].trim();
  const content = response?.content as Doc | undefined;
  if (!content) {
    if (status !== 204 && media !== '') answerFailures.push(`${where}: a ${media} body where the document has none`);
    return;
  }
  if (!content[media]) {
    answerFailures.push(
      `${where}: media type ${media || '(none)'} not in the document (${Object.keys(content).join(', ')})`,
    );
    return;
  }
  if (!media.includes('json')) return;
  const out = await validateAt([...parts, 'content', media, 'schema'], body as Json);
  if (!out.valid) answerFailures.push(`${where}: ${describeErrors(out)} body ${JSON.stringify(body).slice(0, 300)}`);
}
