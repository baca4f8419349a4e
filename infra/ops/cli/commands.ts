/**
 * The one table of `ops` commands, and what both of its runners share. The usage texts (`ops help`, and the few
 * lines printed after a usage error: that command's usage, or the nearest command names) are generated from it, and the runners are checked against it
 * (tests/ops/ops-usage.unit.spec.ts): a command cannot exist without being listed, nor be listed without existing.
 *
 * `module`: which file runs it — `request` (admin-requests.ts: one admin request per command, its answer printed)
 * or `operations` (operations-commands.ts: history, projections, export, audit, health, metrics — answers that are
 * streamed, waited on, or turned into an exit status), or `files` (backup-commands.ts: backup and restore of
 * DATA_DIR on the service's host, no admin request).
 */

/** A command line that names no command, or a command with wrong options: exit 2 and the usage of that command. */
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
  module: 'request' | 'operations' | 'files';
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
    name: 'channels create',
    args: '--name N',
    summary: 'a new feed channel; prints its token (shown only this once)',
    module: 'request',
    example: ['channels', 'create', '--name', 'Vitrine'],
  },
  {
    name: 'channels list',
    args: '',
    summary: 'feed channels with their click counts (no tokens)',
    module: 'request',
    example: ['channels', 'list'],
  },
  {
    name: 'channels revoke',
    args: 'CHANNEL_ID',
    summary: "end a channel's token",
    module: 'request',
    example: ['channels', 'revoke', 'ch_x'],
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
  {
    name: 'backup',
    args: '--to DIR',
    summary: 'online snapshot of the SQLite files of $DATA_DIR (the service keeps running) into a new DIR',
    module: 'files',
    example: ['backup', '--to', '/tmp/pc-backup'],
  },
  {
    name: 'restore',
    args: '--from DIR --to DATA_DIR',
    summary: 'copy a backup into a new, empty DATA_DIR (then start the service on it)',
    module: 'files',
    example: ['restore', '--from', '/tmp/pc-backup', '--to', '/tmp/pc-restored'],
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
    'output: tables for a person; --json (with any command) prints the JSON answer',
    'exit: 0 done; 1 the service answered a problem or could not be reached; 2 usage error',
  ].join('\n');
}

/** Every command, generated from OPS_COMMANDS. */
export const OPS_USAGE = usageText();

/** Edit distance (insertions, deletions, substitutions) between two words. */
function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++)
      row.push(Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1)));
    prev = row;
  }
  return prev[b.length];
}

/** The names close to `word` (a typo away, or `word` a prefix of them), nearest first; [] when none is. */
function nearMisses(word: string, names: readonly string[]): string[] {
  const scored = names
    .map((name) => ({ name, d: name.startsWith(word) && word.length >= 2 ? 0 : distance(word, name) }))
    .filter((s) => s.d <= Math.max(2, Math.floor(word.length / 3)));
  return scored.sort((x, y) => x.d - y.d).map((s) => s.name);
}

/** `did you mean X?` for the nearest names, or '' when none is near. */
export function didYouMean(word: string, names: readonly string[]): string {
  const near = nearMisses(word, names).slice(0, 3);
  return near.length === 0 ? '' : `did you mean ${near.join(' or ')}?`;
}

/** The first word of every command, in the table's order. */
const COMMAND_WORDS = [...new Set(OPS_COMMANDS.map((c) => c.name.split(' ')[0]))];

const usageLine = (c: OpsCommand, first: boolean) =>
  `${first ? 'usage:' : '      '} ops ${c.name}${c.args ? ` ${c.args}` : ''}`;

/**
 * The few lines printed after a usage error: the usage of the command the line names (of each sub-command of a
 * group such as `ops stores`, at most five), else the nearest command names and the list of them.
 */
export function usageFor(argv: readonly string[]): string {
  const [first = '', second = ''] = argv.filter((a) => !a.startsWith('--'));
  const exact = OPS_COMMANDS.filter((c) => c.name === `${first} ${second}` || c.name === first);
  const group = OPS_COMMANDS.filter((c) => c.name.split(' ')[0] === first);
  const lines: string[] = [];
  if (exact.length > 0) lines.push(...exact.map((c, i) => usageLine(c, i === 0)));
  else if (group.length > 0) {
    lines.push(...group.slice(0, 5).map((c, i) => usageLine(c, i === 0)));
    const hint =
      second &&
      didYouMean(
        `${first} ${second}`,
        group.map((c) => c.name),
      );
    if (hint) lines.push(hint.replace('did you mean ', 'did you mean ops '));
  } else {
    const hint = first ? didYouMean(first, COMMAND_WORDS) : '';
    if (hint) lines.push(hint);
    lines.push(`commands: ${COMMAND_WORDS.join(', ')}`);
  }
  lines.push('`ops help` prints every command; `--json` prints an answer as JSON');
  return lines.join('\n');
}

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
