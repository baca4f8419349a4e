/**
 * `ops` commands of the operator surface in infra/ops/: operation history, projections (status, rebuild, parked
 * events), stream export, audit verify, closings verify and export, health and metrics, one function each in the
 * table COMMANDS. They call the running service's admin API (the rebuild and the audit must run where the live
 * projection runner runs), so they work the same against the embedded default and the distributed topology. `runOperationsCommand` answers null for a command that is not one of these.
 *
 * Exit codes: 0 done (verify: no difference), 1 failed (verify: differences found), 2 wrong usage.
 */
import type { Writable } from 'node:stream';
import { UsageError, answerBody, didYouMean, parseArgs, problemMessage, query, usageFor } from './commands.js';
import { printed } from './tables.js';

export interface OpsIo {
  /** Origin of the admin port, e.g. `http://127.0.0.1:8081`. */
  adminUrl: string;
  /** The admin token (METRICS_TOKEN is used for `metrics` when given). */
  token: string;
  metricsToken?: string;
  /** `--json`: the answers as JSON (default: tables for a person). */
  json?: boolean;
  out: Writable;
  err: Writable;
  /** Between two looks at a rebuild in progress (default 500 ms). */
  pollMs?: number;
}

/** Positional words and the options of a command that takes `allowed` options with a value and `switches` without. */
function parse(
  args: readonly string[],
  allowed: readonly string[],
  switches: readonly string[] = [],
): { words: string[]; options: Record<string, string> } {
  const { words, flags } = parseArgs(args, switches);
  for (const name of flags.keys())
    if (!allowed.includes(name) && !switches.includes(name)) throw new UsageError(`unknown option --${name}`);
  return { words, options: Object.fromEntries(flags) };
}

/** What every command of this module is handed: the admin API, and how to print and fail. */
interface Kit {
  io: OpsIo;
  admin: (method: string, path: string, bearer?: string, body?: unknown) => Promise<Response>;
  print: (value: unknown) => void;
  /** Writes the problem of a failed answer; exit code 1. */
  fail: (r: Response) => Promise<number>;
}

type Command = (rest: readonly string[], kit: Kit) => Promise<number | null>;

function kitOf(io: OpsIo): Kit {
  return {
    io,
    admin: (method, path, bearer = io.token, body) =>
      fetch(`${io.adminUrl.replace(/\/+$/, '')}${path}`, {
        method,
        headers: {
          Authorization: `Bearer ${bearer}`,
          ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      }),
    print: (value) => io.out.write(printed(value, io.json === true)),
    fail: async (r) => {
      io.err.write(`${problemMessage(r.status, await answerBody(r))}\n`);
      return 1;
    },
  };
}

/** Prints an answer as it arrives (an export); exit code 1 with its problem when it failed. */
async function streamOut(r: Response, kit: Kit): Promise<number> {
  if (!r.ok || !r.body) return kit.fail(r);
  for await (const chunk of r.body as unknown as AsyncIterable<Uint8Array>) {
    if (!kit.io.out.write(chunk)) await new Promise((resolve) => kit.io.out.once('drain', resolve));
  }
  return 0;
}

/** A projection name the service does not know: a usage error (2) with the valid names and the nearest. */
async function unknownProjection(name: string, { admin, io }: Kit): Promise<number> {
  const r = await admin('GET', '/admin/v1/projections');
  const names = r.ok ? ((await r.json()) as { projections: { name: string }[] }).projections.map((p) => p.name) : [];
  const hint = didYouMean(name, names);
  io.err.write(
    [`ops: no projection named ${name}`, ...(hint ? [hint] : []), `projections: ${names.join(', ')}`].join('\n') + '\n',
  );
  return 2;
}

const history: Command = async (rest, { admin, print, fail }) => {
  const { words, options } = parse(rest, ['partner', 'env', 'limit', 'cursor']);
  if (words.length > 0 || !options.partner)
    throw new UsageError(words.length > 0 ? 'history takes no argument' : '--partner is required');
  const r = await admin(
    'GET',
    `/admin/v1/partners/${encodeURIComponent(options.partner)}/history${query({ env: options.env, limit: options.limit, cursor: options.cursor })}`,
  );
  if (!r.ok) return fail(r);
  print(await r.json());
  return 0;
};

const parkedEvents: Command = async (rest, kit) => {
  const { words, options } = parse(rest, ['projection', 'limit']);
  if (words.length > 0) throw new UsageError('projections parked takes no argument');
  const r = await kit.admin(
    'GET',
    `/admin/v1/projections/parked${query({ projection: options.projection, limit: options.limit })}`,
  );
  if (r.status === 404 && options.projection) return unknownProjection(options.projection, kit);
  if (!r.ok) return kit.fail(r);
  kit.print(await r.json());
  return 0;
};

const retryParked: Command = async (rest, { io, admin, print, fail }) => {
  const { words, options } = parse(rest, [], ['all']);
  if ((options.all === 'true') === words.length > 0 || words.length > 1000)
    throw new UsageError('give parked event ids or --all, not both');
  const r = await admin(
    'POST',
    '/admin/v1/projections/parked/retry',
    io.token,
    options.all === 'true' ? { all: true } : { ids: words },
  );
  if (!r.ok) return fail(r);
  const result = (await r.json()) as { retried: unknown[]; still_failing: unknown[]; not_found: unknown[] };
  print(result);
  io.err.write(
    `${result.retried.length} applied, ${result.still_failing.length} still failing, ${result.not_found.length} not found\n`,
  );
  return result.still_failing.length === 0 && result.not_found.length === 0 ? 0 : 1;
};

const projections: Command = async (rest, kit) => {
  if (rest[0] === 'parked') return parkedEvents(rest.slice(1), kit);
  if (rest[0] === 'retry-parked') return retryParked(rest.slice(1), kit);
  const { admin, print, fail } = kit;
  const { words, options } = parse(rest, [], ['wait']);
  const [sub = 'list', name] = words;
  if (sub === 'list' && words.length <= 1) {
    const r = await admin('GET', '/admin/v1/projections');
    if (!r.ok) return fail(r);
    print(await r.json());
    return 0;
  }
  if (sub !== 'rebuild') throw new UsageError(`unknown command: projections ${sub}`);
  if (!name || words.length > 2) throw new UsageError('projections rebuild takes one projection name');
  const r = await admin('POST', `/admin/v1/projections/${encodeURIComponent(name)}/rebuild`);
  if (r.status === 404) return unknownProjection(name, kit);
  if (r.status !== 202) return fail(r);
  print(await r.json());
  return options.wait ? waitForRebuild(name, kit.io, admin) : 0;
};

const streams: Command = async (rest, kit) => {
  if (rest[0] !== 'export') return null; // `streams read` belongs to the other module
  const { words, options } = parse(rest, ['partner', 'env']);
  if (words.length > 1 || !options.partner)
    throw new UsageError(words.length > 1 ? 'streams export takes no argument' : '--partner is required');
  const path = `/admin/v1/partners/${encodeURIComponent(options.partner)}/export${query({ env: options.env })}`;
  return streamOut(await kit.admin('GET', path), kit);
};

const audit: Command = async (rest, { io, admin, print, fail }) => {
  const { words } = parse(rest, []);
  if (words[0] !== 'verify' || words.length > 1) throw new UsageError(`unknown command: audit ${words.join(' ')}`);
  const r = await admin('POST', '/admin/v1/audit/verify');
  if (!r.ok) return fail(r);
  const report = (await r.json()) as { ok: boolean; differences: unknown[]; documents_compared: number };
  print(report);
  io.err.write(`${report.documents_compared} documents compared, ${report.differences.length} differences\n`);
  return report.ok ? 0 : 1;
};

const closings: Command = async (rest, kit) => {
  const { io, admin, print, fail } = kit;
  const { words, options } = parse(rest, ['partner', 'env', 'period']);
  const [sub] = words;
  if (words.length !== 1 || !['verify', 'export'].includes(sub) || !options.partner || !options.env || !options.period)
    throw new UsageError('ops closings verify|export --partner P --env E --period YYYY-MM');
  if (sub === 'export') {
    const path = `/admin/v1/partners/${encodeURIComponent(options.partner)}/closings/${encodeURIComponent(options.period)}/movements.csv${query({ env: options.env })}`;
    return streamOut(await admin('GET', path), kit);
  }
  const r = await admin('POST', '/admin/v1/closings/verify', io.token, {
    partner_id: options.partner,
    env: options.env,
    period: options.period,
  });
  if (!r.ok) return fail(r);
  const report = (await r.json()) as { ok: boolean; first_difference_line: number | null };
  print(report);
  io.err.write(
    report.ok ? 'identical\n' : `different (first differing CSV line: ${report.first_difference_line ?? 'none'})\n`,
  );
  return report.ok ? 0 : 1;
};

const health: Command = async (rest, { admin, print }) => {
  parse(rest, []);
  const r = await admin('GET', '/admin/v1/health/ready');
  print(await r.json());
  return r.ok ? 0 : 1;
};

const metrics: Command = async (rest, { io, admin, fail }) => {
  parse(rest, []);
  const r = await admin('GET', '/metrics', io.metricsToken ?? '');
  if (!r.ok) return fail(r);
  io.out.write(await r.text());
  return 0;
};

/** The commands of this module, by their first word. */
const COMMANDS: Readonly<Record<string, Command>> = {
  history,
  projections,
  streams,
  audit,
  closings,
  health,
  metrics,
};

export async function runOperationsCommand(argv: readonly string[], io: OpsIo): Promise<number | null> {
  const [command, ...rest] = argv;
  const run = Object.hasOwn(COMMANDS, command ?? '') ? COMMANDS[command] : undefined;
  if (!run) return null;
  try {
    return await run(rest, kitOf(io));
  } catch (err) {
    if (err instanceof UsageError) {
      io.err.write(`ops: ${err.message}\n${usageFor(argv)}\n`);
      return 2;
    }
    throw err;
  }
}

type Progress = {
  state: string;
  position: number;
  head: number;
  events_per_second: number;
  eta_seconds: number | null;
  error?: string;
};

async function waitForRebuild(
  name: string,
  io: OpsIo,
  admin: (method: string, path: string) => Promise<Response>,
): Promise<number> {
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, io.pollMs ?? 500));
    const r = await admin('GET', '/admin/v1/projections');
    if (!r.ok) {
      io.err.write(`${r.status} ${await r.text()}\n`);
      return 1;
    }
    const { projections } = (await r.json()) as { projections: { name: string; rebuild: Progress | null }[] };
    const p = projections.find((x) => x.name === name)?.rebuild;
    if (!p) return 1;
    io.err.write(
      `${name}: ${p.state} position ${p.position}/${p.head}, ${p.events_per_second} events/s, ${p.eta_seconds ?? '?'} s left\n`,
    );
    if (p.state === 'done') return 0;
    if (p.state === 'failed' || p.state === 'cancelled') {
      io.err.write(`${name}: ${p.error ?? p.state}\n`);
      return 1;
    }
  }
}
