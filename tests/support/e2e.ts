/** Small helpers the HTTP end-to-end tests share: problem assertions, chunked concurrency, stream reads. */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import type { Answer, Partner, TestService } from './service.js';
import { streams, type Environment } from '../../shared-schema/domain/streams.js';
import { until } from './deadline.js';
import { GenerationalReadStore } from '../../projections/generations.js';

export type FieldErr = { field: string; code: string; message: string };

/** `field:code` of every error of a problem, sorted. */
export function fieldCodes(a: Answer): string[] {
  const errors = (a.body?.errors ?? []) as FieldErr[];
  return errors.map((e) => `${e.field}:${e.code}`).sort();
}

/** Asserts the RFC 9457 shape of the contract; `baseUrl` is `{base_url}` when the test knows it. */
export function expectProblem(a: Answer, status: number, baseUrl?: string): void {
  expect(a.status, JSON.stringify(a.body)).to.equal(status);
  expect(a.headers.get('content-type')).to.contain('application/problem+json');
  const requestId = a.headers.get('x-request-id');
  expect(requestId).to.be.a('string').and.not.equal('');
  expect(a.body).to.include({ status, request_id: requestId });
  expect(a.body.title).to.be.a('string').and.not.equal('');
  if (baseUrl) expect(a.body.type).to.equal(`${baseUrl}/problemas/${status}`);
  else expect(a.body.type).to.match(new RegExp(`/problemas/${status}$`));
  for (const e of (a.body.errors ?? []) as FieldErr[]) {
    expect(e.field).to.be.a('string');
    expect(e.code).to.be.a('string').and.not.equal('');
    expect(e.message).to.be.a('string').and.not.equal('');
  }
  // Every 422 says in its detail what its errors list (a reader of logs or a generic client sees it first).
  if (status === 422) expect(a.body.detail, 'a 422 has a detail').to.be.a('string').and.match(/\S/);
}

/** A fetch answer read whole as an `Answer` (its body parsed when it is JSON, '' when there is none). */
export async function answerOfFetch(r: Response): Promise<Answer> {
  const text = await r.text();
  const json = /\bjson\b/.test(r.headers.get('content-type') ?? '') && text !== '';
  return { status: r.status, body: json ? JSON.parse(text) : text, headers: r.headers };
}

/** What makes a problem answer the same whichever door wrote it: its media type and the headers every answer has. */
const PROBLEM_HEADERS = ['content-type', 'x-content-type-options', 'content-security-policy', 'referrer-policy'];
/** Headers a problem carries when its status calls for them. */
const STATUS_HEADERS = ['allow', 'retry-after', 'www-authenticate'];

/**
 * `a` is answered as `like` is, `like` being another door's problem of the same status: the same media type and
 * common headers, the same status headers present, the same body fields, type and title; each with its own request
 * id, and its own detail.
 */
export function expectProblemLike(a: Answer, like: Answer, baseUrl?: string): void {
  expectProblem(like, a.status, baseUrl);
  expectProblem(a, like.status, baseUrl);
  for (const h of PROBLEM_HEADERS) expect(a.headers.get(h), h).to.equal(like.headers.get(h));
  for (const h of STATUS_HEADERS) expect(a.headers.has(h), h).to.equal(like.headers.has(h));
  expect(Object.keys(a.body).sort()).to.deep.equal(Object.keys(like.body).sort());
  expect(a.body).to.include({ type: like.body.type, title: like.body.title });
  expect(a.body.request_id).not.to.equal(like.body.request_id);
}

/** A 422 whose errors are exactly `expected` (`field:code`, any order). */
export function expectInvalid(a: Answer, expected: string[]): void {
  expectProblem(a, 422);
  expect(fieldCodes(a)).to.deep.equal([...expected].sort());
}

/** Runs `fn(0..n-1)` with at most `size` requests in flight at once; results in index order. */
export async function inChunks<T>(n: number, size: number, fn: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  for (let start = 0; start < n; start += size) {
    const batch = await Promise.all(Array.from({ length: Math.min(size, n - start) }, (_, k) => fn(start + k)));
    out.push(...batch);
  }
  return out;
}

/** The events of a product stream, read through the operator's audit route ([] when the stream does not exist). */
export async function productEvents(
  t: TestService,
  p: Partner,
  sku: string,
  env: Environment = 'live',
): Promise<{ type: string; data: any }[]> {
  const name = streams.product({ partnerId: p.partnerId, env }, sku);
  const r = await t.admin.get(`/streams/${encodeURIComponent(name)}`);
  if (r.status === 404) return [];
  expect(r.status, JSON.stringify(r.body)).to.equal(200);
  return r.body.events;
}

/** Rebuilds the projection `name` through the admin API and waits until the new generation serves, live. */
export async function rebuildProjection(t: TestService, name: string): Promise<void> {
  const started = await t.admin.post(`/projections/${name}/rebuild`, {});
  expect(started.status, JSON.stringify(started.body)).to.equal(202);
  await until(
    async () => {
      const all = (await t.admin.get('/projections')).body.projections as {
        name: string;
        state: string;
        rebuild: { state: string } | null;
      }[];
      const p = all.find((x) => x.name === name);
      return p?.rebuild?.state === 'done' && p.state === 'live';
    },
    60_000,
    `${name} rebuilt`,
  );
  // With TOPOLOGY=multi the projections process switched the generation; this process's map follows on a message or
  // within its refresh period, so the test's own reads (`t.service.reads`) read the map now, as the switch left it.
  if (t.service.reads instanceof GenerationalReadStore) await t.service.reads.load();
}

/** Fisher–Yates with a fixed seed, so a failure can be replayed. */
export function shuffled<T>(items: readonly T[], seed = 42): T[] {
  const out = [...items];
  let s = seed;
  const rand = () => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return s / 2147483648;
  };
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

/** A valid CNPJ for a 12-character base (digits or upper-case letters), with its check digits. */
export function cnpjFor(base: string): string {
  const values = [...base.toUpperCase()].map((c) => c.charCodeAt(0) - 48);
  const digit = (w: number[]) => {
    const r = w.reduce((acc, wi, i) => acc + values[i] * wi, 0) % 11;
    return r < 2 ? 0 : 11 - r;
  };
  const d1 = digit([5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]);
  values.push(d1);
  const d2 = digit([6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]);
  return `${base.toUpperCase()}${d1}${d2}`;
}

/** What one run of the `ops` command line gave (stdout parsed as JSON when it is JSON). */
export interface OpsRun {
  code: number;
  stdout: string;
  stderr: string;
  json: any;
}

const OPS_ENTRY = fileURLToPath(new URL('../../infra/ops/cli/ops.js', import.meta.url));

/** Runs `ops ARGS` as a process against the admin port at `adminUrl` (ADMIN_URL; a variable set to undefined in `env` is removed). */
export function runOps(
  adminUrl: string,
  adminToken: string,
  args: string[],
  env: Record<string, string | undefined> = {},
): Promise<OpsRun> {
  return new Promise((resolve) => {
    const childEnv: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      ADMIN_URL: adminUrl,
      ADMIN_TOKEN: adminToken,
      ...env,
    };
    for (const k of Object.keys(childEnv)) if (childEnv[k] === undefined) delete childEnv[k];
    execFile(process.execPath, [OPS_ENTRY, ...args], { env: childEnv, timeout: 15_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      let json: unknown;
      try {
        json = JSON.parse(stdout);
      } catch {
        json = undefined;
      }
      resolve({ code, stdout, stderr, json });
    });
  });
}
