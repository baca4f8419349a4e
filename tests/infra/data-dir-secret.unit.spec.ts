/**
 * Secrets generated into DATA_DIR (admin token, cursor secret): generated once with mode 0600 and read back after,
 * the configured value preferred, one value for processes that start at once, never printed by the cursor key.
 */
import { spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import util from 'node:util';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { dataDirSecret } from '../../infra/wiring/data-dir-secret.js';
import { ConfigError, loadConfig } from '../../infra/wiring/config.js';
import { resolveAdminToken, resolveCursorSecret } from '../../infra/wiring/service.js';

const MODULE = fileURLToPath(new URL('../../infra/wiring/data-dir-secret.js', import.meta.url));

describe('secrets generated into DATA_DIR', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-secret-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('generates one once (mode 0600, nothing else left in the folder) and reads it back after', () => {
    const first = dataDirSecret(dir, 'cursor-secret');
    expect(first).to.match(/^[A-Za-z0-9_-]{43}$/);
    expect((fs.statSync(path.join(dir, 'cursor-secret')).mode & 0o777).toString(8)).to.equal('600');
    expect(fs.readdirSync(dir)).to.deep.equal(['cursor-secret']);
    expect(dataDirSecret(dir, 'cursor-secret')).to.equal(first);
    expect(dataDirSecret(dir, 'admin-token')).not.to.equal(first);
  });

  it('prefers the configured value and then writes no file', () => {
    expect(dataDirSecret(dir, 'cursor-secret', 'configured-secret-0123456789abcdef')).to.equal(
      'configured-secret-0123456789abcdef',
    );
    expect(fs.readdirSync(dir)).to.deep.equal([]);
  });

  it('refuses an empty file instead of using an empty secret', () => {
    fs.writeFileSync(path.join(dir, 'admin-token'), '\n');
    expect(() => dataDirSecret(dir, 'admin-token')).to.throw(/is empty/);
  });

  it('gives processes that start at once one and the same value', async () => {
    const script = `import { dataDirSecret } from ${JSON.stringify(MODULE)}; process.stdout.write(dataDirSecret(${JSON.stringify(dir)}, 'cursor-secret'));`;
    const run = () =>
      new Promise<string>((resolve, reject) => {
        const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
          stdio: ['ignore', 'pipe', 'inherit'],
        });
        let out = '';
        child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
        child.once('error', reject);
        child.once('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`exit ${code}`))));
      });
    const values = await Promise.all([run(), run(), run(), run()]);
    expect(new Set(values).size).to.equal(1);
    expect(values[0]).to.equal(fs.readFileSync(path.join(dir, 'cursor-secret'), 'utf8').trim());
    expect(fs.readdirSync(dir)).to.deep.equal(['cursor-secret']);
  });

  it('the admin token and the cursor key come from the configuration or DATA_DIR', () => {
    const generated = loadConfig({ DATA_DIR: dir });
    const token = resolveAdminToken(generated);
    expect(token).to.equal(fs.readFileSync(path.join(dir, 'admin-token'), 'utf8').trim());
    expect(resolveAdminToken(generated)).to.equal(token);
    expect(resolveAdminToken(loadConfig({ DATA_DIR: dir, ADMIN_TOKEN: 'configured-admin-token-0123' }))).to.equal(
      'configured-admin-token-0123',
    );
    const secret = 'a-cursor-secret-of-at-least-32-characters';
    const key = resolveCursorSecret(loadConfig({ DATA_DIR: dir, CURSOR_SECRET: secret }));
    expect(key.mac('x')).to.equal(createHmac('sha256', secret).update('x').digest('base64url'));
    expect(fs.existsSync(path.join(dir, 'cursor-secret'))).to.equal(false);
    // The key never shows in a log line or a dump.
    expect(JSON.stringify({ key })).not.to.contain(secret);
    expect(util.inspect(key, { showHidden: true, depth: 5 })).not.to.contain(secret);
  });

  it('refuses a CURSOR_SECRET shorter than 32 characters', () => {
    expect(() => loadConfig({ CURSOR_SECRET: 'short' })).to.throw(
      ConfigError,
      'CURSOR_SECRET must be at least 32 characters',
    );
    expect(loadConfig({}).cursorSecret).to.equal(undefined);
  });
});
