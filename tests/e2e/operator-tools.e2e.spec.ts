/**
 * The operator's tools: partner and approval lists on the admin API and in `ops`, stream names
 * built from partner/env/store/sku, problem+json on every admin error (404 and 405 included), the whole usage after
 * every usage error, and the default scopes of a key.
 */
import { expect } from 'chai';
import { runOps, type OpsRun } from '../support/e2e.js';
import { portOf } from '../../infra/http/gateway.js';
import { OPS_COMMANDS } from '../../infra/ops/cli/commands.js';
import {
  client,
  productBody,
  startTestService,
  storeBody,
  type Partner,
  type TestService,
} from '../support/service.js';

const BASE = 'https://api.example.test/v1';
const ALICE = 'alice-admin-token-0123456789';
const BOB = 'bob-admin-token-0123456789';

describe("the operator's tools (admin lists, problems, ops usage, default scopes)", function () {
  let t: TestService;
  let adminUrl: string;
  let hub: Partner;
  let shop: Partner;

  const ops = (args: string[], env: Record<string, string> = {}): Promise<OpsRun> =>
    runOps(adminUrl, t.service.adminToken, [...args, '--json'], env);
  /** `ops` as a person runs it: tables, no --json. */
  const opsTable = (args: string[]): Promise<OpsRun> => runOps(adminUrl, t.service.adminToken, args);

  before(async () => {
    t = await startTestService({ API_BASE_URL: BASE, ADMIN_TOKENS: `alice:${ALICE},bob:${BOB}` });
    t.clock.set(new Date('2026-01-02T00:00:00Z'));
    adminUrl = `http://127.0.0.1:${portOf(t.service.admin)}`;
    hub = await t.partner({ type: 'hub', name: 'Hub Listado', env: 'test' });
    await t.key(hub.partnerId, 'live');
    const revoked = await t.key(hub.partnerId, 'live');
    expect((await t.admin.delete(`/keys/${revoked.keyId}`)).status).to.equal(204);
    shop = await t.partner({ type: 'store', name: 'Loja Sozinha', env: 'live' });
    // hub, test: two stores pending, one approved; shop, live: one store with one of its two domains approved.
    expect((await hub.api.put('/stores/a-pending', storeBody({ domains: ['a.test'] }))).status).to.equal(200);
    expect((await hub.api.put('/stores/b-pending', storeBody({ domains: ['b.test', 'b2.test'] }))).status).to.equal(
      200,
    );
    expect((await hub.api.put('/stores/c-active', storeBody({ domains: ['c.test'] }))).status).to.equal(200);
    expect((await t.approveStore(hub, 'c-active', 'test')).status).to.equal(200);
    const unica = storeBody({ domains: ['shop.test', 'extra.test'] });
    expect((await shop.api.put('/stores/unica', unica)).status).to.equal(200);
    expect((await t.admin.post(`/partners/${shop.partnerId}/live/stores/unica/approve`, {})).status).to.equal(200);
    expect(
      (await shop.api.put('/stores/unica', { ...unica, domains: ['shop.test', 'extra.test', 'new.test'] })).status,
    ).to.equal(200);
  });
  after(async () => t.close());

  describe('admin API lists', () => {
    it('GET /partners lists partners with key counts and stores by status per environment', async () => {
      const r = await t.admin.get('/partners');
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      expect(r.body.next_cursor).to.equal(null);
      const h = r.body.partners.find((p: { partner_id: string }) => p.partner_id === hub.partnerId);
      expect(h).to.include({ name: 'Hub Listado', partner_type: 'hub', created_at: '2026-01-02T00:00:00.000Z' });
      expect(h.keys).to.deep.equal({ active: 2, revoked: 1 });
      expect(h.stores).to.deep.equal({
        live: { pending_review: 0, active: 0, suspended: 0, total: 0 },
        test: { pending_review: 2, active: 1, suspended: 0, total: 3 },
      });
      const s = r.body.partners.find((p: { partner_id: string }) => p.partner_id === shop.partnerId);
      expect(s.stores.live).to.deep.equal({ pending_review: 0, active: 1, suspended: 0, total: 1 });
    });

    it('pages GET /partners with limit and next_cursor', async () => {
      const first = await t.admin.get('/partners?limit=1');
      expect(first.body.partners).to.have.length(1);
      expect(first.body.next_cursor).to.be.a('string');
      const second = await t.admin.get(`/partners?limit=1&cursor=${first.body.next_cursor}`);
      expect(second.body.partners).to.have.length(1);
      expect(second.body.next_cursor).to.equal(null);
      expect([first.body.partners[0].partner_id, second.body.partners[0].partner_id]).to.have.members([
        hub.partnerId,
        shop.partnerId,
      ]);
      expect((await t.admin.get('/partners?cursor=bm9wZQ')).status).to.equal(422);
      expect((await t.admin.get('/partners?limit=0')).status).to.equal(422);
    });

    it('GET /stores?status=pending_review lists the stores awaiting approval across partners', async () => {
      const r = await t.admin.get('/stores?status=pending_review');
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      expect(
        r.body.stores.map((s: { partner_id: string; environment: string; store_id: string; status: string }) => [
          s.partner_id,
          s.environment,
          s.store_id,
          s.status,
        ]),
      ).to.deep.equal([
        [hub.partnerId, 'test', 'a-pending', 'pending_review'],
        [hub.partnerId, 'test', 'b-pending', 'pending_review'],
      ]);
      expect(r.body.stores[0]).to.include({ partner_name: 'Hub Listado', name: 'Loja Exemplo' });
      const paged = await t.admin.get('/stores?status=pending_review&limit=1');
      expect(paged.body.stores.map((s: { store_id: string }) => s.store_id)).to.deep.equal(['a-pending']);
      const rest = await t.admin.get(`/stores?status=pending_review&limit=1&cursor=${paged.body.next_cursor}`);
      expect(rest.body.stores.map((s: { store_id: string }) => s.store_id)).to.deep.equal(['b-pending']);
      expect(rest.body.next_cursor).to.equal(null);
      expect((await t.admin.get('/stores?status=closed')).status).to.equal(422);
    });

    it('GET /domains/pending lists declared domains not yet approved, one per line', async () => {
      const r = await t.admin.get('/domains/pending');
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      expect(
        r.body.domains.map((d: { partner_id: string; store_id: string; domain: string; store_status: string }) => [
          d.partner_id === hub.partnerId ? 'hub' : 'shop',
          d.store_id,
          d.domain,
          d.store_status,
        ]),
      ).to.have.deep.members([
        ['hub', 'a-pending', 'a.test', 'pending_review'],
        ['hub', 'b-pending', 'b.test', 'pending_review'],
        ['hub', 'b-pending', 'b2.test', 'pending_review'],
        ['shop', 'unica', 'new.test', 'active'],
      ]);
      const onlyShop = await t.admin.get(`/domains/pending?partner_id=${shop.partnerId}&env=live`);
      expect(onlyShop.body.domains).to.deep.equal([
        {
          partner_id: shop.partnerId,
          partner_name: 'Loja Sozinha',
          environment: 'live',
          store_id: 'unica',
          store_status: 'active',
          domain: 'new.test',
        },
      ]);
    });
  });

  describe('admin errors are problem+json', () => {
    const expectProblem = (r: { status: number; headers: Headers; body: any }, status: number) => {
      expect(r.headers.get('content-type')).to.contain('application/problem+json');
      expect(r.body).to.include({ type: `${BASE}/problemas/${status}`, status });
      expect(r.body.title).to.be.a('string');
      expect(r.body.request_id).to.equal(r.headers.get('x-request-id'));
    };

    it('answers a body above 64 KiB with a readable 413 problem, the connection kept for the next call', async () => {
      const big = JSON.stringify({ name: 'x'.repeat(300 * 1024), partner_type: 'hub' });
      const r = await t.admin.request('POST', '/partners', {
        body: big,
        headers: { 'Content-Type': 'application/json' },
      });
      expect(r.status).to.equal(413);
      expect(r.body.type).to.equal(`${BASE}/problemas/413`);
      expect((await t.admin.get('/partners?limit=1')).status).to.equal(200);
    });

    it('answers 405 with Allow and a problem for a known path with another method', async () => {
      const r = await t.admin.request('DELETE', '/partners');
      expect(r.status).to.equal(405);
      expectProblem(r, 405);
      expect(r.headers.get('allow')?.split(', ').sort()).to.deep.equal(['GET', 'HEAD', 'POST']);
      const clock = await t.admin.request('PUT', '/clock', {
        body: '{}',
        headers: { 'Content-Type': 'application/json' },
      });
      expect(clock.status).to.equal(405);
      expectProblem(clock, 405);
      expect(clock.headers.get('allow')?.split(', ').sort()).to.deep.equal(['GET', 'HEAD', 'POST']);
    });

    it('answers 404 with a problem for an unknown path, and 401 before either', async () => {
      const r = await t.admin.get('/nothing/here');
      expect(r.status).to.equal(404);
      expectProblem(r, 404);
      const noToken = await client(adminUrl).request('DELETE', '/partners');
      expect(noToken.status).to.equal(401);
      expectProblem(noToken, 401);
    });

    it('answers a problem for a 422 of the lists', async () => {
      const r = await t.admin.get('/stores?env=prod');
      expect(r.status).to.equal(422);
      expectProblem(r, 422);
      expect(r.body.errors[0]).to.include({ field: 'env', code: 'enum' });
    });
  });

  describe('ops', () => {
    it('ops partners list prints the partners with their counts', async () => {
      const r = await ops(['partners', 'list']);
      expect(r.code, r.stderr).to.equal(0);
      const h = r.json.partners.find((p: { partner_id: string }) => p.partner_id === hub.partnerId);
      expect(h.stores.test.pending_review).to.equal(2);
    });

    it('ops stores pending and ops domains pending print what awaits approval', async () => {
      const stores = await ops(['stores', 'pending']);
      expect(stores.code, stores.stderr).to.equal(0);
      expect(stores.json.stores.map((s: { store_id: string }) => s.store_id)).to.deep.equal(['a-pending', 'b-pending']);
      const narrowed = await ops(['stores', 'pending', '--partner', shop.partnerId]);
      expect(narrowed.json.stores).to.deep.equal([]);
      const domains = await ops(['domains', 'pending', '--partner', shop.partnerId, '--env', 'live']);
      expect(domains.code, domains.stderr).to.equal(0);
      expect(domains.json.domains.map((d: { domain: string }) => d.domain)).to.deep.equal(['new.test']);
    });

    it('ops streams read builds the stream name from partner, env and store / product', async () => {
      const put = await hub.api.put(
        '/products/sku-lido',
        productBody('c-active', { product_url: 'https://c.test/p/1' }),
      );
      expect(put.status, JSON.stringify(put.body)).to.equal(200);
      const product = await ops([
        'streams',
        'read',
        '--product',
        'sku-lido',
        '--partner',
        hub.partnerId,
        '--env',
        'test',
      ]);
      expect(product.code, product.stderr).to.equal(0);
      expect(product.json.stream).to.equal(`product-test:${hub.partnerId}:sku-lido`);
      expect(product.json.events[0].type).to.be.a('string');
      const store = await ops(['streams', 'read', '--partner', hub.partnerId, '--env', 'test', '--store', 'c-active']);
      expect(store.code, store.stderr).to.equal(0);
      expect(store.json.events.map((e: { type: string }) => e.type)).to.deep.equal([
        'StoreRegistered',
        'StoreApproved',
      ]);
      const partner = await ops(['streams', 'read', '--partner', hub.partnerId]);
      expect(partner.code, partner.stderr).to.equal(0);
      expect(partner.json.stream).to.equal(`partner-${hub.partnerId}`);
      expect(partner.json.events.map((e: { type: string }) => e.type)).to.include('KeyRevoked');
      const missing = await ops([
        'streams',
        'read',
        '--partner',
        hub.partnerId,
        '--env',
        'live',
        '--product',
        'sku-lido',
      ]);
      expect(missing.code).to.equal(1);
      expect(missing.stderr).to.contain('HTTP 404');
      const both = await ops([
        'streams',
        'read',
        '--partner',
        hub.partnerId,
        '--env',
        'test',
        '--store',
        'x',
        '--product',
        'y',
      ]);
      expect(both.code).to.equal(2);
    });

    it('ops help lists every command of the table', async () => {
      const help = await ops(['help']);
      expect(help.code).to.equal(0);
      for (const c of OPS_COMMANDS) expect(help.stdout).to.contain(`ops ${c.name}`);
    });

    it("a usage error prints that command's usage in a few lines, and the nearest command", async () => {
      const cases: [string[], string[]][] = [
        [['history'], ['ops: --partner is required', 'usage: ops history --partner P']],
        [
          ['partners', 'list', '--bogus', '1'],
          ['unknown option(s): --bogus', 'usage: ops partners list [--limit N]'],
        ],
        [['projections', 'rebuild'], ['usage: ops projections rebuild NAME [--wait]']],
        [['partners', 'lst'], ['did you mean ops partners list?']],
        [['stores'], ['ops: stores needs one of: pending, approve, suspend', 'usage: ops stores pending']],
        [['parners', 'list'], ['did you mean partners?']],
        [
          ['nope'],
          ['commands: partners, keys, channels, stores, domains, clock, streams, history, projections, audit'],
        ],
        [[], ['commands: partners, keys']],
      ];
      for (const [args, expected] of cases) {
        const r = await opsTable(args);
        expect(r.code, args.join(' ')).to.equal(2);
        for (const text of expected) expect(r.stderr, args.join(' ')).to.contain(text);
        // The message, at most five lines of usage, and the pointer to `ops help`.
        expect(r.stderr.trimEnd().split('\n').length, r.stderr).to.be.at.most(7);
        expect(r.stderr).not.to.contain('ops audit verify');
      }
    });

    it('ops projections rebuild with a near miss names the projection meant and lists them all', async () => {
      const r = await opsTable(['projections', 'rebuild', 'storse']);
      expect(r.code, r.stderr).to.equal(2);
      expect(r.stderr).to.contain('no projection named storse');
      expect(r.stderr).to.contain('did you mean stores?');
      expect(r.stderr).to.match(/projections: .*\bstores\b.*\bpartners\b|projections: .*\bpartners\b.*\bstores\b/);
      const far = await opsTable(['projections', 'parked', '--projection', 'zzzzzzzz']);
      expect(far.code, far.stderr).to.equal(2);
      expect(far.stderr).not.to.contain('did you mean');
      expect(far.stderr).to.contain('projections: ');
    });

    it('prints tables for a person by default: aligned columns, one line per row', async () => {
      const r = await opsTable(['partners', 'list']);
      expect(r.code, r.stderr).to.equal(0);
      const [cursor, ...lines] = r.stdout.trimEnd().split('\n');
      expect(cursor).to.equal('next_cursor: ');
      expect(lines[0]).to.match(
        /^PARTNER +NAME +TYPE +KEYS ACTIVE +REVOKED +LIVE PEND\/ACT\/SUSP +TEST PEND\/ACT\/SUSP +CREATED$/,
      );
      const rows = lines.filter((l) => l.startsWith('pt_'));
      expect(rows).to.have.length(2);
      const hubRow = rows.find((l) => l.startsWith(hub.partnerId))!;
      const column = (header: string) => lines[0].indexOf(header);
      expect(hubRow.slice(column('NAME')).startsWith('Hub Listado')).to.equal(true);
      expect(hubRow.slice(column('TEST PEND/ACT/SUSP')).startsWith('2/1/0')).to.equal(true);
      expect(hubRow.slice(column('KEYS ACTIVE')).startsWith('2 ')).to.equal(true);
      const domains = await opsTable(['domains', 'pending', '--partner', shop.partnerId, '--env', 'live']);
      expect(domains.code, domains.stderr).to.equal(0);
      expect(domains.stdout).to.match(/^next_cursor: \n/);
      expect(domains.stdout.trimEnd().split('\n').slice(-1)[0]).to.match(
        new RegExp(`^${shop.partnerId} +Loja Sozinha +live +unica +active +new\\.test$`),
      );
    });

    it("ops keys issue gives the guide's four scopes by default, promotions only when asked", async () => {
      const plain = await ops(['keys', 'issue', '--partner', shop.partnerId, '--env', 'test']);
      expect(plain.code, plain.stderr).to.equal(0);
      expect(plain.json.scopes).to.deep.equal(['catalog', 'clicks', 'conversions', 'reports']);
      const me = await client(t.api, plain.json.api_key).get('/me');
      expect(me.body.scopes).to.deep.equal(['catalog', 'clicks', 'conversions', 'reports']);
      const asked = await ops([
        'keys',
        'issue',
        '--partner',
        shop.partnerId,
        '--env',
        'test',
        '--scopes',
        'catalog,promotions',
      ]);
      expect(asked.code, asked.stderr).to.equal(0);
      expect(asked.json.scopes).to.deep.equal(['catalog', 'promotions']);
    });

    it('records who acted: a named token is its operator, the shared token is admin', async () => {
      const p = await t.partner({ type: 'hub', name: 'Hub Autoria', env: 'live' });
      expect((await p.api.put('/stores/quem', storeBody({ domains: ['quem.test'] }))).status).to.equal(200);
      const where = ['--partner', p.partnerId, '--env', 'live', '--store', 'quem'];
      const approved = await runOps(adminUrl, ALICE, ['stores', 'approve', ...where]);
      expect(approved.code, approved.stderr).to.equal(0);
      const suspended = await runOps(adminUrl, BOB, ['stores', 'suspend', ...where]);
      expect(suspended.code, suspended.stderr).to.equal(0);
      expect((await ops(['stores', 'reinstate', ...where])).code).to.equal(0);
      const read = await ops(['streams', 'read', ...where]);
      expect(
        read.json.events.map((e: { type: string; metadata: { actor: string } }) => [e.type, e.metadata.actor]),
      ).to.deep.equal([
        ['StoreRegistered', p.keyId],
        ['StoreApproved', 'admin:alice'],
        ['StoreSuspended', 'admin:bob'],
        ['StoreReinstated', 'admin'],
      ]);
      // The person's table of the stream shows the actor column too.
      const table = await opsTable(['streams', 'read', ...where]);
      expect(table.stdout).to.match(/\bACTOR\b/);
      expect(table.stdout).to.match(/StoreApproved +\S+ +admin:alice /);
      // A named token opens nothing more than the shared one, and a wrong one nothing at all.
      const wrong = await runOps(adminUrl, `${ALICE}x`, ['clock', 'get']);
      expect(wrong.code).to.equal(1);
      expect(wrong.stderr).to.contain('HTTP 401');
    });
  });
});
