import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runOps, type OpsRun } from '../support/e2e.js';
import { portOf } from '../../infra/http/gateway.js';
import { client, productBody, startTestService, storeBody, type TestService } from '../support/service.js';

describe('ops command line against a running service', function () {
  let t: TestService;
  const runs: OpsRun[] = [];
  let adminUrl: string;

  const ops = async (args: string[], env: Record<string, string | undefined> = {}): Promise<OpsRun> => {
    const run = await runOps(adminUrl, t.service.adminToken, [...args, '--json'], env);
    runs.push(run);
    return run;
  };

  before(async () => {
    t = await startTestService();
    adminUrl = `http://127.0.0.1:${portOf(t.service.admin)}`;
  });
  after(async () => {
    await t.close();
  });

  it('creates a partner, issues a key that works at once, revokes it', async () => {
    const partner = await ops(['partners', 'create', '--name', 'Hub Ops', '--type', 'hub']);
    expect(partner.code, partner.stderr).to.equal(0);
    expect(partner.json).to.include({ name: 'Hub Ops', partner_type: 'hub' });
    const partnerId = partner.json.partner_id as string;

    const key = await ops(['keys', 'issue', '--partner', partnerId, '--env', 'test', '--scopes', 'catalog,reports']);
    expect(key.code, key.stderr).to.equal(0);
    expect(key.json.api_key).to.match(/^ik_test_/);
    expect(key.json.scopes).to.deep.equal(['catalog', 'reports']);
    const me = await client(t.api, key.json.api_key).get('/me');
    expect(me.status).to.equal(200);
    expect(me.body).to.include({ partner_id: partnerId, environment: 'test' });

    const revoked = await ops(['keys', 'revoke', key.json.key_id]);
    expect(revoked.code, revoked.stderr).to.equal(0);
    expect(revoked.json).to.deep.equal({ key_id: key.json.key_id, revoked: true });
    expect((await client(t.api, key.json.api_key).get('/me')).status).to.equal(401);
  });

  it('approves, suspends and reinstates a store, and approves one added domain', async () => {
    const p = await t.partner({ type: 'hub' });
    expect((await p.api.put('/stores/loja-ops', storeBody({ domains: ['shop.test', 'outra.test'] }))).status).to.equal(
      200,
    );
    const where = ['--partner', p.partnerId, '--env', 'live', '--store', 'loja-ops'];

    const domain = await ops(['stores', 'approve-domain', ...where, '--domain', 'outra.test']);
    expect(domain.code, domain.stderr).to.equal(0);
    expect(domain.json.domains_approved).to.deep.equal(['outra.test']);
    expect(domain.json.status).to.equal('pending_review');

    const approved = await ops(['stores', 'approve', ...where]);
    expect(approved.code, approved.stderr).to.equal(0);
    expect(approved.json.status).to.equal('active');
    expect((await p.api.get('/stores/loja-ops')).body.status).to.equal('active');

    expect((await ops(['stores', 'suspend', ...where])).json.status).to.equal('suspended');
    expect((await p.api.get('/stores/loja-ops')).body.status).to.equal('suspended');
    expect((await ops(['stores', 'reinstate', ...where])).json.status).to.equal('active');
    expect((await p.api.get('/stores/loja-ops')).body.status).to.equal('active');
  });

  it('reads and advances the manual clock', async () => {
    const before = await ops(['clock', 'get']);
    expect(before.code).to.equal(0);
    expect(before.json.manual).to.equal(true);
    const moved = await ops(['clock', 'advance', '90000']);
    expect(moved.code, moved.stderr).to.equal(0);
    expect(Date.parse(moved.json.now) - Date.parse(before.json.now)).to.equal(90_000);
    expect(t.clock.now().toISOString()).to.equal(moved.json.now);
  });

  it('reads a stream whose name holds ":" for audit', async () => {
    const p = await t.partner({ type: 'hub' });
    await p.api.put('/stores/loja-audit', storeBody());
    const stream = `store-live:${p.partnerId}:loja-audit`;
    const read = await ops(['streams', 'read', stream]);
    expect(read.code, read.stderr).to.equal(0);
    expect(read.json.stream).to.equal(stream);
    expect(read.json.events.map((e: { type: string }) => e.type)).to.deep.equal(['StoreRegistered']);
  });

  it('exits 1 with the problem on stderr when the service refuses', async () => {
    const missing = await ops(['keys', 'revoke', 'key_does_not_exist']);
    expect(missing.code).to.equal(1);
    expect(missing.stdout).to.equal('');
    expect(missing.stderr).to.contain('HTTP 404').and.contain('No such key');

    const invalid = await ops(['partners', 'create', '--name', 'X', '--type', 'hub']);
    expect(invalid.code).to.equal(1);
    expect(invalid.stderr).to.contain('HTTP 422').and.contain('name: required');

    const badToken = await ops(['clock', 'get'], { ADMIN_TOKEN: 'wrong-token-wrong-token' });
    expect(badToken.code).to.equal(1);
    expect(badToken.stderr).to.contain('HTTP 401');
    expect(badToken.stderr).not.to.contain('wrong-token-wrong-token');
  });

  it('exits 2 on a usage error, and 1 when the service cannot be reached', async () => {
    for (const args of [
      [],
      ['keys', 'issue', '--partner', 'pt_x'],
      ['partners', 'create', '--name', 'A B', '--type', 'shop'],
      ['clock', 'advance', '-5'],
      ['nope'],
      ['clock', 'get', '--extra', '1'],
    ]) {
      const r = await ops(args);
      expect(r.code, args.join(' ')).to.equal(2);
      expect(r.stderr).to.contain('`ops help` prints every command');
      if (args.length > 0 && args[0] !== 'nope') expect(r.stderr).to.contain(`usage: ops ${args[0]}`);
    }
    const down = await ops(['clock', 'get'], { ADMIN_URL: 'http://127.0.0.1:9' });
    expect(down.code).to.equal(1);
    expect(down.stderr).to.contain('could not reach');
  });

  it('finds the admin API from ADMIN_URL with or without /admin/v1, or from ADMIN_PORT alone', async () => {
    const port = String(portOf(t.service.admin));
    for (const env of [
      { ADMIN_URL: `${adminUrl}/admin/v1/` },
      { ADMIN_URL: undefined, ADMIN_PORT: port },
      { ADMIN_URL: '', ADMIN_PORT: port },
    ]) {
      const r = await ops(['clock', 'get'], env);
      expect(r.code, `${JSON.stringify(env)}: ${r.stderr}`).to.equal(0);
      expect(r.json.manual).to.equal(true);
      const health = await ops(['health'], env); // an operations command: the admin port's own routes
      expect(health.code, `${JSON.stringify(env)}: ${health.stderr}`).to.equal(0);
    }
    // ADMIN_URL wins over ADMIN_PORT; neither set: 127.0.0.1:8081, `make run`'s default
    const wins = await ops(['clock', 'get'], { ADMIN_URL: 'http://127.0.0.1:9', ADMIN_PORT: port });
    expect(wins.stderr).to.contain('could not reach http://127.0.0.1:9/admin/v1');
  });

  it('takes the token from $DATA_DIR/admin-token when ADMIN_TOKEN is unset', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-ops-'));
    try {
      fs.writeFileSync(path.join(dir, 'admin-token'), `${t.service.adminToken}\n`, { mode: 0o600 });
      const r = await ops(['clock', 'get'], { ADMIN_TOKEN: undefined, DATA_DIR: dir });
      expect(r.code, r.stderr).to.equal(0);
      expect(r.json.manual).to.equal(true);
      const none = await ops(['clock', 'get'], { ADMIN_TOKEN: undefined, DATA_DIR: path.join(dir, 'absent') });
      expect(none.code).to.equal(2);
      expect(none.stderr).to.contain('no admin token');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('backs up while the service runs; a service started on the restored DATA_DIR verifies and serves the data', async function () {
    if (!fs.existsSync(path.join(t.dataDir, 'events.db'))) this.skip(); // events kept by EventStoreDB, not SQLite
    const p = await t.partner({ type: 'hub' });
    expect((await p.api.put('/stores/loja-copia', storeBody())).status).to.equal(200);
    expect((await t.approveStore(p, 'loja-copia')).status).to.equal(200);
    for (let i = 0; i < 5; i++)
      expect((await p.api.put(`/products/sku-copia-${i}`, productBody('loja-copia'))).status).to.equal(200);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-backup-'));
    const backupDir = path.join(dir, 'backup');
    const restored = path.join(dir, 'restored');
    let again: TestService | undefined;
    try {
      // Writes go on while the backup runs; it holds every write answered before it started.
      const [backup] = await Promise.all([
        ops(['backup', '--to', backupDir], { DATA_DIR: t.dataDir }),
        p.api.put('/products/sku-durante', productBody('loja-copia')),
      ]);
      expect(backup.code, backup.stderr).to.equal(0);
      expect(backup.json.files.map((f: { file: string }) => f.file)).to.include.members(['read.db', 'events.db']);
      // Every generated secret is kept (cursors stay valid, partners' webhook signing secrets stay the same), and
      // every file is the service user's alone: the databases hold partners' data and key hashes.
      expect(backup.json.files.map((f: { file: string }) => f.file)).to.include.members([
        'cursor-secret',
        'webhook-key',
      ]);
      const modes = (dir: string) =>
        fs.readdirSync(dir).map((f) => [f, (fs.statSync(path.join(dir, f)).mode & 0o777).toString(8)]);
      const privately = (dir: string) => fs.readdirSync(dir).map((f) => [f, '600']);
      expect(modes(backupDir)).to.deep.equal(privately(backupDir));
      expect((await ops(['backup', '--to', backupDir], { DATA_DIR: t.dataDir })).stderr).to.contain('is not empty');
      expect((await p.api.get('/products/sku-copia-4')).status, 'the service kept serving').to.equal(200);

      const restore = await ops(['restore', '--from', backupDir, '--to', restored]);
      expect(restore.code, restore.stderr).to.equal(0);
      expect(modes(restored)).to.deep.equal(privately(restored));
      const webhookKey = (dir: string) => fs.readFileSync(path.join(dir, 'webhook-key'), 'utf8');
      expect(webhookKey(restored)).to.equal(webhookKey(t.dataDir));
      again = await startTestService({}, restored);
      const url = `http://127.0.0.1:${portOf(again.service.admin)}/admin/v1`;
      const verify = await runOps(url, again.service.adminToken, ['audit', 'verify', '--json']);
      expect(verify.code, verify.stdout + verify.stderr).to.equal(0);
      expect(verify.json.ok).to.equal(true);
      const partner = client(again.api, p.key);
      expect((await partner.get('/stores/loja-copia')).body.status).to.equal('active');
      for (let i = 0; i < 5; i++) {
        const read = await partner.get(`/products/sku-copia-${i}`);
        expect(read.status, `sku-copia-${i}`).to.equal(200);
        expect(read.body.store_id).to.equal('loja-copia');
      }
    } finally {
      await again?.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a backup or a restore without its directories (2), or into a directory in use (1)', async () => {
    expect((await ops(['backup'])).code).to.equal(2);
    const usage = await ops(['restore', '--from', '/tmp/x']);
    expect(usage.code).to.equal(2);
    expect(usage.stderr).to.contain('usage: ops restore --from DIR --to DATA_DIR');
    const noBackup = await ops(['restore', '--from', t.dataDir, '--to', t.dataDir]);
    expect(noBackup.code).to.equal(1);
    expect(noBackup.stderr).to.contain('is not empty');
    const nothing = await ops(['backup', '--to', path.join(os.tmpdir(), 'pc-never')], {
      DATA_DIR: path.join(os.tmpdir(), 'pc-no-such-data-dir'),
    });
    expect(nothing.code).to.equal(1);
    expect(nothing.stderr).to.contain('no events.db');
  });

  it('never prints the admin token', () => {
    expect(runs.length).to.be.greaterThan(10);
    for (const r of runs) expect(r.stdout + r.stderr).not.to.contain(t.service.adminToken);
  });
});
