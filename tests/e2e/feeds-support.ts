/** Fixtures of the channel-feed HTTP tests (FEEDS.md): channels made through the admin API, feeds read as a channel. */
import fs from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { validate } from '@hyperjump/json-schema/openapi-3-1';
import '@hyperjump/json-schema/formats';
import type { Json } from '../../shared-schema/contract/openapi-publish.js';
import { describeErrors } from '../support/published-openapi.js';
import { processTempDir } from '../support/process-temp-dir.js';
import http from 'node:http';
import { expect } from 'chai';
import type { TestService } from '../support/service.js';
import { rootOf } from './shopper-support.js';

export type Channel = { channel_id: string; name: string; token: string };

export async function newChannel(t: TestService, name = 'Vitrine'): Promise<Channel> {
  const r = await t.admin.post('/channels', { name });
  expect(r.status, JSON.stringify(r.body)).to.equal(201);
  return r.body as Channel;
}

export type FeedAnswer = { status: number; headers: http.IncomingHttpHeaders; body: Buffer; text: string };

/** A feed request as a channel (raw bytes kept: the full feed may be gzip). */
export function feed(
  t: TestService,
  path: string,
  token: string | null,
  headers: Record<string, string> = {},
  method = 'GET',
): Promise<FeedAnswer> {
  return new Promise((resolve, reject) => {
    const u = new URL(`${rootOf(t)}${path}`);
    const req = http.request(
      {
        method,
        host: u.hostname,
        port: u.port,
        path: u.pathname + u.search,
        agent: false,
        headers: { ...(token !== null ? { Authorization: `Bearer ${token}` } : {}), ...headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const body = Buffer.concat(chunks);
          const text = (res.headers['content-encoding'] === 'gzip' ? gunzipSync(body) : body).toString('utf8');
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body, text });
        });
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** The rows of a TSV full feed, as objects by column name (the header line first). */
export function tsvRows(text: string): Record<string, string>[] {
  expect(text.endsWith('\n'), 'the feed ends with a newline').to.equal(true);
  const [header, ...lines] = text.slice(0, -1).split('\n');
  const columns = header.split('\t');
  return lines.map((line) => {
    const cells = line.split('\t');
    expect(cells.length, line).to.equal(columns.length);
    return Object.fromEntries(columns.map((c, i) => [c, cells[i]]));
  });
}

export type Change = { op: 'upsert'; offer: Record<string, unknown> & { id: string } } | { op: 'delete'; id: string };

/** Every change after `cursor` (page by page), and the cursor after the last. */
export async function allChanges(
  t: TestService,
  token: string,
  cursor: string | null,
  limit = 1000,
): Promise<{ changes: Change[]; cursor: string }> {
  const changes: Change[] = [];
  let at = cursor;
  for (;;) {
    const q = new URLSearchParams({ limit: String(limit), ...(at !== null ? { cursor: at } : {}) });
    const r = await feed(t, `/feeds/changes?${q.toString()}`, token);
    expect(r.status, r.text).to.equal(200);
    const page = JSON.parse(r.text) as { changes: Change[]; next_cursor: string };
    expect(page.next_cursor).to.be.a('string');
    changes.push(...page.changes);
    at = page.next_cursor;
    if (page.changes.length < limit) return { changes, cursor: at };
  }
}

/**
 * The served documents this process validated against, each in a file of its own (the validator caches by address;
 * the name ends in `.openapi.json`, by which it knows the media type).
 */
let servedDocuments = 0;

/**
 * Checks `value` against a schema of the channels' document as served at `/feeds/openapi.json`, by the outside
 * validator of the published documents (@hyperjump/json-schema, OpenAPI 3.1 dialect), and the document against the
 * OpenAPI 3.1 schema.
 */
export async function servedFeedsDocument(t: TestService): Promise<(schema: string, value: Json) => Promise<string>> {
  const r = await feed(t, '/feeds/openapi.json', null);
  expect(r.status, r.text).to.equal(200);
  expect(r.headers['content-type']).to.contain('application/json');
  const doc = JSON.parse(r.text) as Json;
  const document = await validate('https://spec.openapis.org/oas/3.1/schema-base', doc, 'BASIC');
  expect(document.valid, describeErrors(document)).to.equal(true);
  const file = path.join(processTempDir('feeds-openapi-'), `feeds-${++servedDocuments}.openapi.json`);
  fs.writeFileSync(file, r.text);
  return async (schema, value) => {
    const out = await validate(`file://${file}#/components/schemas/${schema}`, value, 'BASIC');
    return describeErrors(out);
  };
}
