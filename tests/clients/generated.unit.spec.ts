/**
 * clients/typescript: the committed generated types are those of the published document today, the client compiles
 * on its own (no Node types, strictest options) and imports nothing outside its folder, so a partner can copy it.
 */
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const CLIENT = path.join(ROOT, 'clients/typescript');
const run = promisify(execFile);

describe('typed client: generated types and a copyable folder', function () {
  this.timeout(60_000);

  it('the committed src/schema.d.ts is what generate.mjs makes from the published document now (`make client`)', async () => {
    const { stdout } = await run(process.execPath, [path.join(CLIENT, 'generate.mjs'), '--stdout'], {
      cwd: ROOT,
      maxBuffer: 32 * 1024 * 1024,
    });
    const committed = fs.readFileSync(path.join(CLIENT, 'src/schema.d.ts'), 'utf8');
    expect(stdout.length).to.be.greaterThan(10_000);
    expect(
      committed === stdout,
      'clients/typescript/src/schema.d.ts is out of date: run `make client` and commit it',
    ).to.equal(true);
  });

  it('src/ imports only its own files (no service folder, no node: module)', () => {
    for (const file of fs.readdirSync(path.join(CLIENT, 'src'))) {
      const text = fs.readFileSync(path.join(CLIENT, 'src', file), 'utf8');
      const specifiers = [...text.matchAll(/\bfrom\s+'([^']+)'|\bimport\(\s*'([^']+)'/g)].map((m) => m[1] ?? m[2]);
      for (const s of specifiers) expect(s, `${file} imports ${s}`).to.match(/^\.\/[\w.-]+\.js$/);
    }
  });

  it('compiles on its own with clients/typescript/tsconfig.json (DOM fetch, no Node types)', async () => {
    const tsc = path.join(ROOT, 'node_modules/.bin/tsc');
    const r = await run(tsc, ['-p', path.join(CLIENT, 'tsconfig.json')], { cwd: CLIENT }).then(
      (o) => ({ ok: true, out: o.stdout + o.stderr }),
      (e: { stdout?: string; stderr?: string }) => ({ ok: false, out: `${e.stdout ?? ''}${e.stderr ?? ''}` }),
    );
    expect(r.ok, r.out).to.equal(true);
  });
});
