/**
 * Searches in flight (SEARCHES_IN_FLIGHT): with as many searches running as the bound, one more, from an address of
 * its own well under its brake, is answered at once with 429 and `Retry-After: 1` — a Problem on `/api/search`, a
 * page for people on `/busca` — and the searches held are answered 200 once they finish. The searches are held in
 * flight by a gate the test opens (the service's search wrapped through `startService`'s test seam), so nothing
 * depends on the machine's speed. One process only: the seam does not reach the topology's processes (so this file
 * is not in tests/e2e/, whose files e2e-in-topology.e2e.spec.ts also runs in the topology).
 */
import { expect } from 'chai';
import { startTestService, type TestService } from '../support/service.js';
import type { ProductSearch } from '../../shared-schema/shopper/search-policy.js';
import { getFrom, offer, rootOf, settle, shopperWorld } from '../e2e/shopper-support.js';
import { until } from '../support/deadline.js';

describe('shopper search: searches in flight are bounded (SEARCHES_IN_FLIGHT)', function () {
  let t: TestService;
  let open: () => void = () => undefined;
  let gate: Promise<void> = Promise.resolve();
  let entered = 0;
  const T0 = Date.parse('2026-03-01T12:00:00.000Z');
  const hold: (search: ProductSearch) => ProductSearch =
    (search) =>
    async (...asked) => {
      entered++;
      await gate;
      return search(...asked);
    };

  before(async function () {
    if (process.env.TOPOLOGY === 'multi') this.skip();
    t = await startTestService({ SEARCHES_IN_FLIGHT: '2' }, undefined, { wrapSearch: hold });
    const { hub } = await shopperWorld(t, T0);
    await offer(t, hub, 'Loja-A', 'CH-1', { title: 'Chaleira Inox', price_cents: 9900 });
    await settle(t);
  });
  after(async () => t?.close());

  it('answers one search more than the bound 429 with Retry-After at once, and the held ones 200 when they finish', async () => {
    const url = (path: string) => `${rootOf(t)}${path}?q=chaleira`;
    gate = new Promise((resolve) => (open = resolve));
    entered = 0;
    const held = [getFrom(url('/api/search'), '127.0.0.21'), getFrom(url('/busca'), '127.0.0.22')];
    // Both are in the search (the bound's two places taken) before the next one is sent.
    await until(() => entered >= 2, 20_000, 'two searches reaching the search', 10);
    const busy = await getFrom(url('/api/search'), '127.0.0.23');
    expect(busy.status).to.equal(429);
    expect(busy.headers.get('retry-after')).to.equal('1');
    expect(busy.headers.get('content-type')).to.match(/^application\/problem\+json/);
    const problem = JSON.parse(busy.text) as { status: number; detail: string };
    expect(problem.status).to.equal(429);
    expect(problem.detail).to.match(/searches/);
    const page = await getFrom(url('/busca'), '127.0.0.24');
    expect(page.status).to.equal(429);
    expect(page.headers.get('retry-after')).to.equal('1');
    expect(page.headers.get('content-type')).to.match(/^text\/html/);
    expect(page.text).to.contain('Muitas buscas agora');
    expect(entered, 'a refused search never reaches the search').to.equal(2);

    open();
    const answers = await Promise.all(held);
    expect(answers.map((a) => a.status)).to.deep.equal([200, 200]);
    expect((JSON.parse(answers[0].text) as { results: { title: string }[] }).results[0].title).to.equal(
      'Chaleira Inox',
    );
    expect(answers[1].text).to.contain('Chaleira Inox');
    // The places are free again: the address that was refused is answered.
    const again = await getFrom(url('/api/search'), '127.0.0.23');
    expect(again.status).to.equal(200);
  });
});
