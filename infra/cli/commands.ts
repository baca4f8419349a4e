/**
 * The one table of `ops` commands, and what both of its runners share. The usage text (`ops help`, and the text
 * printed after any usage error) is generated from it, and the runners are checked against it
 * (tests/ops/ops-usage.unit.spec.ts): a command cannot exist without being listed, nor be listed without existing.
 *
 * `module`: which file runs it — `request` (admin-requests.ts: one admin request per command, its answer printed)
 * or `operations` (operations-commands.ts: history, projections, export, audit, health, metrics — answers that are
 * streamed, waited on, or turned into an exit status).
 */

/** A command line that names no command, or a command with wrong options: exit 2 and the whole usage. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/**
 * Positional words and `--name value` / `--name=value` options; `switches` are options without a value (`true`).
 * An option given twice, or without its value, is a usage error.
 */
export function parseArgs(
  args: readonly string[],
  switches: readonly string[] = [],
): { words: string[]; flags: Map<string, string> } {
  const words: string[] = [];
  const flags = new Map<string, string>();
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (!arg.startsWith('--')) {
      words.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = eq < 0 ? arg.slice(2) : arg.slice(2, eq);
    let value: string | undefined;
    if (eq >= 0) value = arg.slice(eq + 1);
    else if (switches.includes(name)) value = 'true';
    else {
      value = args[++i];
      if (value?.startsWith('--')) value = undefined; // the next option, not a value
    }
    if (value === undefined) throw new UsageError(`--${name} needs a value`);
    if (flags.has(name)) throw new UsageError(`--${name} given twice`);
    flags.set(name, value);
  }
  return { words, flags };
}

/** An answer's body: JSON when it parses, else its text (undefined when empty). */
export async function answerBody(res: Response): Promise<unknown> {
  const text = await res.text();
  if (!text) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** `?a=1&b=2` of the defined values, or '' when none is. */
export function query(params: Record<string, string | undefined>): string {
  const q = new URLSearchParams(Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined));
  const s = q.toString();
  return s ? `?${s}` : '';
}

export interface OpsCommand {
  /** The command words, e.g. `partners list`. */
  name: string;
  /** Options and arguments, as shown in the usage. */
  args: string;
  summary: string;
  module: 'request' | 'operations';
  /** One valid invocation (without `ops`), used by the tests that hold the table and the dispatchers together. */
  example: readonly string[];
}

const STREAM_BY = '--store S | --product SKU | --order STORE:ORDER | --job JOB | --click ID';

export const OPS_COMMANDS: readonly OpsCommand[] = [
  {
    name: 'partners create',
    args: '--name N --type hub|store',
    summary: 'a new partner',
    module: 'request',
    example: ['partners', 'create', '--name', 'Loja', '--type', 'hub'],
  },
  {
    name: 'partners list',
    args: '[--limit N] [--cursor C]',
    summary: 'partners with their key counts and their stores by status per environment',
    module: 'request',
    example: ['partners', 'list'],
  },
  {
    name: 'keys issue',
    args: '--partner P --env live|test [--scopes a,b]',
    summary: 'prints the API key (shown only this once); default scopes: catalog, clicks, conversions, reports',
    module: 'request',
    example: ['keys', 'issue', '--partner', 'pt_x', '--env', 'test'],
  },
  {
    name: 'keys revoke',
    args: 'KEY_ID',
    summary: 'revoke a key',
    module: 'request',
    example: ['keys', 'revoke', 'key_x'],
  },
  {
    name: 'stores pending',
    args: '[--partner P] [--env live|test] [--limit N] [--cursor C]',
    summary: 'stores awaiting approval (pending_review), across partners',
    module: 'request',
    example: ['stores', 'pending'],
  },
  {
    name: 'stores approve',
    args: '--partner P --env live|test --store S',
    summary: 'store → active, every declared domain approved',
    module: 'request',
    example: ['stores', 'approve', '--partner', 'pt_x', '--env', 'live', '--store', 's'],
  },
  {
    name: 'stores suspend',
    args: '--partner P --env live|test --store S',
    summary: 'store → suspended',
    module: 'request',
    example: ['stores', 'suspend', '--partner', 'pt_x', '--env', 'live', '--store', 's'],
  },
  {
    name: 'stores reinstate',
    args: '--partner P --env live|test --store S',
    summary: 'store → active',
    module: 'request',
    example: ['stores', 'reinstate', '--partner', 'pt_x', '--env', 'live', '--store', 's'],
  },
  {
    name: 'stores approve-domain',
    args: '--partner P --env live|test --store S --domain D',
    summary: 'approve one declared domain',
    module: 'request',
    example: [
      'stores',
      'approve-domain',
      '--partner',
      'pt_x',
      '--env',
      'live',
      '--store',
      's',
      '--domain',
      'shop.test',
    ],
  },
  {
    name: 'domains pending',
    args: '[--partner P] [--env live|test] [--limit N] [--cursor C]',
    summary: 'declared domains not yet approved, one line per domain',
    module: 'request',
    example: ['domains', 'pending'],
  },
  { name: 'clock get', args: '', summary: 'the service clock', module: 'request', example: ['clock', 'get'] },
  {
    name: 'clock advance',
    args: 'MS',
    summary: 'move a manual clock (only on a service started with CLOCK=manual)',
    module: 'request',
    example: ['clock', 'advance', '1000'],
  },
  {
    name: 'streams read',
    args: `--partner P [--env live|test (${STREAM_BY})]`,
    summary: 'the events of one stream, in order (--partner alone: the partner and its keys)',
    module: 'request',
    example: ['streams', 'read', '--partner', 'pt_x', '--env', 'test', '--product', 'sku-1'],
  },
  {
    name: 'streams read',
    args: 'STREAM',
    summary: 'the same, by the stream name itself (e.g. product-test:pt_X:sku-1)',
    module: 'request',
    example: ['streams', 'read', 'partner-pt_x'],
  },
  {
    name: 'streams export',
    args: '--partner P [--env live|test]',
    summary: "the partner's events, NDJSON in log order",
    module: 'operations',
    example: ['streams', 'export', '--partner', 'pt_x'],
  },
  {
    name: 'history',
    args: '--partner P [--env live|test] [--limit N] [--cursor C]',
    summary: 'operation history, newest first',
    module: 'operations',
    example: ['history', '--partner', 'pt_x'],
  },
  {
    name: 'projections list',
    args: '',
    summary: 'checkpoint, lag and state of each projection (also: ops projections)',
    module: 'operations',
    example: ['projections', 'list'],
  },
  {
    name: 'projections rebuild',
    args: 'NAME [--wait]',
    summary: 'rebuild one read model without stopping reads',
    module: 'operations',
    example: ['projections', 'rebuild', 'stores'],
  },
  {
    name: 'projections parked',
    args: '[--projection NAME] [--limit N]',
    summary: 'events a projection could not apply (parked)',
    module: 'operations',
    example: ['projections', 'parked'],
  },
  {
    name: 'projections retry-parked',
    args: 'ID... | --all',
    summary: 'apply parked events again (after a fix); exit 1 when one still fails or is unknown',
    module: 'operations',
    example: ['projections', 'retry-parked', '--all'],
  },
  {
    name: 'audit verify',
    args: '',
    summary: 'replay every stream, report every difference (exit 1 when one is found)',
    module: 'operations',
    example: ['audit', 'verify'],
  },
  {
    name: 'closings verify',
    args: '--partner P --env E --period YYYY-MM',
    summary: 'recompute a closed period from the log alone and compare it with what is served (exit 1 on a difference)',
    module: 'operations',
    example: ['closings', 'verify', '--partner', 'pt_x', '--env', 'test', '--period', '2026-10'],
  },
  {
    name: 'closings export',
    args: '--partner P --env E --period YYYY-MM',
    summary: "a closed period's movements CSV, as the partner downloads it",
    module: 'operations',
    example: ['closings', 'export', '--partner', 'pt_x', '--env', 'test', '--period', '2026-10'],
  },
  {
    name: 'cover dead-letters',
    args: '[--limit N]',
    summary: 'cover checks that failed every delivery',
    module: 'request',
    example: ['cover', 'dead-letters'],
  },
  {
    name: 'cover requeue',
    args: 'ID',
    summary: 'run one dead letter again (after a fix)',
    module: 'request',
    example: ['cover', 'requeue', 'x'],
  },
  {
    name: 'cover requeue-all',
    args: '',
    summary: 'run every dead letter again',
    module: 'request',
    example: ['cover', 'requeue-all'],
  },
  { name: 'health', args: '', summary: 'readiness of the service', module: 'operations', example: ['health'] },
  { name: 'metrics', args: '', summary: 'the Prometheus metrics text', module: 'operations', example: ['metrics'] },
  { name: 'help', args: '', summary: 'this text', module: 'request', example: ['help'] },
];

function usageText(): string {
  const lines = OPS_COMMANDS.map((c) => [`ops ${c.name}${c.args ? ` ${c.args}` : ''}`, c.summary] as const);
  const width = Math.min(Math.max(...lines.map(([l]) => l.length)), 78);
  const body = lines.map(([l, s]) =>
    l.length > width ? `  ${l}\n  ${' '.repeat(width)}  ${s}` : `  ${l.padEnd(width)}  ${s}`,
  );
  return [
    'usage: ops <command>',
    ...body,
    'env: ADMIN_URL (default http://127.0.0.1:$ADMIN_PORT, ADMIN_PORT default 8081; a trailing /admin/v1 is accepted),',
    '     ADMIN_TOKEN or $DATA_DIR/admin-token (DATA_DIR default ./data),',
    '     METRICS_TOKEN for `ops metrics` when the service sets one',
    'exit: 0 done; 1 the service answered a problem or could not be reached; 2 usage error',
  ].join('\n');
}

/** Every command, generated from OPS_COMMANDS. */
export const OPS_USAGE = usageText();

/** The first words of the commands operations-commands.ts runs (`streams export` is matched on two words). */
export function isOperationsCommand(argv: readonly string[]): boolean {
  return OPS_COMMANDS.some((c) => {
    if (c.module !== 'operations') return false;
    const [first, second] = c.name.split(' ');
    if (first !== argv[0]) return false;
    // `projections` alone, and `projections` with any sub-command, is the operations module's.
    return first !== 'streams' || second === argv[1];
  });
}

/** A problem+json answer (or any other) in a few lines for stderr; never the request's token. */
export function problemMessage(status: number, body: unknown): string {
  if (!body || typeof body !== 'object')
    return `ops: HTTP ${status}${typeof body === 'string' && body ? `: ${body.slice(0, 200)}` : ''}`;
  const p = body as {
    title?: string;
    detail?: string;
    errors?: { field: string; code: string; message: string }[];
    request_id?: string;
  };
  const lines = [`ops: HTTP ${status} ${p.title ?? ''}${p.detail ? `: ${p.detail}` : ''}`.trimEnd()];
  for (const e of p.errors ?? []) lines.push(`  ${e.field || '(body)'}: ${e.code} — ${e.message}`);
  if (p.request_id) lines.push(`  request id: ${p.request_id}`);
  return lines.join('\n');
}
