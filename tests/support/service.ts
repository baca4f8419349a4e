/**
 * Starts the real service (embedded default: SQLite files on disk in a temp dir, manual clock) on loopback ports
 * chosen by the OS, and gives tests an HTTP client for the partner API and the admin API.
 */
import fs from 'node:fs';
import { removeDir } from './deadline.js';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { loadConfig } from '../../infra/wiring/config.js';
import { engineEnv } from './engines.js';
import { startService, type Service, type StartOptions } from '../../infra/wiring/service.js';
import { portOf } from '../../infra/http/gateway.js';
import type { ManualClock } from '../../shared-schema/ports/clock.js';
import type { OperationsSettings } from '../../infra/ops/settings.js';
import type { Messaging } from '../../shared-schema/ports/messaging.js';
import type { CoverChecker } from '../../shared-schema/ports/cover-checker.js';
import type { EventStore } from '../../shared-schema/ports/event-store.js';
import { answerFailures, answersChecked, checkAnswer, checkingAnswers } from './published-openapi.js';

// OPENAPI_CHECK_ANSWERS=1 (make test sets it): every answer of the partner API that client() receives is checked
// against the published document by an outside validator; one root hook fails the run if any did not validate.
if (checkingAnswers() && typeof after === 'function') {
  after('every answer of the partner API validates against the published OpenAPI document', function () {
    console.log(
      `  published OpenAPI: ${answersChecked} answers of the partner API checked, ${answerFailures.length} not valid`,
    );
    if (answerFailures.length > 0) {
      throw new Error(
        `${answerFailures.length} of ${answersChecked} answers do not follow the published document:\n${answerFailures.slice(0, 20).join('\n')}`,
      );
    }
  });
}

export interface Answer<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

export interface Client {
  get<T = any>(path: string, headers?: Record<string, string>): Promise<Answer<T>>;
  put<T = any>(path: string, body: unknown, headers?: Record<string, string>): Promise<Answer<T>>;
  patch<T = any>(path: string, body: unknown, headers?: Record<string, string>): Promise<Answer<T>>;
  post<T = any>(path: string, body: unknown, headers?: Record<string, string>): Promise<Answer<T>>;
  delete<T = any>(path: string, headers?: Record<string, string>): Promise<Answer<T>>;
  request<T = any>(
    method: string,
    path: string,
    options?: { body?: string | Uint8Array; headers?: Record<string, string> },
  ): Promise<Answer<T>>;
}

export function client(base: string, bearer?: string): Client {
  const request = async (
    method: string,
    p: string,
    options: { body?: string | Uint8Array; headers?: Record<string, string> } = {},
  ) => {
    const headers: Record<string, string> = { ...(options.headers ?? {}) };
    if (bearer && headers.Authorization === undefined) headers.Authorization = `Bearer ${bearer}`;
    const res = await fetch(base + p, {
      method,
      headers,
      ...(options.body !== undefined
        ? { body: typeof options.body === 'string' ? options.body : new Uint8Array(options.body) }
        : {}),
    }).catch((err: unknown) => {
      // undici says only "fetch failed": name the request and the socket's own error (ECONNREFUSED, a reset…).
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      throw new Error(
        `${method} ${base + p}: ${(err as Error).message} (${cause?.code ?? cause?.message ?? 'no cause'})`,
        {
          cause: err,
        },
      );
    });
    const text = await res.text();
    let body: unknown = text;
    if ((res.headers.get('content-type') ?? '').includes('json') && text) body = JSON.parse(text);
    if (checkingAnswers()) await checkAnswer(base, method, p, res.status, res.headers.get('content-type') ?? '', body);
    return { status: res.status, body, headers: res.headers } as Answer;
  };
  const json =
    (method: string) =>
    (p: string, body: unknown, headers: Record<string, string> = {}) =>
      request(method, p, { body: JSON.stringify(body), headers: { 'Content-Type': 'application/json', ...headers } });
  return {
    get: (p, headers) => request('GET', p, headers ? { headers } : {}),
    put: json('PUT'),
    patch: json('PATCH'),
    post: json('POST'),
    delete: (p, headers) => request('DELETE', p, headers ? { headers } : {}),
    request,
  };
}

export interface Partner {
  partnerId: string;
  key: string;
  keyId: string;
  api: Client;
}

export interface TestService {
  service: Service;
  api: string;
  clock: ManualClock;
  admin: Client;
  dataDir: string;
  /** Creates a partner with one key of the environment. */
  partner(options?: {
    type?: 'hub' | 'store';
    env?: 'live' | 'test';
    scopes?: string[];
    name?: string;
  }): Promise<Partner>;
  /** Another key for the same partner. */
  key(partnerId: string, env: 'live' | 'test', scopes?: string[]): Promise<Partner>;
  as(key: string): Client;
  approveStore(p: Partner, storeId: string, env?: 'live' | 'test'): Promise<Answer>;
  /** Stops and starts the service on its data; the clock resumes where it was, or at `at` (time passed while down). */
  restart(at?: Date): Promise<void>;
  close(): Promise<void>;
}

/**
 * Partners, keys and store approval through the admin API of `t` (read at each call: a restart replaces its clients).
 * Both the embedded and the multi-process test services use these.
 */
export function partnerHelpers(
  service: () => Pick<TestService, 'admin' | 'api'>,
): Pick<TestService, 'partner' | 'key' | 'as' | 'approveStore'> {
  const helpers: Pick<TestService, 'partner' | 'key' | 'as' | 'approveStore'> = {
    async partner(options = {}) {
      const created = await service().admin.post('/partners', {
        name: options.name ?? 'Loja Teste',
        partner_type: options.type ?? 'hub',
      });
      if (created.status !== 201) throw new Error(`partner: ${created.status} ${JSON.stringify(created.body)}`);
      return helpers.key(created.body.partner_id, options.env ?? 'live', options.scopes);
    },
    async key(partnerId, environment, scopes) {
      const issued = await service().admin.post(
        `/partners/${partnerId}/keys`,
        scopes ? { environment, scopes } : { environment },
      );
      if (issued.status !== 201) throw new Error(`key: ${issued.status} ${JSON.stringify(issued.body)}`);
      return {
        partnerId,
        key: issued.body.api_key,
        keyId: issued.body.key_id,
        api: client(service().api, issued.body.api_key),
      };
    },
    as: (key) => client(service().api, key),
    approveStore: (p, storeId, environment = 'live') =>
      service().admin.post(`/partners/${p.partnerId}/${environment}/stores/${storeId}/approve`, {}),
  };
  return helpers;
}

/**
 * With `TOPOLOGY=multi` in the environment, starts the distributed topology instead (separate processes, NATS,
 * nginx: tests/support/topology-service.ts), so the same end-to-end files run against it.
 */
export interface TestServiceOptions {
  operations?: Partial<OperationsSettings>;
  /** Embedded only: opens the messaging of each start (and restart) instead of the in-process one (e.g. NATS). */
  messaging?: () => Promise<Messaging>;
  /** Embedded only: replaces the cover check's HTTPS fetcher. */
  coverChecker?: CoverChecker;
  /** Embedded only: the service's logger (default: silent, or TEST_LOG_LEVEL). */
  log?: pino.Logger;
  /** Embedded only: the projection thread's poll interval (StartOptions.projectionThreadPollMs). */
  projectionThreadPollMs?: number;
  /** Embedded only: wraps the event store of each start (fault injection). */
  eventStore?: (opened: EventStore) => EventStore;
  /** Embedded only: wraps the shopper search the query door calls (StartOptions.wrapSearch). */
  wrapSearch?: StartOptions['wrapSearch'];
  /** TOPOLOGY=multi only: how many command-api replicas (default 2); per-process counts need one to be exact. */
  commandReplicas?: number;
}

export async function startTestService(
  env: Record<string, string> = {},
  keepDir?: string,
  serviceOptions: TestServiceOptions = {},
): Promise<TestService> {
  if (process.env.TOPOLOGY === 'multi') {
    const { startMultiTestService } = await import('./topology-service.js');
    const { operations = {}, commandReplicas } = serviceOptions;
    return startMultiTestService(env, keepDir, {
      operations,
      ...(commandReplicas !== undefined ? { commandReplicas } : {}),
    });
  }
  const dataDir = keepDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'pc-test-'));
  const engines = engineEnv(process.env, dataDir);
  // The cover check is off unless a test turns it on with its own COVER_FETCH_* settings: with it on, a product's
  // cover host would be looked up in the DNS, and tests never send traffic outside loopback.
  const configFor = () =>
    loadConfig({
      PORT: '0',
      ADMIN_PORT: '0',
      DATA_DIR: dataDir,
      CLOCK: 'manual',
      ADMIN_TOKEN: 'test-admin-token-0123456789',
      COVER_CHECK: 'off',
      ...engines,
      ...env,
    });
  const config = configFor();
  const log = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
  const { messaging: openMessaging, ...rest } = serviceOptions;
  const storeMode = Object.keys(engines).length > 0 ? ('configured' as const) : ('embedded' as const);
  const start = async (c: typeof config, clockAt?: Date) =>
    startService(c, {
      log,
      storeMode,
      ...rest,
      ...(openMessaging ? { messaging: await openMessaging() } : {}),
      ...(clockAt ? { clockAt } : {}),
    });
  let service = await start(config);
  const t: TestService = {
    service,
    api: `http://127.0.0.1:${portOf(service.gateway)}/v1`,
    clock: service.clock as ManualClock,
    admin: client(`http://127.0.0.1:${portOf(service.admin)}/admin/v1`, service.adminToken),
    dataDir,
    ...partnerHelpers(() => t),
    async restart(at) {
      await service.close();
      const resumeAt = at ?? t.clock.now();
      const again = await start(configFor(), resumeAt);
      (again.clock as ManualClock).set(resumeAt);
      service = again;
      t.service = again;
      t.api = `http://127.0.0.1:${portOf(again.gateway)}/v1`;
      t.clock = again.clock as ManualClock;
      t.admin = client(`http://127.0.0.1:${portOf(again.admin)}/admin/v1`, again.adminToken);
    },
    async close() {
      await service.close();
      if (!keepDir) await removeDir(dataDir);
    },
  };
  return t;
}

/** Valid CNPJs (check digits computed), distinct per call. */
let cnpjSeq = 0;
export function nextCnpj(): string {
  cnpjSeq += 1;
  const base = `${String(Date.now() % 1e6).padStart(6, '0')}${String(cnpjSeq).padStart(4, '0')}01`.slice(0, 12);
  const values = [...base].map((c) => c.charCodeAt(0) - 48);
  const digit = (w: number[]) => {
    const sum = w.reduce((acc, wi, i) => acc + values[i] * wi, 0);
    const r = sum % 11;
    return r < 2 ? 0 : 11 - r;
  };
  const d1 = digit([5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]);
  values.push(d1);
  const d2 = digit([6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]);
  return `${base}${d1}${d2}`;
}

export function storeBody(overrides: Record<string, unknown> = {}) {
  return {
    name: 'Loja Exemplo',
    cnpj: nextCnpj(),
    website_url: 'https://shop.test',
    domains: ['shop.test'],
    image_hosts: ['cdn.shop.test'],
    ...overrides,
  };
}

export function productBody(storeId: string, overrides: Record<string, unknown> = {}) {
  return {
    store_id: storeId,
    title: 'Camiseta azul',
    product_url: 'https://shop.test/p/1',
    image_urls: ['https://cdn.shop.test/1.jpg'],
    price_cents: 29990,
    available: true,
    updated_at: '2026-01-01T00:00:00Z',
    ...overrides,
  };
}
