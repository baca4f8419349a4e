/**
 * The `ops` commands that are one admin request each (partners, keys, stores and domains, clock, streams read, cover
 * dead letters): the command line is planned into a request (`planRequest`, testable without a service), sent with
 * the admin token, and the answer printed (tables, or JSON with `--json`).
 */
import fs from 'node:fs';
import path from 'node:path';
import { streams, type Environment, type Tenant } from '../../../shared-schema/domain/streams.js';
import {
  OPS_COMMANDS,
  OPS_USAGE,
  UsageError,
  answerBody,
  parseArgs,
  problemMessage,
  query,
  usageFor,
} from './commands.js';
import { serviceAddress } from './service-address.js';
import { printed } from './tables.js';
import { SECRET_FILES } from '../../wiring/data-dir-secret.js';

export interface AdminRequest {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  body?: Record<string, unknown>;
}

const seg = encodeURIComponent;

/** What a command's planner reads of its command line. */
interface Line {
  action: string;
  /** The value of a required option (checked against `allowed`); marks it used. */
  flag(name: string, allowed?: readonly string[]): string;
  /** The value of an optional option, or undefined; marks it used. */
  optional(name: string, allowed?: readonly string[]): string | undefined;
  /** Exactly `count` words after the command's two. */
  positional(count: number): string[];
  /** The words after the command's two. */
  rest: readonly string[];
}

const ENVS = ['live', 'test'] as const;

function wholeNumber(name: string, value: string | undefined): string | undefined {
  if (value !== undefined && !/^\d+$/.test(value)) throw new UsageError(`--${name} takes a whole number`);
  return value;
}

const STREAM_KINDS = ['store', 'product', 'order', 'job', 'click'] as const;

/** The stream `streams read` names: the old positional name, or one built from partner/env/store/sku/order/job/click. */
function streamName(line: Line): string {
  if (line.rest.length > 0) {
    const [stream] = line.positional(1);
    return stream;
  }
  const partnerId = line.flag('partner');
  const given = STREAM_KINDS.filter((k) => line.optional(k) !== undefined);
  const envRaw = line.optional('env', ENVS);
  if (given.length === 0) {
    if (envRaw !== undefined)
      throw new UsageError(`--env goes with one of ${STREAM_KINDS.map((k) => `--${k}`).join(', ')}`);
    return streams.partner(partnerId);
  }
  if (given.length > 1)
    throw new UsageError(`give one of ${STREAM_KINDS.map((k) => `--${k}`).join(', ')}, not ${given.length}`);
  if (envRaw === undefined) throw new UsageError('--env is required');
  const tenant: Tenant = { partnerId, env: envRaw as Environment };
  const kind = given[0];
  const value = line.flag(kind);
  switch (kind) {
    case 'store':
      return streams.store(tenant, value);
    case 'product':
      return streams.product(tenant, value);
    case 'job':
      return streams.job(tenant, value);
    case 'click':
      return streams.click(tenant, value);
    case 'order': {
      const colon = value.indexOf(':');
      if (colon <= 0 || colon === value.length - 1)
        throw new UsageError('--order takes STORE:ORDER (the store id, a colon, the order id)');
      return streams.order(tenant, value.slice(0, colon), value.slice(colon + 1));
    }
  }
}

const storeAction = (line: Line): AdminRequest => {
  line.positional(0);
  const base = `/partners/${seg(line.flag('partner'))}/${seg(line.flag('env', ENVS))}/stores/${seg(line.flag('store'))}`;
  const tail = line.action === 'approve-domain' ? `/domains/${seg(line.flag('domain'))}/approve` : `/${line.action}`;
  return { method: 'POST', path: base + tail, body: {} };
};

const listQuery = (line: Line, extra: Record<string, string | undefined> = {}): string =>
  query({
    ...extra,
    partner_id: line.optional('partner'),
    env: line.optional('env', ENVS),
    limit: wholeNumber('limit', line.optional('limit')),
    cursor: line.optional('cursor'),
  });

/**
 * The planners of the commands this file runs, by command name. Their names are exactly the `request` entries of
 * OPS_COMMANDS but `help` (tests/ops/ops-usage.unit.spec.ts holds them together).
 */
export const PLANNERS: Readonly<Record<string, (line: Line) => AdminRequest>> = {
  'partners create': (line) => {
    line.positional(0);
    return {
      method: 'POST',
      path: '/partners',
      body: { name: line.flag('name'), partner_type: line.flag('type', ['hub', 'store']) },
    };
  },
  'partners list': (line) => {
    line.positional(0);
    return {
      method: 'GET',
      path: `/partners${query({ limit: wholeNumber('limit', line.optional('limit')), cursor: line.optional('cursor') })}`,
    };
  },
  'keys issue': (line) => {
    line.positional(0);
    const body: Record<string, unknown> = { environment: line.flag('env', ENVS) };
    const scopes = line.optional('scopes');
    if (scopes !== undefined)
      body.scopes = scopes
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
    return { method: 'POST', path: `/partners/${seg(line.flag('partner'))}/keys`, body };
  },
  'keys revoke': (line) => ({ method: 'DELETE', path: `/keys/${seg(line.positional(1)[0])}` }),
  'channels create': (line) => {
    line.positional(0);
    return { method: 'POST', path: '/channels', body: { name: line.flag('name') } };
  },
  'channels list': (line) => {
    line.positional(0);
    return { method: 'GET', path: '/channels' };
  },
  'channels revoke': (line) => ({ method: 'POST', path: `/channels/${seg(line.positional(1)[0])}/revoke` }),
  'stores pending': (line) => {
    line.positional(0);
    return { method: 'GET', path: `/stores${listQuery(line, { status: 'pending_review' })}` };
  },
  'stores approve': storeAction,
  'stores suspend': storeAction,
  'stores reinstate': storeAction,
  'stores approve-domain': storeAction,
  'domains pending': (line) => {
    line.positional(0);
    return { method: 'GET', path: `/domains/pending${listQuery(line)}` };
  },
  'clock get': (line) => {
    line.positional(0);
    return { method: 'GET', path: '/clock' };
  },
  'clock advance': (line) => {
    const raw = line.positional(1)[0];
    if (!/^\d+$/.test(raw) || !Number.isSafeInteger(Number(raw)))
      throw new UsageError('clock advance takes a whole number of milliseconds');
    return { method: 'POST', path: '/clock', body: { advance_ms: Number(raw) } };
  },
  'streams read': (line) => ({ method: 'GET', path: `/streams/${seg(streamName(line))}` }),
  'cover dead-letters': (line) => {
    line.positional(0);
    const limit = wholeNumber('limit', line.optional('limit'));
    return { method: 'GET', path: `/cover-checks/dead-letters${query({ limit })}` };
  },
  'cover requeue': (line) => ({
    method: 'POST',
    path: '/cover-checks/dead-letters/requeue',
    body: { ids: [line.positional(1)[0]] },
  }),
  'cover requeue-all': (line) => {
    line.positional(0);
    return { method: 'POST', path: '/cover-checks/dead-letters/requeue', body: { all: true } };
  },
};

/** Turns the command line (without `ops`) into one admin API request. Throws UsageError. */
export function planRequest(args: readonly string[]): AdminRequest {
  const { words, flags } = parseArgs(args);
  const used = new Set<string>();
  const optional = (name: string, allowed?: readonly string[]): string | undefined => {
    const value = flags.get(name);
    if (value === undefined) return undefined;
    if (value === '') throw new UsageError(`--${name} needs a value`);
    if (allowed && !allowed.includes(value)) throw new UsageError(`--${name} must be one of ${allowed.join(', ')}`);
    used.add(name);
    return value;
  };
  const name = words.slice(0, 2).join(' ');
  const line: Line = {
    action: words[1] ?? '',
    flag: (flagName, allowed) => {
      const value = optional(flagName, allowed);
      if (value === undefined) throw new UsageError(`--${flagName} is required`);
      return value;
    },
    optional,
    positional: (count) => {
      if (words.length !== 2 + count) throw new UsageError(`${name} takes ${count} argument(s)`);
      return words.slice(2);
    },
    rest: words.slice(2),
  };
  const planner = Object.hasOwn(PLANNERS, name) ? PLANNERS[name] : undefined;
  if (!planner) {
    if (words.length === 0) throw new UsageError('no command given');
    // A group named alone (`ops stores`) is a known command missing its sub-command, not an unknown one.
    const subs = OPS_COMMANDS.filter((c) => words.length === 1 && c.name.startsWith(`${words[0]} `));
    if (subs.length > 0)
      throw new UsageError(
        `${words[0]} needs one of: ${[...new Set(subs.map((c) => c.name.split(' ')[1]))].join(', ')}`,
      );
    throw new UsageError(`unknown command: ${words.join(' ')}`);
  }
  const request = planner(line);
  const unknown = [...flags.keys()].filter((f) => !used.has(f));
  if (unknown.length > 0) throw new UsageError(`unknown option(s): ${unknown.map((f) => `--${f}`).join(', ')}`);
  return request;
}

/** ADMIN_TOKEN, else the file the service keeps in DATA_DIR. */
export function adminToken(env: NodeJS.ProcessEnv): string {
  if (env.ADMIN_TOKEN) return env.ADMIN_TOKEN;
  const file = path.join(path.resolve(env.DATA_DIR || 'data'), SECRET_FILES.adminToken);
  try {
    const token = fs.readFileSync(file, 'utf8').trim();
    if (token) return token;
  } catch {
    /* reported below */
  }
  throw new UsageError(`no admin token: set ADMIN_TOKEN or DATA_DIR (looked for ${file})`);
}

export interface Output {
  out: (text: string) => void;
  err: (text: string) => void;
}

/** Runs one command of this file with the admin token given; resolves to the exit status. */
export async function runAdminRequest(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  io: Output,
  json = false,
): Promise<number> {
  if (args[0] === '--help' || args[0] === 'help') {
    io.out(OPS_USAGE + '\n');
    return 0;
  }
  let request: AdminRequest;
  let token: string;
  try {
    request = planRequest(args);
    token = adminToken(env);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    io.err(`ops: ${err.message}\n${usageFor(args)}\n`);
    return 2;
  }
  const base = serviceAddress(env).adminApi;
  let res: Response;
  try {
    res = await fetch(base + request.path, {
      method: request.method,
      headers: { Authorization: `Bearer ${token}`, ...(request.body ? { 'Content-Type': 'application/json' } : {}) },
      ...(request.body ? { body: JSON.stringify(request.body) } : {}),
      signal: AbortSignal.timeout(30_000),
    });
  } catch (err) {
    const cause = err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err);
    io.err(`ops: could not reach ${base}: ${cause}\n`);
    return 1;
  }
  const body = await answerBody(res);
  if (!res.ok) {
    io.err(problemMessage(res.status, body) + '\n');
    return 1;
  }
  const shown =
    body ??
    (request.method === 'DELETE' ? { key_id: decodeURIComponent(request.path.split('/').pop()!), revoked: true } : {});
  io.out(printed(shown, json));
  return 0;
}
