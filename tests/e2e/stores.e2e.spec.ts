import { expect } from 'chai';
import {
  nextCnpj,
  productBody,
  startTestService,
  storeBody,
  type Partner,
  type TestService,
} from '../support/service.js';
import { streams } from '../../shared-schema/domain/streams.js';
import { cnpjFor, expectInvalid, expectProblem, rebuildProjection } from '../support/e2e.js';
import { registerStore } from './commerce-support.js';
import { getFrom, offer, rootOf, settle } from './shopper-support.js';

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
  // A public suffix of the Public Suffix List, ICANN or private section, is no store's domain.
  ['domain com.br (ICANN suffix)', { domains: ['shop.test', 'com.br'] }, ['domains[1]:public_suffix']],
  ['domain github.io (private suffix)', { domains: ['github.io'] }, ['domains[0]:public_suffix']],
  ['image host blogspot.com (private suffix)', { image_hosts: ['blogspot.com'] }, ['image_hosts[0]:public_suffix']],
  ['domain foo.ck (under the wildcard rule *.ck)', { domains: ['foo.ck'] }, ['domains[0]:public_suffix']],
  [
    'public suffixes listed with every other invalid field',
    {
      name: 'X',
      domains: ['loja.com.br', 'com.br', 'github.io', 'Com.br'],
      image_hosts: ['cdn.shop.test', 'blogspot.com'],
    },
    [
      'name:min_length',
      'domains[1]:public_suffix',
      'domains[2]:public_suffix',
      'domains[3]:pattern',
      'image_hosts[1]:public_suffix',
    ],
  ],
  [
    'names under a public suffix, and under a TLD the list does not know',
    {
      domains: ['loja.com.br', 'loja.github.io', 'www.ck', 'shop.test', 'shop.localhost'],
      image_hosts: ['loja.blogspot.com', 'cdn.shop.test', 'img.shop.internal'],
    },
    [],
  ],
  // Text a shopper sees: no control character, no bidirectional override or isolate.
  ['name with NUL', { name: 'Loja\u0000Exemplo' }, ['name:control_character']],
  ['name with a tab', { name: 'Loja\tExemplo' }, ['name:control_character']],
  ['name with a newline', { name: 'Loja\nExemplo' }, ['name:control_character']],
  ['name with DEL', { name: 'Loja\u007f' }, ['name:control_character']],
  ['name with a C1 control (U+0085)', { name: 'Loja\u0085' }, ['name:control_character']],
  ['name with a right-to-left override', { name: 'Loja \u202eanozamA' }, ['name:control_character']],
  ['name with a left-to-right embedding', { name: 'Loja \u202a' }, ['name:control_character']],
  ['name with a first-strong isolate', { name: 'Loja \u2068x\u2069' }, ['name:control_character']],
  ['name with a zero-width joiner (emoji)', { name: 'Loja \u{1F469}\u200d\u{1F4BB}' }, []],
  ['name with a left-to-right mark', { name: 'Loja \u200e' }, []],
  ['name with a no-break space and accents', { name: 'Lojão\u00a0São João' }, []],
  [
    'name with a control character and of 81',
    { name: `${s(80)}\u0000` },
    ['name:control_character', 'name:max_length'],
  ],
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
    let r = await hub.api.put('/stores/keep', storeBody({ cnpj, domains: ['a.test', 'c.test'] }));
    expect(r.status).to.equal(200);
    expect(r.body).to.include({ status: 'active' });
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

  it('keeps the CNPJ of a store: another one answers 422 cnpj immutable and writes nothing', async () => {
    const digits = nextCnpj();
    const cnpj = `${digits.slice(0, 2)}.${digits.slice(2, 5)}.${digits.slice(5, 8)}/${digits.slice(8, 12)}-${digits.slice(12)}`;
    const first = await hub.api.put('/stores/fixed', storeBody({ cnpj }));
    expect(first.status, JSON.stringify(first.body)).to.equal(200);
    expect(first.body.cnpj).to.equal(digits);
    const storeStream = streams.store({ partnerId: hub.partnerId, env: 'live' }, 'fixed');
    const eventsOf = async (stream: string) => {
      const r = await t.admin.get(`/streams/${encodeURIComponent(stream)}`);
      return r.status === 404 ? [] : (r.body.events as unknown[]);
    };

    const other = nextCnpj();
    expectInvalid(await hub.api.put('/stores/fixed', storeBody({ cnpj: other, name: 'Outra' })), ['cnpj:immutable']);
    // Another store's CNPJ is the same refusal: the store's own CNPJ is what cannot change.
    const taken = (await hub.api.put('/stores/holder', storeBody())).body.cnpj as string;
    expectInvalid(await hub.api.put('/stores/fixed', storeBody({ cnpj: taken })), ['cnpj:immutable']);
    expect(await eventsOf(storeStream)).to.have.length(1);
    expect(await eventsOf(streams.cnpj('live', other)), 'the refused CNPJ is not reserved').to.deep.equal([]);
    expect((await hub.api.put('/stores/mover', storeBody({ cnpj: other }))).status, 'and stays free').to.equal(200);
    expect((await hub.api.get('/stores/fixed')).body).to.include({ cnpj: digits, name: 'Loja Exemplo' });

    // The same CNPJ written otherwise (without punctuation; in lower case) is the same company.
    const same = await hub.api.put('/stores/fixed', storeBody({ cnpj: digits, returns_days: 7 }));
    expect(same.status, JSON.stringify(same.body)).to.equal(200);
    expect(same.body).to.include({ cnpj: digits, returns_days: 7 });
    const alnum = cnpjFor('ZX98CV76BN54');
    expect((await hub.api.put('/stores/alnum', storeBody({ cnpj: alnum }))).status).to.equal(200);
    const lower = await hub.api.put('/stores/alnum', storeBody({ cnpj: alnum.toLowerCase(), returns_days: 3 }));
    expect(lower.status, JSON.stringify(lower.body)).to.equal(200);
    expect(lower.body.cnpj).to.equal(alnum);
  });

  it('a new name sends an active store back to review: its offers leave search until the operator approves again', async () => {
    const cnpj = nextCnpj();
    const body = storeBody({ cnpj, name: 'Loja Original' });
    await registerStore(hub, 'renamed', body);
    expect((await t.approveStore(hub, 'renamed')).status).to.equal(200);
    await offer(t, hub, 'renamed', 'rn-1', { title: 'Garrafa termica renomeavel' });
    await settle(t);
    const found = async () => {
      const r = await getFrom(`${rootOf(t)}/api/search?q=renomeavel`);
      expect(r.status, r.text).to.equal(200);
      const page = JSON.parse(r.text) as { results: { offers: { sku: string; store: { name: string } }[] }[] };
      return page.results.flatMap((p) => p.offers).map((o) => `${o.sku}@${o.store.name}`);
    };
    const product = async () => {
      const r = await hub.api.get('/products/rn-1');
      return { state: r.body.state as string, reasons: (r.body.reasons as { code: string }[]).map((x) => x.code) };
    };
    expect(await found()).to.deep.equal(['rn-1@Loja Original']);
    expect(await product()).to.deep.equal({ state: 'accepted', reasons: [] });

    // Other fields keep the status.
    let r = await hub.api.put('/stores/renamed', { ...body, returns_days: 7, website_url: 'https://shop.test/loja' });
    expect(r.body).to.include({ status: 'active', returns_days: 7 });

    // A new name (compared exactly: a change of case is a new name) waits for review.
    r = await hub.api.put('/stores/renamed', { ...body, name: 'loja original' });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    expect(r.body).to.include({ status: 'pending_review', name: 'loja original' });
    expect(r.body.domains_approved).to.deep.equal(['shop.test']);
    const pendingRead = async () => {
      await settle(t);
      expect((await hub.api.get('/stores/renamed')).body.status).to.equal('pending_review');
      expect(await product()).to.deep.equal({ state: 'pending', reasons: ['store_not_active'] });
      expect(await found(), 'out of search').to.deep.equal([]);
    };
    await pendingRead();
    // A rename while pending stays pending; nothing brings it back but the operator.
    r = await hub.api.put('/stores/renamed', { ...body, name: 'Loja Nova' });
    expect(r.body.status).to.equal('pending_review');
    await pendingRead();

    // The read models rebuilt from the log say the same.
    for (const name of ['stores', 'products', 'offers']) await rebuildProjection(t, name);
    await pendingRead();

    expect((await t.approveStore(hub, 'renamed')).status).to.equal(200);
    await settle(t);
    expect(await product()).to.deep.equal({ state: 'accepted', reasons: [] });
    expect(await found()).to.deep.equal(['rn-1@Loja Nova']);

    // A suspended store stays suspended across a new name, and goes back to active only when reinstated.
    await t.admin.post(`/partners/${hub.partnerId}/live/stores/renamed/suspend`, {});
    r = await hub.api.put('/stores/renamed', { ...body, name: 'Loja Suspensa' });
    expect(r.body.status).to.equal('suspended');
  });
});
