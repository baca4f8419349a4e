/**
 * A searchable offer is found however many older non-searchable offers match the same words (SHOPPER.md, "What is
 * searchable"): the text index answers matches in first-insertion order, so each case first writes more matching
 * offers that are not searchable than the search reads at once (250, for a bound of 200 candidates), each for one
 * reason of its own (a domain not approved, rule 3 by the clock to the millisecond, `available: false`, a suspended
 * store), and only then the offer that must be found. Each case has its own partner, stores and word.
 */
import { expect } from 'chai';
import { streams } from '../../shared-schema/domain/streams.js';
import { until } from '../support/deadline.js';
import { productBody, startTestService, storeBody, type Partner, type TestService } from '../support/service.js';
import { HOUR, registerStore } from './commerce-support.js';
import { getFrom, offer, rootOf, settle } from './shopper-support.js';

type PageJson = {
  results: { offers: { sku: string }[]; alternatives: { sku: string }[] }[];
  next_cursor: string | null;
};

/** More than the search reads from the text index at once. */
const CROWD = 250;
const COVER = 'https://cdn.shop.test/1.jpg';

describe('shopper search over HTTP: a searchable offer is found behind any number of older non-searchable matches', function () {
  this.timeout(60_000);
  let t: TestService;
  // The brake counts 120 searches a minute per address and the clock moves only when a test moves it.
  let nextAddress = 0;
  const from = (): string => `127.0.3.${(nextAddress++ % 250) + 1}`;
  const search = async (words: string, limit = 50): Promise<PageJson> => {
    const r = await getFrom(`${rootOf(t)}/api/search?q=${encodeURIComponent(words)}&limit=${limit}`, from());
    expect(r.status, r.text).to.equal(200);
    return JSON.parse(r.text) as PageJson;
  };
  /** The SKUs of the answer's products (each offer here is a product of its own: no gtin), in answer order. */
  const skus = async (words: string): Promise<string[]> =>
    (await search(words)).results.map((p) => (p.offers[0] ?? p.alternatives[0]).sku);
  const stateOf = async (p: Partner, sku: string): Promise<string> => {
    const r = await p.api.get(`/products/${sku}`);
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    return r.body.state as string;
  };
  const approvedStore = async (p: Partner, storeId: string): Promise<void> => {
    await registerStore(p, storeId, { name: storeId });
    expect((await t.approveStore(p, storeId, 'live')).status).to.equal(200);
  };

  /**
   * `CROWD` products `${prefix}-0…` sent now in one batch, `fields(i)` over a valid body, each given a passing cover
   * check (so that only the reason the case gives keeps it out of search), the projections settled.
   */
  const crowd = async (
    p: Partner,
    storeId: string,
    prefix: string,
    fields: (i: number) => Record<string, unknown>,
  ): Promise<void> => {
    const updated_at = t.clock.now().toISOString();
    const items = Array.from({ length: CROWD }, (_, i) => ({
      op: 'upsert',
      sku: `${prefix}-${i}`,
      product: productBody(storeId, { updated_at, image_urls: [COVER], ...fields(i) }),
    }));
    const posted = await p.api.post('/products/batch', { items });
    expect(posted.status, JSON.stringify(posted.body)).to.equal(202);
    let job: { state: string; totals: Record<string, number> } = posted.body;
    // Partner reads count against the brake of a clock standing still: a modest poll interval.
    await until(
      async () => {
        job = (await p.api.get(`/jobs/${posted.body.job_id as string}`)).body;
        return job.state === 'done' || job.state === 'failed';
      },
      30_000,
      `batch of ${prefix} done`,
      50,
    );
    expect(job.state).to.equal('done');
    expect(job.totals.received).to.equal(CROWD);
    expect(job.totals.rejected).to.equal(0);
    const now = t.clock.now().toISOString();
    for (let i = 0; i < CROWD; i++) {
      const sku = `${prefix}-${i}`;
      await t.service.events.appendToStream(streams.product({ partnerId: p.partnerId, env: 'live' }, sku), [
        {
          type: 'CoverChecked',
          data: { sku, url: COVER, ok: true, reasons: [], checked_at: now },
          metadata: { recorded_at: now, actor: 'test' },
        },
      ]);
    }
    await settle(t);
  };

  /** A hub whose store `name` is approved with shop.test, then also lists `domain`, which nobody approved. */
  const partnerWithUnapprovedDomain = async (name: string, domain: string) => {
    const p = await t.partner({ type: 'hub', name });
    const store = storeBody({ name });
    expect((await p.api.put(`/stores/${name}`, store)).status).to.equal(200);
    expect((await t.approveStore(p, name, 'live')).status).to.equal(200);
    const added = await p.api.put(`/stores/${name}`, { ...store, domains: ['shop.test', domain] });
    expect(added.status, JSON.stringify(added.body)).to.equal(200);
    return p;
  };

  before(async () => {
    t = await startTestService();
    t.clock.set(new Date('2026-09-01T08:00:00.000Z'));
  });
  after(async () => t.close());

  it('250 offers pending on a domain not approved, then one accepted offer: the search answers that one alone', async () => {
    const p = await partnerWithUnapprovedDomain('Horta', 'feira.test');
    await crowd(p, 'Horta', 'abx', (i) => ({
      title: `Abacaxi perola ${i}`,
      product_url: `https://feira.test/abacaxi/${i}`,
    }));
    expect(await stateOf(p, 'abx-0')).to.equal('pending');
    expect(await stateOf(p, `abx-${CROWD - 1}`)).to.equal('pending');
    expect(await skus('abacaxi'), 'none of the pending').to.deep.equal([]);

    await offer(t, p, 'Horta', 'abx-aceito', { title: 'Abacaxi perola doce', product_url: 'https://shop.test/abx' });
    await settle(t);
    expect(await stateOf(p, 'abx-aceito')).to.equal('accepted');
    expect(await skus('abacaxi')).to.deep.equal(['abx-aceito']);
    expect(await skus('abacaxi perola'), 'two words').to.deep.equal(['abx-aceito']);
  });

  it('rule 3 to the millisecond: 250 offers found exactly 48 h after their write and gone 1 ms later, then a new offer is answered alone', async () => {
    const p = await t.partner({ type: 'hub', name: 'Pomar' });
    await approvedStore(p, 'Pomar');
    const T = t.clock.now().getTime();
    await crowd(p, 'Pomar', 'car', (i) => ({
      title: `Carambola madura ${i}`,
      product_url: `https://shop.test/c/${i}`,
    }));

    t.clock.set(new Date(T + 48 * HOUR));
    const atBoundary = await search('carambola');
    expect(atBoundary.results, 'exactly 48 h after the write: still searchable').to.have.length(50);
    expect(atBoundary.next_cursor).to.not.equal(null);

    t.clock.set(new Date(T + 48 * HOUR + 1));
    expect(await stateOf(p, 'car-0')).to.equal('stale');
    expect(await skus('carambola'), '1 ms later: all stale').to.deep.equal([]);
    await offer(t, p, 'Pomar', 'car-nova', { title: 'Carambola madura nova', product_url: 'https://shop.test/c/n' });
    await settle(t);
    expect(await skus('carambola')).to.deep.equal(['car-nova']);
  });

  it('250 unavailable offers, then one available: the search answers the available one alone', async () => {
    const p = await t.partner({ type: 'hub', name: 'Quitanda' });
    await approvedStore(p, 'Quitanda');
    await crowd(p, 'Quitanda', 'pit', (i) => ({
      title: `Pitanga vermelha ${i}`,
      product_url: `https://shop.test/p/${i}`,
      available: false,
    }));
    expect(await skus('pitanga'), 'none of the unavailable').to.deep.equal([]);

    await offer(t, p, 'Quitanda', 'pit-disponivel', { title: 'Pitanga vermelha', product_url: 'https://shop.test/p' });
    await settle(t);
    expect(await skus('pitanga')).to.deep.equal(['pit-disponivel']);
  });

  it('250 offers of a store then suspended, then one accepted offer of another store: the search answers that one alone', async () => {
    const p = await t.partner({ type: 'hub', name: 'Feira' });
    await approvedStore(p, 'Feira-1');
    await approvedStore(p, 'Feira-2');
    await crowd(p, 'Feira-1', 'jab', (i) => ({
      title: `Jabuticaba sabara ${i}`,
      product_url: `https://shop.test/j/${i}`,
    }));
    const before = await search('jabuticaba');
    expect(before.results, 'searchable while the store is active').to.have.length(50);
    expect(before.next_cursor).to.not.equal(null);

    const suspended = await t.admin.post(`/partners/${p.partnerId}/live/stores/Feira-1/suspend`, {});
    expect(suspended.status, JSON.stringify(suspended.body)).to.equal(200);
    await settle(t);
    expect(await skus('jabuticaba'), 'the suspended store is out').to.deep.equal([]);

    await offer(t, p, 'Feira-2', 'jab-ativa', { title: 'Jabuticaba sabara', product_url: 'https://shop.test/j' });
    await settle(t);
    expect(await skus('jabuticaba')).to.deep.equal(['jab-ativa']);
  });

  it('behind 250 non-searchable title matches, a title match still ranks above a match in the brand or category only', async () => {
    const p = await partnerWithUnapprovedDomain('Sitio', 'roca.test');
    await crowd(p, 'Sitio', 'gra', (i) => ({
      title: `Graviola fresca ${i}`,
      product_url: `https://roca.test/g/${i}`,
    }));
    expect(await skus('graviola'), 'none of the pending').to.deep.equal([]);

    // Written first: in insertion order the brand and category matches come before the title match.
    await offer(t, p, 'Sitio', 'gra-marca', {
      title: 'Polpa de fruta',
      brand: 'Graviola Sul',
      product_url: 'https://shop.test/g/m',
    });
    await offer(t, p, 'Sitio', 'gra-categoria', {
      title: 'Suco integral',
      category: 'Graviola e outras',
      product_url: 'https://shop.test/g/c',
    });
    await offer(t, p, 'Sitio', 'gra-titulo', { title: 'Graviola inteira', product_url: 'https://shop.test/g/t' });
    await settle(t);
    const found = await skus('graviola');
    expect(found[0], 'the title match first').to.equal('gra-titulo');
    expect([...found].sort()).to.deep.equal(['gra-categoria', 'gra-marca', 'gra-titulo']);
  });
});
