import { expect } from 'chai';
import {
  nextCnpj,
  productBody,
  startTestService,
  storeBody,
  type Partner,
  type TestService,
} from '../support/service.js';
import { streams } from '../../shared-schema/streams.js';
import { cnpjFor, expectInvalid, expectProblem } from '../support/e2e.js';

const s = (n: number, c = 'a') => c.repeat(n);
const url = (n: number) => `https://shop.test/${s(n - 'https://shop.test/'.length)}`;
const domains = (n: number) => Array.from({ length: n }, (_, i) => `d${i}.shop.test`);

/** [what, overrides of a valid Store input, expected `field:code` list ([] = accepted)]. */
const STORE_CASES: [string, Record<string, unknown>, string[]][] = [
  ['name of 1', { name: 'X' }, ['name:min_length']],
  ['name of 2', { name: 'XY' }, []],
  ['name of 80', { name: s(80) }, []],
  ['name of 81', { name: s(81) }, ['name:max_length']],
  ['cnpj of 13 characters', { cnpj: '1122233300018' }, ['cnpj:pattern']],
  ['cnpj of 19 characters', { cnpj: '11.222.333/0001-811' }, ['cnpj:pattern']],
  ['cnpj with a space', { cnpj: '11 222 333 0001 81' }, ['cnpj:pattern']],
  ['cnpj with wrong check digits', { cnpj: '11.222.333/0001-82' }, ['cnpj:invalid']],
  ['cnpj with a letter in the check digits', { cnpj: '11.222.333/0001-8A' }, ['cnpj:invalid']],
  ['cnpj of 14 zeros (its arithmetic passes)', { cnpj: '00000000000000' }, ['cnpj:invalid']],
  ['cnpj of 14 zeros, punctuated', { cnpj: '00.000.000/0000-00' }, ['cnpj:invalid']],
  ['cnpj of 14 ones', { cnpj: '11111111111111' }, ['cnpj:invalid']],
  ['logo_url over http', { logo_url: 'http://shop.test/logo.png' }, ['logo_url:https']],
  ['logo_url of 2049', { logo_url: url(2049) }, ['logo_url:max_length']],
  ['website_url of 2048', { website_url: url(2048) }, []],
  ['website_url over http', { website_url: 'http://shop.test' }, ['website_url:https']],
  ['domains empty', { domains: [] }, ['domains:min_items']],
  ['domains of 5', { domains: domains(5) }, []],
  ['domains of 6', { domains: domains(6) }, ['domains:max_items']],
  ['domain in upper case', { domains: ['Shop.test'] }, ['domains[0]:pattern']],
  ['domain without a dot', { domains: ['localhost'] }, ['domains[0]:pattern']],
  ['domain with a scheme', { domains: ['shop.test', 'https://shop.test'] }, ['domains[1]:pattern']],
  ['image_hosts empty', { image_hosts: [] }, []],
  ['image_hosts of 6', { image_hosts: domains(6) }, ['image_hosts:max_items']],
  ['image host with a path', { image_hosts: ['cdn.shop.test/img'] }, ['image_hosts[0]:pattern']],
  ['returns_days 0 and 365', { returns_days: 365 }, []],
  ['returns_days 366', { returns_days: 366 }, ['returns_days:maximum']],
  ['returns_days -1', { returns_days: -1 }, ['returns_days:minimum']],
  ['handling_days 60', { handling_days: 60 }, []],
  ['handling_days 61', { handling_days: 61 }, ['handling_days:maximum']],
  ['handling_days fraction', { handling_days: 1.5 }, ['handling_days:integer']],
  ['default_commission fixed', { default_commission: { type: 'fixed', amount_cents: 0 } }, []],
  ['default_commission null', { default_commission: null }, []],
  [
    'default_commission rate 100.5',
    { default_commission: { type: 'percentage', rate: 100.5 } },
    ['default_commission.rate:maximum'],
  ],
  ['unknown field', { status: 'active' }, ['status:unknown_field']],
];

describe('stores (HTTP)', function () {
  let t: TestService;
  let hub: Partner;

  before(async () => {
    t = await startTestService();
    t.clock.set(new Date('2026-01-02T00:00:00Z'));
    hub = await t.partner();
  });
  after(async () => t.close());

  STORE_CASES.forEach(([what, overrides, expected], i) => {
    it(`PUT: ${what} → ${expected.length ? expected.join(', ') : '200'}`, async () => {
      const id = `st-${i}`;
      const r = await hub.api.put(`/stores/${id}`, storeBody(overrides));
      if (expected.length === 0) expect(r.status, JSON.stringify(r.body)).to.equal(200);
      else {
        expectInvalid(r, expected);
        expect((await hub.api.get(`/stores/${id}`)).status).to.equal(404);
      }
    });
  });

  it('PUT: lists every missing required field at once', async () => {
    expectInvalid(await hub.api.put('/stores/empty', {}), [
      'cnpj:required',
      'domains:required',
      'name:required',
      'website_url:required',
    ]);
  });

  it('takes the alphanumeric CNPJ 12.ABC.345/01DE-35 and answers 12ABC34501DE35; lower case is the same company', async () => {
    const r = await hub.api.put('/stores/alfa', storeBody({ cnpj: '12.ABC.345/01DE-35' }));
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    expect(r.body.cnpj).to.equal('12ABC34501DE35');
    expect((await hub.api.get('/stores/alfa')).body.cnpj).to.equal('12ABC34501DE35');
    const again = await hub.api.put('/stores/alfa-2', storeBody({ cnpj: '12abc34501de35' }));
    expectInvalid(again, ['cnpj:already_registered']);
    expect((await hub.api.put('/stores/zeros', storeBody({ cnpj: '00.000.000/0001-91' }))).body.cnpj).to.equal(
      '00000000000191',
    );
    expect((await hub.api.put('/stores/alfa-3', storeBody({ cnpj: cnpjFor('AB12CD34EF56') }))).status).to.equal(200);
  });

  it('answers a re-send of the same store with 200 and the same answer, writing nothing new', async () => {
    const body = storeBody({ logo_url: 'https://shop.test/logo.png', returns_days: 7, handling_days: 2 });
    const first = await hub.api.put('/stores/same', body);
    expect(first.status).to.equal(200);
    expect(first.body).to.deep.equal({
      store_id: 'same',
      ...body,
      cnpj: body.cnpj,
      status: 'pending_review',
      domains_approved: [],
    });
    const again = await hub.api.put('/stores/same', body);
    expect(again.status).to.equal(200);
    expect(again.body).to.deep.equal(first.body);
    const stream = await t.admin.get(
      `/streams/${encodeURIComponent(streams.store({ partnerId: hub.partnerId, env: 'live' }, 'same'))}`,
    );
    expect(stream.body.events).to.have.length(1);
  });

  it('keeps the status across a PUT; added domains start unapproved; dropped domains leave domains_approved', async () => {
    const cnpj = nextCnpj();
    await hub.api.put('/stores/keep', storeBody({ cnpj, domains: ['a.test', 'b.test'] }));
    expect((await t.approveStore(hub, 'keep')).status).to.equal(200);
    let r = await hub.api.put('/stores/keep', storeBody({ cnpj, domains: ['a.test', 'c.test'], name: 'Renomeada' }));
    expect(r.status).to.equal(200);
    expect(r.body).to.include({ status: 'active', name: 'Renomeada' });
    expect(r.body.domains_approved).to.deep.equal(['a.test']);
    expect((await hub.api.get('/stores/keep')).body).to.deep.equal(r.body);

    // Approve the new domain alone.
    const approved = await t.admin.post(`/partners/${hub.partnerId}/live/stores/keep/domains/c.test/approve`, {});
    expect(approved.status).to.equal(200);
    r = await hub.api.get('/stores/keep');
    expect([...r.body.domains_approved].sort()).to.deep.equal(['a.test', 'c.test']);
    // A domain the store does not declare cannot be approved.
    expect(
      (await t.admin.post(`/partners/${hub.partnerId}/live/stores/keep/domains/b.test/approve`, {})).status,
    ).to.equal(404);

    // Suspended stays suspended across a PUT.
    await t.admin.post(`/partners/${hub.partnerId}/live/stores/keep/suspend`, {});
    r = await hub.api.put('/stores/keep', storeBody({ cnpj, domains: ['a.test', 'c.test'], name: 'Outra' }));
    expect(r.body.status).to.equal('suspended');
    expect((await hub.api.get('/stores/keep')).body.status).to.equal('suspended');

    // A re-added domain starts unapproved again.
    await hub.api.put('/stores/keep', storeBody({ cnpj, domains: ['c.test'] }));
    r = await hub.api.put('/stores/keep', storeBody({ cnpj, domains: ['c.test', 'a.test'] }));
    expect(r.body.domains_approved).to.deep.equal(['c.test']);
  });

  it('a product on a domain that is approved alone waits only for the store; on an unapproved one, for the domain', async () => {
    const cnpj = nextCnpj();
    await hub.api.put('/stores/dom', storeBody({ cnpj, domains: ['shop.test', 'other.test'] }));
    await t.admin.post(`/partners/${hub.partnerId}/live/stores/dom/domains/shop.test/approve`, {});
    const p = await hub.api.put('/products/dom-1', productBody('dom'));
    expect(p.body.reasons.map((r: { code: string }) => r.code)).to.deep.equal(['store_not_active']);
    const q = await hub.api.put('/products/dom-2', productBody('dom', { product_url: 'https://other.test/p' }));
    expect(q.body.reasons.map((r: { code: string }) => r.code).sort()).to.deep.equal([
      'domain_not_approved',
      'store_not_active',
    ]);
    // Dropping the approved domain sends its products back to pending with domain_not_approved.
    await t.approveStore(hub, 'dom');
    await hub.api.put('/stores/dom', storeBody({ cnpj, domains: ['other.test'] }));
    const after = await hub.api.get('/products/dom-1');
    expect(after.body.state).to.equal('pending');
    expect(after.body.reasons.map((r: { code: string }) => r.code)).to.deep.equal(['domain_not_approved']);
  });

  it('lists stores in store_id order with the full Store shape', async () => {
    const lister = await t.partner();
    for (const id of ['zeta', 'Alpha', 'beta', '0-first', 'Beta.2']) {
      expect((await lister.api.put(`/stores/${id}`, storeBody())).status).to.equal(200);
    }
    const r = await lister.api.get('/stores');
    expect(r.status).to.equal(200);
    expect(r.body.data.map((x: { store_id: string }) => x.store_id)).to.deep.equal([
      '0-first',
      'Alpha',
      'Beta.2',
      'beta',
      'zeta',
    ]);
    expect(r.body.next_cursor).to.equal(null);
    for (const store of r.body.data) {
      expect(store).to.include.keys('store_id', 'name', 'cnpj', 'website_url', 'domains', 'status', 'domains_approved');
      expect(store.domains_approved).to.deep.equal([]);
      expect(store.cnpj).to.match(/^[0-9A-Z]{14}$/);
    }
  });

  it('registers 20 stores of one partner sent at once (none fails on the store-index race)', async () => {
    const busy = await t.partner();
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => busy.api.put(`/stores/c-${String(i).padStart(2, '0')}`, storeBody())),
    );
    for (const a of answers) expect(a.status, JSON.stringify(a.body)).to.equal(200);
    expect((await busy.api.get('/stores')).body.data).to.have.length(20);
    // Racing ids that lower-case alike: exactly one wins.
    const clash = await Promise.all(
      ['Dup', 'dup', 'DUP', 'dUp'].map((id) => busy.api.put(`/stores/${id}`, storeBody())),
    );
    expect(clash.filter((a) => a.status === 200)).to.have.length(1);
    for (const a of clash.filter((x) => x.status !== 200)) expectInvalid(a, ['store_id:conflict']);
  });

  it('lets partners share a store_id (each store has an address of its own); one partner still may not', async () => {
    const a = await t.partner();
    const b = await t.partner();
    expect((await a.api.put('/stores/Mesma', storeBody())).status).to.equal(200);
    for (const id of ['Mesma', 'mesma', 'MESMA']) {
      const other = await t.partner();
      expect((await other.api.put(`/stores/${id}`, storeBody())).status, id).to.equal(200);
    }
    expect((await b.api.put('/stores/mesma', storeBody())).status).to.equal(200);
    expectInvalid(await b.api.put('/stores/MESMA', storeBody()), ['store_id:conflict']);
    expectInvalid(await a.api.put('/stores/mesma', storeBody()), ['store_id:conflict']);
  });

  it('keeps the conflict rule for stores indexed before the address held the partner', async () => {
    const old = await t.partner();
    const now = new Date().toISOString();
    // What the store index held when a store's address was its lower-cased store_id alone.
    await t.service.events.appendToStream(streams.storeIndex({ partnerId: old.partnerId, env: 'live' }), [
      {
        type: 'StoreIndexed',
        data: { store_id: 'Antiga', address: 'antiga' },
        metadata: { recorded_at: now, actor: 'test' },
      },
    ]);
    expectInvalid(await old.api.put('/stores/ANTIGA', storeBody()), ['store_id:conflict']);
    expect((await old.api.put('/stores/outra', storeBody())).status).to.equal(200);
  });

  it('answers 404 for a store that does not exist', async () => {
    expectProblem(await hub.api.get('/stores/nowhere'), 404);
  });

  it('changing the CNPJ of a store frees the old one for another store', async () => {
    const oldCnpj = nextCnpj();
    await hub.api.put('/stores/mover', storeBody({ cnpj: oldCnpj }));
    expectInvalid(await hub.api.put('/stores/taker', storeBody({ cnpj: oldCnpj })), ['cnpj:already_registered']);
    expect((await hub.api.put('/stores/mover', storeBody({ cnpj: nextCnpj() }))).status).to.equal(200);
    expect((await hub.api.put('/stores/taker', storeBody({ cnpj: oldCnpj }))).status).to.equal(200);
  });
});
