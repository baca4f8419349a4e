/**
 * The documentation names files that exist. docs/architecture.md walks a request through the code file by file: every
 * repository path it names in backticks must exist, so a rename or a removal that leaves the page behind fails here.
 * The Markdown links of the user-facing pages (README.md, docs/architecture.md, docs/performance.md, the index of
 * docs/adr/) must reach a file too. Paths outside the repository (`../shared/…`) and addresses served by the service
 * (`/v1/…`) are not files of the repository and are not checked.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** A backticked span that reads as a path inside the repository: `a/b`, `a/b/`, `a/b.ts`, `main.ts`. */
const REPO_PATH =
  /^(?:[A-Za-z0-9_.-]+\/)+[A-Za-z0-9_.-]*$|^[A-Za-z0-9_-][A-Za-z0-9_.-]*\.(?:ts|js|mjs|md|json|sh|yaml|template)$/;

export function backtickedPaths(markdown: string): string[] {
  const spans = [...markdown.matchAll(/`([^`\n]+)`/g)].map((m) => m[1]);
  return [...new Set(spans.filter((s) => REPO_PATH.test(s) && !s.startsWith('../')))];
}

export function relativeLinks(markdown: string): string[] {
  const targets = [...markdown.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1].split('#')[0]);
  return [...new Set(targets.filter((t) => t !== '' && !/^[a-z]+:/i.test(t) && !t.startsWith('/')))];
}

function missing(paths: string[], from: string): string[] {
  return paths.filter((p) => !fs.existsSync(path.resolve(from, p)));
}

function read(file: string): string {
  return fs.readFileSync(path.join(ROOT, file), 'utf8');
}

describe('documentation paths', () => {
  it('finds paths in backticks and leaves commands, routes and outside paths alone', () => {
    const sample =
      'See `infra/http/gateway.ts`, `tests/support/`, `main.ts` and `docs/adr/0001-x.md`; not `GET /v1/products/{sku}`, ' +
      '`/v1/guia.md`, `../shared/spec/SHOPPER.md`, `make run`, `pc-search` nor `SEARCH_THREADS`.';
    expect(backtickedPaths(sample)).to.deep.equal([
      'infra/http/gateway.ts',
      'tests/support/',
      'main.ts',
      'docs/adr/0001-x.md',
    ]);
    expect(missing(['no/such/file.ts', 'infra/http/gateway.ts'], ROOT)).to.deep.equal(['no/such/file.ts']);
  });

  it('every repository path named in docs/architecture.md exists', () => {
    const paths = backtickedPaths(read('docs/architecture.md'));
    expect(paths.length, 'paths found in docs/architecture.md').to.be.greaterThan(40);
    expect(missing(paths, ROOT), 'paths named in docs/architecture.md that do not exist').to.deep.equal([]);
  });

  for (const file of ['README.md', 'docs/architecture.md', 'docs/performance.md', 'docs/adr/README.md']) {
    it(`every relative link of ${file} reaches a file`, () => {
      const from = path.dirname(path.join(ROOT, file));
      expect(missing(relativeLinks(read(file)), from), `links of ${file} to nothing`).to.deep.equal([]);
    });
  }
});
