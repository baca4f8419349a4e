/**
 * How `ops` prints an answer for a person: aligned columns, one line per row (`--json` prints the JSON instead).
 *
 * An answer with a list (partners, stores, domains, events, entries, projections, dead letters, parked events) is a
 * table of that list, after its other fields as `name: value` lines (a page's `next_cursor`, a stream's name); any
 * other object is a two-column table of its fields. A nested value is one compact cell, so a row stays one line.
 */

type Row = Record<string, unknown>;
interface Column {
  header: string;
  value: (row: Row) => unknown;
}

const field =
  (...path: string[]) =>
  (row: Row): unknown =>
    path.reduce<unknown>((v, k) => (v && typeof v === 'object' ? (v as Row)[k] : undefined), row);

/** `pending/active/suspended` of one environment of a partner's stores. */
const storeCounts = (env: string) => (row: Row) => {
  const c = field('stores', env)(row) as Record<string, number> | undefined;
  return c ? `${c.pending_review}/${c.active}/${c.suspended}` : '';
};

/** Columns chosen for the lists a person reads most; a list not named here shows every field of its rows. */
const COLUMNS: Readonly<Record<string, readonly Column[]>> = {
  partners: [
    { header: 'PARTNER', value: field('partner_id') },
    { header: 'NAME', value: field('name') },
    { header: 'TYPE', value: field('partner_type') },
    { header: 'KEYS ACTIVE', value: field('keys', 'active') },
    { header: 'REVOKED', value: field('keys', 'revoked') },
    { header: 'LIVE PEND/ACT/SUSP', value: storeCounts('live') },
    { header: 'TEST PEND/ACT/SUSP', value: storeCounts('test') },
    { header: 'CREATED', value: field('created_at') },
  ],
  events: [
    { header: 'REV', value: field('revision') },
    { header: 'POSITION', value: field('position') },
    { header: 'TYPE', value: field('type') },
    { header: 'RECORDED', value: field('metadata', 'recorded_at') },
    { header: 'ACTOR', value: field('metadata', 'actor') },
    { header: 'DATA', value: field('data') },
  ],
  projections: [
    { header: 'PROJECTION', value: field('name') },
    { header: 'STATE', value: field('state') },
    { header: 'CHECKPOINT', value: field('checkpoint') },
    { header: 'HEAD', value: field('head') },
    { header: 'LAG', value: field('lag_events') },
    { header: 'PARKED', value: field('parked_events') },
    { header: 'REBUILD', value: (r) => field('rebuild', 'state')(r) ?? '' },
  ],
};

/** A value in one cell: text as is, a list joined by commas, an object as compact JSON; never a line break. */
function cell(value: unknown, max = 80): string {
  let text: string;
  if (value === undefined || value === null) text = '';
  else if (typeof value === 'string') text = value;
  else if (typeof value === 'object')
    text =
      Array.isArray(value) && value.every((v) => typeof v !== 'object' || v === null)
        ? value.map((v) => cell(v, Infinity)).join(',')
        : JSON.stringify(value);
  else if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') text = String(value);
  else text = '';
  text = text.replace(/[\r\n\t]+/g, ' ');
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** Rows under their headers, each column as wide as its widest cell, two spaces apart. */
export function table(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n');
}

const isRowList = (v: unknown): v is Row[] =>
  Array.isArray(v) && v.every((r) => r !== null && typeof r === 'object' && !Array.isArray(r));

function listTable(name: string, rows: readonly Row[]): string {
  if (rows.length === 0) return `(no ${name.replace(/_/g, ' ')})`;
  const columns =
    COLUMNS[name] ??
    [...new Set(rows.flatMap((r) => Object.keys(r)))].map((k) => ({
      header: k.toUpperCase(),
      value: field(k),
    }));
  return table(
    columns.map((c) => c.header),
    rows.map((r) => columns.map((c) => cell(c.value(r), c.header === 'DATA' ? 100 : 80))),
  );
}

/** The answer for a person (see the file's comment); ends with a newline. */
function humanText(body: unknown): string {
  if (body === null || typeof body !== 'object') return `${cell(body, Infinity)}\n`;
  if (isRowList(body)) return `${listTable('rows', body)}\n`;
  const entries = Object.entries(body as Row);
  const lists = entries.filter(([, v]) => isRowList(v));
  if (lists.length === 0)
    return `${table(
      ['FIELD', 'VALUE'],
      entries.map(([k, v]) => [k, cell(v, 120)]),
    )}\n`;
  const scalars = entries.filter(([k]) => !lists.some(([l]) => l === k));
  const head = scalars.map(([k, v]) => `${k}: ${cell(v, 120)}`);
  const tables = lists.map(([k, v]) => listTable(k, v as Row[]));
  return `${[...head, ...tables].join('\n')}\n`;
}

/** The answer as `--json` asks (indented JSON) or for a person. */
export function printed(body: unknown, json: boolean): string {
  return json ? `${JSON.stringify(body, null, 2)}\n` : humanText(body);
}
