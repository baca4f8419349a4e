/**
 * `ops` commands of the operator surface in infra/ops/: operation history, projections (status, rebuild, parked
 * events), stream export, audit verify, closings verify and export, health and metrics. They call the running service's admin API (the rebuild
 * and the audit must run where the live projection runner runs), so they work the same against the embedded
 * default and the distributed topology. `runOperationsCommand` answers null for a command that is not one of these.
 *
 * Exit codes: 0 done (verify: no difference), 1 failed (verify: differences found), 2 wrong usage.
 */
import type { Writable } from 'node:stream';
import { OPS_USAGE, UsageError, answerBody, parseArgs, problemMessage, query } from './commands.js';

export interface OpsIo {
  /** Origin of the admin port, e.g. `http://127.0.0.1:8081`. */
  adminUrl: string;
  /** The admin token (METRICS_TOKEN is used for `metrics` when given). */
  token: string;
  metricsToken?: string;
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

export async function runOperationsCommand(argv: readonly string[], io: OpsIo): Promise<number | null> {
  const [command, ...rest] = argv;
  const admin = async (method: string, path: string, bearer = io.token, body?: unknown): Promise<Response> =>
    fetch(`${io.adminUrl.replace(/\/+$/, '')}${path}`, {
      method,
      headers: {
        Authorization: `Bearer ${bearer}`,
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const print = (value: unknown) => io.out.write(JSON.stringify(value, null, 2) + '\n');
  const fail = async (r: Response): Promise<number> => {
    io.err.write(`${problemMessage(r.status, await answerBody(r))}\n`);
    return 1;
  };
  try {
    switch (command) {
      case 'history': {
        const { words, options } = parse(rest, ['partner', 'env', 'limit', 'cursor']);
        if (words.length > 0 || !options.partner)
          throw new UsageError('ops history --partner P [--env E] [--limit N] [--cursor C]');
        const r = await admin(
          'GET',
          `/admin/v1/partners/${encodeURIComponent(options.partner)}/history${query({ env: options.env, limit: options.limit, cursor: options.cursor })}`,
        );
        if (!r.ok) return fail(r);
        print(await r.json());
        return 0;
      }
      case 'projections': {
        if (rest[0] === 'parked') {
          const { words, options } = parse(rest.slice(1), ['projection', 'limit']);
          if (words.length > 0) throw new UsageError('ops projections parked [--projection NAME] [--limit N]');
          const r = await admin(
            'GET',
            `/admin/v1/projections/parked${query({ projection: options.projection, limit: options.limit })}`,
          );
          if (!r.ok) return fail(r);
          print(await r.json());
          return 0;
        }
        if (rest[0] === 'retry-parked') {
          const { words, options } = parse(rest.slice(1), [], ['all']);
          if ((options.all === 'true') === words.length > 0 || words.length > 1000)
            throw new UsageError('ops projections retry-parked ID... | ops projections retry-parked --all');
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
        }
        const { words, options } = parse(rest, [], ['wait']);
        const [sub = 'list', name] = words;
        if (sub === 'list' && words.length <= 1) {
          const r = await admin('GET', '/admin/v1/projections');
          if (!r.ok) return fail(r);
          print(await r.json());
          return 0;
        }
        if (sub !== 'rebuild' || !name || words.length > 2)
          throw new UsageError(
            'ops projections [list] | ops projections rebuild NAME [--wait] | ops projections parked | ops projections retry-parked ID...|--all',
          );
        const r = await admin('POST', `/admin/v1/projections/${encodeURIComponent(name)}/rebuild`);
        if (r.status !== 202) return fail(r);
        print(await r.json());
        return options.wait ? waitForRebuild(name, io, admin) : 0;
      }
      case 'streams': {
        if (rest[0] !== 'export') return null; // `streams read` belongs to the other module
        const { words, options } = parse(rest, ['partner', 'env']);
        if (words.length > 1 || !options.partner) throw new UsageError('ops streams export --partner P [--env E]');
        const r = await admin(
          'GET',
          `/admin/v1/partners/${encodeURIComponent(options.partner)}/export${query({ env: options.env })}`,
        );
        if (!r.ok || !r.body) return fail(r);
        for await (const chunk of r.body as unknown as AsyncIterable<Uint8Array>) {
          if (!io.out.write(chunk)) await new Promise((resolve) => io.out.once('drain', resolve));
        }
        return 0;
      }
      case 'audit': {
        const { words } = parse(rest, []);
        if (words[0] !== 'verify' || words.length > 1) throw new UsageError('ops audit verify');
        const r = await admin('POST', '/admin/v1/audit/verify');
        if (!r.ok) return fail(r);
        const report = (await r.json()) as { ok: boolean; differences: unknown[]; documents_compared: number };
        print(report);
        io.err.write(`${report.documents_compared} documents compared, ${report.differences.length} differences\n`);
        return report.ok ? 0 : 1;
      }
      case 'closings': {
        const { words, options } = parse(rest, ['partner', 'env', 'period']);
        const [sub] = words;
        if (
          words.length !== 1 ||
          !['verify', 'export'].includes(sub) ||
          !options.partner ||
          !options.env ||
          !options.period
        )
          throw new UsageError('ops closings verify|export --partner P --env E --period YYYY-MM');
        if (sub === 'export') {
          const r = await admin(
            'GET',
            `/admin/v1/partners/${encodeURIComponent(options.partner)}/closings/${encodeURIComponent(options.period)}/movements.csv${query({ env: options.env })}`,
          );
          if (!r.ok || !r.body) return fail(r);
          for await (const chunk of r.body as unknown as AsyncIterable<Uint8Array>) {
            if (!io.out.write(chunk)) await new Promise((resolve) => io.out.once('drain', resolve));
          }
          return 0;
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
          report.ok
            ? 'identical\n'
            : `different (first differing CSV line: ${report.first_difference_line ?? 'none'})\n`,
        );
        return report.ok ? 0 : 1;
      }
      case 'health': {
        parse(rest, []);
        const r = await admin('GET', '/admin/v1/health/ready');
        print(await r.json());
        return r.ok ? 0 : 1;
      }
      case 'metrics': {
        parse(rest, []);
        const r = await admin('GET', '/metrics', io.metricsToken ?? '');
        if (!r.ok) return fail(r);
        io.out.write(await r.text());
        return 0;
      }
      default:
        return null;
    }
  } catch (err) {
    if (err instanceof UsageError) {
      io.err.write(`ops: ${err.message}\n${OPS_USAGE}\n`);
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
