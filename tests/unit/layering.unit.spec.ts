/**
 * The layering of the source (DESIGN.md, docs/adr/0057-layering-enforced.md), checked on every import's resolved path
 * so that `make test` fails on a violation even without lint (eslint.config.js reports the same on the import's text):
 * shared-schema imports nothing of ours outside itself; command-api, projections and query-api import only
 * shared-schema and themselves; infra imports everything but a route module (a module that declares HTTP routes).
 */
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const LAYERS = ['shared-schema', 'command-api', 'projections', 'query-api', 'infra'] as const;
/** What each layer may import of ours, by top-level folder; infra may import every folder but ROUTE_MODULES. */
const ALLOWED: Record<(typeof LAYERS)[number], readonly string[] | 'all'> = {
  'shared-schema': ['shared-schema'],
  'command-api': ['shared-schema', 'command-api'],
  projections: ['shared-schema', 'projections'],
  'query-api': ['shared-schema', 'query-api'],
  infra: 'all',
};
/** The route modules: each declares HTTP routes of a door; infra hands the doors their tables instead. */
const ROUTE_MODULES = /^(command-api\/routes\/|query-api\/routes\/|query-api\/public\/(routes|pages|search)\.ts$)/;

/**
 * The relative specifiers a source imports: static imports and re-exports (types included), side-effect and dynamic
 * imports, and worker entry points (`new URL('./x.js', import.meta.url)`).
 */
const IMPORT =
  /\b(?:import|export)\s[^'";]*?\bfrom\s*['"](\.[^'"]+)['"]|\bimport\s*\(?\s*['"](\.[^'"]+)['"]|\bnew URL\(\s*['"](\.[^'"]+)['"],\s*import\.meta\.url/g;

type Violation = { file: string; imports: string; rule: string };

/** The violations of the layering among `sources` (path from the repository's root → text). */
function violations(sources: ReadonlyMap<string, string>): Violation[] {
  const found: Violation[] = [];
  for (const [file, text] of sources) {
    const layer = LAYERS.find((l) => file.startsWith(`${l}/`));
    if (!layer) continue;
    for (const m of text.matchAll(IMPORT)) {
      const target = path.posix
        .normalize(path.posix.join(path.posix.dirname(file), m[1] ?? m[2] ?? m[3]))
        .replace(/\.js$/, '.ts');
      const allowed = ALLOWED[layer];
      const rule =
        allowed === 'all'
          ? ROUTE_MODULES.test(target)
            ? 'infra imports no route module'
            : null
          : allowed.includes(target.split('/')[0])
            ? null
            : `${layer} imports only ${allowed.join(' and ')}`;
      if (rule) found.push({ file, imports: target, rule });
    }
  }
  return found;
}

/** Every TypeScript source of the layers, by path from the repository's root. */
function layerSources(): Map<string, string> {
  const sources = new Map<string, string>();
  for (const layer of LAYERS)
    for (const entry of fs.readdirSync(path.join(ROOT, layer), { recursive: true, withFileTypes: true })) {
      if (!entry.isFile() || !entry.name.endsWith('.ts')) continue;
      const full = path.join(entry.parentPath, entry.name);
      sources.set(path.relative(ROOT, full).split(path.sep).join('/'), fs.readFileSync(full, 'utf8'));
    }
  return sources;
}

describe('the layering of the source (DESIGN.md)', () => {
  it('holds: no layer imports what it must not', () => {
    const sources = layerSources();
    expect(sources.size).to.be.greaterThan(100); // the real tree was read
    const found = violations(sources).map((v) => `${v.file} imports ${v.imports}: ${v.rule}`);
    expect(found, found.join('\n')).to.deep.equal([]);
  });

  it('finds each kind of violation, type-only imports, re-exports, dynamic imports and worker entries included', () => {
    const sources = new Map([
      ['shared-schema/a.ts', "import type { Config } from '../infra/wiring/config.js';\nimport { b } from './b.js';"],
      [
        'command-api/services/x.ts',
        "import {\n  y,\n} from '../../query-api/app.js';\nimport { s } from '../../shared-schema/s.js';",
      ],
      ['projections/p.ts', "export { c } from '../command-api/app.js';\nconst m = await import('../infra/m.js');"],
      ['query-api/q.ts', "new Worker(new URL('../projections/w.js', import.meta.url));"],
      ['infra/i.ts', "import { r } from '../query-api/public/search.js';\nimport { d } from '../query-api/app.js';"],
      [
        'infra/wiring/j.ts',
        "import { w } from '../../command-api/routes/batch.js';\nimport '../../projections/runner.js';",
      ],
      ['tests/t.ts', "import { anything } from '../infra/wiring/service.js';"],
    ]);
    expect(violations(sources).map((v) => `${v.file} → ${v.imports}`)).to.deep.equal([
      'shared-schema/a.ts → infra/wiring/config.ts',
      'command-api/services/x.ts → query-api/app.ts',
      'projections/p.ts → command-api/app.ts',
      'projections/p.ts → infra/m.ts',
      'query-api/q.ts → projections/w.ts',
      'infra/i.ts → query-api/public/search.ts',
      'infra/wiring/j.ts → command-api/routes/batch.ts',
    ]);
  });
});
