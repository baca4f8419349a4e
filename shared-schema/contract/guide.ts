/**
 * The one-file integration guide served at `{base_url}/guia.md`: what a partner's engineer needs to integrate,
 * with curl examples. The text is guide/guia.md; here, what fills its `{{placeholders}}`: the base URL, the
 * contract version, the problem bounds and pages, and the curl bodies (the examples of the OpenAPI document).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { MAX_FIELD_ERRORS, MAX_ITEM_ERRORS } from './problems.js';
import { PROBLEM_PAGES } from '../html/problem-pages.js';
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

/**
 * The guide's text with its `{{placeholders}}`, shipped as the Markdown file itself (tsc copies no .md): read once
 * from the source tree, which `make run`, the topology's processes and the image all keep beside dist/, whether this
 * module runs compiled (dist/shared-schema/contract/) or not (shared-schema/contract/).
 */
let template: string | undefined;
function guideTemplate(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const up = path.resolve(here, '../..'); // dist/ when compiled, the repository root when not
  const root = path.basename(up) === 'dist' ? path.dirname(up) : up;
  return (template ??= fs.readFileSync(path.join(root, 'shared-schema', 'contract', 'guide', 'guia.md'), 'utf8'));
}

/** The examples a `{{curl NAME}}` placeholder shows: the very bodies the OpenAPI document carries. */
const CURL_EXAMPLES: Readonly<Record<string, Record<string, unknown>>> = {
  BATCH_INPUT,
  CONVERSION_EVENT,
  PRODUCT_INPUT,
  PRODUCT_PATCH,
  SANDBOX_CLICK_INPUT,
  STORE_INPUT,
  WEBHOOK_INPUT,
};

/** The guide for `apiBaseUrl`: every placeholder filled; one the guide names but nothing fills is a fault. */
export function guide(apiBaseUrl: string): string {
  const values: Record<string, string> = {
    base_url: apiBaseUrl,
    contract_version: CONTRACT_VERSION,
    max_field_errors: String(MAX_FIELD_ERRORS),
    max_item_errors: String(MAX_ITEM_ERRORS),
    problem_links: Object.keys(PROBLEM_PAGES)
      .map((status) => `[${status}](${apiBaseUrl}/problemas/${status})`)
      .join(', '),
  };
  return guideTemplate().replace(
    /\{\{(curl )?([A-Za-z_]+)\}\}/g,
    (placeholder, curl: string | undefined, name: string) => {
      const value = curl ? CURL_EXAMPLES[name] && curlBody(CURL_EXAMPLES[name]) : values[name];
      if (value === undefined) throw new Error(`guide: nothing fills ${placeholder}`);
      return value;
    },
  );
}
