/**
 * examples/walkthrough.sh, the README's walkthrough as a script, run as a partner would run it against a running
 * embedded service (system clock): to `accepted` with a cover the store serves, and to `rejected` with the reason
 * when the cover does not open. The covers come from the loopback HTTPS image server (test CA, host map).
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { expect } from 'chai';
import { startImageServers, type ImageServers } from '../support/https-image-server.js';
import { coverTestEnv, type CoverEnv } from '../support/cover-env.js';
import { startTestService, type TestService } from '../support/service.js';
import { portOf } from '../../infra/http/gateway.js';

const SCRIPT = path.resolve('examples/walkthrough.sh');

function run(env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('bash', [SCRIPT], { env: { ...process.env, ...env }, timeout: 120_000 }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof err.code === 'number' ? err.code : 1;
      resolve({ code, stdout, stderr });
    });
  });
}

describe('examples/walkthrough.sh against the running service', function () {
  this.timeout(180_000);
  let servers: ImageServers;
  let cover: CoverEnv;
  let t: TestService;
  let env: Record<string, string>;

  before(async () => {
    servers = await startImageServers();
    cover = coverTestEnv(servers);
    t = await startTestService({ ...cover.env, CLOCK: 'system' });
    env = {
      SERVICE_URL: `http://127.0.0.1:${portOf(t.service.gateway)}`,
      ADMIN_URL: `http://127.0.0.1:${portOf(t.service.admin)}`,
      ADMIN_TOKEN: t.service.adminToken,
      STORE_DOMAIN: 'shop.test',
    };
  });
  after(async () => {
    await t?.close();
    await servers?.close();
    cover?.cleanup();
  });

  it('reaches accepted with a cover the store serves, then a click, a paid order, a refund and the report', async () => {
    const r = await run({ ...env, COVER_URL: servers.url('shop.test', '/img/800x600.jpg'), EXPECT_COVER: 'accepted' });
    expect(r.code, r.stderr + r.stdout).to.equal(0);
    expect(r.stdout).to.include('accepted: the product is live in the test area');
    expect(r.stdout).to.match(/"status":"refunded","net_cents":2999/);
    expect(r.stdout).to.include('walkthrough done');
  });

  it('ends rejected with the reason and what to do when the cover does not open; a second run works on the same data', async () => {
    // Found from PORT and ADMIN_PORT alone, as `make run` reads them (no SERVICE_URL, no ADMIN_URL).
    const { SERVICE_URL: _service, ADMIN_URL: _admin, ...rest } = env;
    const ports = { PORT: String(portOf(t.service.gateway)), ADMIN_PORT: String(portOf(t.service.admin)) };
    const r = await run({
      ...rest,
      ...ports,
      COVER_URL: servers.url('shop.test', '/status/404'),
      EXPECT_COVER: 'rejected',
    });
    expect(r.code, r.stderr + r.stdout).to.equal(0);
    expect(r.stdout).to.include('rejected: image_unreachable');
    expect(r.stdout).to.include("serve the cover from your store's");
  });

  it('stops at the first answer that is not what it should be, and says which', async () => {
    const r = await run({ ...env, ADMIN_TOKEN: 'wrong-token-wrong-token' });
    expect(r.code).to.equal(1);
    expect(r.stderr).to.match(/walkthrough failed: POST .*\/partners answered 401, not 201/);
  });
});
