/**
 * `ops`: the operator's command line. It calls the admin HTTP API of a running service and prints the answer as
 * JSON on stdout.
 *
 *   node dist/infra/ops.js <command>        (or: npm run ops -- <command>)
 *
 *   partners create --name N --type hub|store
 *   keys issue --partner P --env live|test [--scopes catalog,clicks]   prints the API key (shown only this once)
 *   keys revoke KEY_ID
 *   stores approve|suspend|reinstate --partner P --env live|test --store S
 *   stores approve-domain --partner P --env live|test --store S --domain D
 *   clock get
 *   clock advance MS                                                    only on a service started with CLOCK=manual
 *   streams read STREAM                                                 e.g. product-live:pt_X:sku-1
 *   cover dead-letters [--limit N]                                      cover checks that failed every delivery
 *   cover requeue ID                                                    run one dead letter again (after a fix)
 *   cover requeue-all                                                   run every dead letter again
 *
 * Environment: ADMIN_URL (default http://127.0.0.1:8081/admin/v1); the token is ADMIN_TOKEN, else the file
 * $DATA_DIR/admin-token that the service writes (DATA_DIR default ./data). The token is never printed.
 * Exit status: 0 done; 1 the service answered a problem (message on stderr) or could not be reached; 2 usage error.
 */
import { OPERATIONS_USAGE, runOperationsCommand } from './ops-audit.js';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

export interface AdminRequest {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  body?: Record<string, unknown>;
}

export class UsageError extends Error {
  override name = 'UsageError';
}

export const USAGE = `usage: ops <command>
  partners create --name N --type hub|store
  keys issue --partner P --env live|test [--scopes a,b]
  keys revoke KEY_ID
  stores approve|suspend|reinstate --partner P --env live|test --store S
  stores approve-domain --partner P --env live|test --store S --domain D
  clock get
  clock advance MS
  streams read STREAM
  cover dead-letters [--limit N]
  cover requeue ID
  cover requeue-all
env: ADMIN_URL (default http://127.0.0.1:8081/admin/v1), ADMIN_TOKEN or $DATA_DIR/admin-token`;

/** Splits `--flag value` / `--flag=value` options from positional words; every flag takes a value. */
function parseArgs(args: readonly string[]): { words: string[]; flags: Map<string, string> } {
  const words: string[] = [];
  const flags = new Map<string, string>();
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (!arg.startsWith('--')) {
      words.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = eq < 0 ? arg.slice(2) : arg.slice(2, eq);
    const value = eq < 0 ? args[++i] : arg.slice(eq + 1);
    if (value === undefined) throw new UsageError(`--${name} needs a value`);
    if (flags.has(name)) throw new UsageError(`--${name} given twice`);
    flags.set(name, value);
  }
  return { words, flags };
}

const seg = encodeURIComponent;

/** Turns the command line (without `node ops.js`) into one admin API request. Throws UsageError. */
export function planRequest(args: readonly string[]): AdminRequest {
  const { words, flags } = parseArgs(args);
  const used = new Set<string>();
  const flag = (name: string, allowed?: readonly string[]): string => {
    const value = flags.get(name);
    if (value === undefined || value === '') throw new UsageError(`--${name} is required`);
    if (allowed && !allowed.includes(value)) throw new UsageError(`--${name} must be one of ${allowed.join(', ')}`);
    used.add(name);
    return value;
  };
  const positional = (count: number): string[] => {
    if (words.length !== 2 + count) throw new UsageError(`${words.slice(0, 2).join(' ')} takes ${count} argument(s)`);
    return words.slice(2);
  };
  const request = ((): AdminRequest => {
    const [group, action] = words;
    switch (`${group} ${action}`) {
      case 'partners create':
        positional(0);
        return { method: 'POST', path: '/partners', body: { name: flag('name'), partner_type: flag('type', ['hub', 'store']) } };
      case 'keys issue': {
        positional(0);
        const body: Record<string, unknown> = { environment: flag('env', ['live', 'test']) };
        if (flags.has('scopes')) body.scopes = flag('scopes').split(',').map((s) => s.trim()).filter(Boolean);
        return { method: 'POST', path: `/partners/${seg(flag('partner'))}/keys`, body };
      }
      case 'keys revoke':
        return { method: 'DELETE', path: `/keys/${seg(positional(1)[0]!)}` };
      case 'stores approve':
      case 'stores suspend':
      case 'stores reinstate':
      case 'stores approve-domain': {
        positional(0);
        const base = `/partners/${seg(flag('partner'))}/${seg(flag('env', ['live', 'test']))}/stores/${seg(flag('store'))}`;
        const tail = action === 'approve-domain' ? `/domains/${seg(flag('domain'))}/approve` : `/${action}`;
        return { method: 'POST', path: base + tail, body: {} };
      }
      case 'clock get':
        positional(0);
        return { method: 'GET', path: '/clock' };
      case 'clock advance': {
        const raw = positional(1)[0]!;
        if (!/^\d+$/.test(raw) || !Number.isSafeInteger(Number(raw))) throw new UsageError('clock advance takes a whole number of milliseconds');
        return { method: 'POST', path: '/clock', body: { advance_ms: Number(raw) } };
      }
      case 'streams read':
        return { method: 'GET', path: `/streams/${seg(positional(1)[0]!)}` };
      case 'cover dead-letters': {
        positional(0);
        if (!flags.has('limit')) return { method: 'GET', path: '/cover-checks/dead-letters' };
        const limit = flag('limit');
        if (!/^\d+$/.test(limit)) throw new UsageError('--limit takes a whole number');
        return { method: 'GET', path: `/cover-checks/dead-letters?limit=${limit}` };
      }
      case 'cover requeue':
        return { method: 'POST', path: '/cover-checks/dead-letters/requeue', body: { ids: [positional(1)[0]!] } };
      case 'cover requeue-all':
        positional(0);
        return { method: 'POST', path: '/cover-checks/dead-letters/requeue', body: { all: true } };
      default:
        throw new UsageError(words.length === 0 ? 'no command given' : `unknown command: ${words.slice(0, 2).join(' ')}`);
    }
  })();
  const unknown = [...flags.keys()].filter((f) => !used.has(f));
  if (unknown.length > 0) throw new UsageError(`unknown option(s): ${unknown.map((f) => `--${f}`).join(', ')}`);
  return request;
}

/** ADMIN_TOKEN, else the file the service keeps in DATA_DIR. */
export function adminToken(env: NodeJS.ProcessEnv): string {
  if (env.ADMIN_TOKEN) return env.ADMIN_TOKEN;
  const file = path.join(path.resolve(env.DATA_DIR || 'data'), 'admin-token');
  try {
    const token = fs.readFileSync(file, 'utf8').trim();
    if (token) return token;
  } catch {
    /* reported below */
  }
  throw new UsageError(`no admin token: set ADMIN_TOKEN or DATA_DIR (looked for ${file})`);
}

interface Output {
  out: (text: string) => void;
  err: (text: string) => void;
}

/** Runs one command; resolves to the exit status. */
export async function runOps(args: readonly string[], env: NodeJS.ProcessEnv, io: Output): Promise<number> {
  if (args.length === 0 || args[0] === '--help' || args[0] === 'help') {
    (args.length === 0 ? io.err : io.out)(USAGE + '\n');
    return args.length === 0 ? 2 : 0;
  }
  let request: AdminRequest;
  let token: string;
  try {
    request = planRequest(args);
    token = adminToken(env);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    io.err(`ops: ${err.message}\n${USAGE}\n`);
    return 2;
  }
  const base = (env.ADMIN_URL || 'http://127.0.0.1:8081/admin/v1').replace(/\/+$/, '');
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
  const text = await res.text();
  let body: unknown = undefined;
  try {
    body = text ? (JSON.parse(text) as unknown) : undefined;
  } catch {
    body = text;
  }
  if (!res.ok) {
    io.err(problemMessage(res.status, body) + '\n');
    return 1;
  }
  const shown = body ?? (request.method === 'DELETE' ? { key_id: decodeURIComponent(request.path.split('/').pop()!), revoked: true } : {});
  io.out(JSON.stringify(shown, null, 2) + '\n');
  return 0;
}

function problemMessage(status: number, body: unknown): string {
  if (!body || typeof body !== 'object') return `ops: HTTP ${status}${typeof body === 'string' && body ? `: ${body.slice(0, 200)}` : ''}`;
  const p = body as { title?: string; detail?: string; errors?: { field: string; code: string; message: string }[]; request_id?: string };
  const lines = [`ops: HTTP ${status} ${p.title ?? ''}${p.detail ? `: ${p.detail}` : ''}`.trimEnd()];
  for (const e of p.errors ?? []) lines.push(`  ${e.field || '(body)'}: ${e.code} — ${e.message}`);
  if (p.request_id) lines.push(`  request id: ${p.request_id}`);
  return lines.join('\n');
}

/** The operations commands of infra/ops-audit.ts first (history, projections, export, audit, health, metrics), then ours. */
async function main(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  if (argv.length > 0 && argv[0] !== 'help' && argv[0] !== '--help') {
    let token = '';
    try {
      token = adminToken(env);
    } catch {
      /* runOps explains the missing token */
    }
    if (token) {
      const adminUrl = (env.ADMIN_URL || 'http://127.0.0.1:8081/admin/v1').replace(/\/+$/, '').replace(/\/admin\/v1$/, '');
      const io = { adminUrl, token, out: process.stdout, err: process.stderr, ...(env.METRICS_TOKEN ? { metricsToken: env.METRICS_TOKEN } : {}) };
      const code = await runOperationsCommand(argv, io);
      if (code !== null) return code;
    }
  }
  if (argv[0] === 'help' || argv[0] === '--help') process.stdout.write(OPERATIONS_USAGE + '\n');
  return runOps(argv, env, { out: (t) => process.stdout.write(t), err: (t) => process.stderr.write(t) });
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  main(process.argv.slice(2), process.env).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(`ops: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
