/**
 * The settings table of docs/configuration.md, generated from SETTINGS (infra/wiring/config.ts) between two marker
 * comments: `make config-doc` (node dist/infra/wiring/config-doc.js) rewrites it; `--check` only says whether the committed
 * table is current. A unit test fails while it is not (tests/infra/config-doc.unit.spec.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SETTINGS, type Setting } from './config.js';

export const CONFIG_DOC = fileURLToPath(new URL('../../../docs/configuration.md', import.meta.url));
const BEGIN = '<!-- settings: generated from SETTINGS in infra/wiring/config.ts by `make config-doc`; edit there -->';
const END = '<!-- settings: end -->';

/** The Markdown table of every setting, one row per variable, in the order of SETTINGS. */
function settingsTable(): string {
  const rows = Object.entries(SETTINGS as Record<string, Setting<unknown, unknown>>).map(([variable, s]) =>
    [`\`${variable}\``, s.shown ?? shownValue(s.fallback), s.kind.values, s.readBy.join(', '), s.meaning]
      .map((cell) => cell.replaceAll('|', '\\|'))
      .join(' | '),
  );
  return [
    '| Variable | Default | Values | Read by | Meaning |',
    '| --- | --- | --- | --- | --- |',
    ...rows.map((row) => `| ${row} |`),
  ].join('\n');
}

function shownValue(fallback: unknown): string {
  if (fallback === undefined) return 'unset';
  if (fallback === '') return 'empty';
  if (typeof fallback === 'boolean') return fallback ? '`on`' : '`off`';
  if (typeof fallback === 'string' || typeof fallback === 'number') return `\`${fallback}\``;
  throw new Error(`no way to show the default ${JSON.stringify(fallback)}`);
}

/** `doc` with the text between the markers replaced by the table of today's SETTINGS. */
export function withSettingsTable(doc: string): string {
  const begin = doc.indexOf(BEGIN);
  const end = doc.indexOf(END);
  if (begin < 0 || end < begin) throw new Error(`${CONFIG_DOC} lacks the markers ${BEGIN} … ${END}`);
  return `${doc.slice(0, begin + BEGIN.length)}\n${settingsTable()}\n${doc.slice(end)}`;
}

function main(args: string[]): void {
  const doc = fs.readFileSync(CONFIG_DOC, 'utf8');
  const generated = withSettingsTable(doc);
  if (args.includes('--check')) {
    if (generated !== doc) {
      process.stderr.write(`${path.relative(process.cwd(), CONFIG_DOC)} is out of date: run \`make config-doc\`\n`);
      process.exit(1);
    }
    return;
  }
  fs.writeFileSync(CONFIG_DOC, generated);
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  main(process.argv.slice(2));
}
