import { expect } from 'chai';
import { startTestService, storeBody, type TestService } from '../support/service.js';

describe('rate brake limits from the configuration', () => {
  let t: TestService;
  before(async () => {
    t = await startTestService({ RATE_LIMIT_WRITES: '2', RATE_LIMIT_READS: '3' });
  });
  after(async () => t.close());

  it('refuses the write and the read above the configured limits with 429 and Retry-After', async () => {
    const p = await t.partner();
    expect((await p.api.put('/stores/a', storeBody())).status).to.equal(200);
    expect((await p.api.put('/stores/b', storeBody())).status).to.equal(200);
    const third = await p.api.put('/stores/c', storeBody());
    expect(third.status).to.equal(429);
    expect(third.body.detail).to.contain('at most 2 writes');
    expect(Number(third.headers.get('retry-after'))).to.be.at.least(1);
    for (let i = 0; i < 3; i++) expect((await p.api.get('/me')).status).to.equal(200);
    expect((await p.api.get('/me')).status).to.equal(429);
    t.clock.advance(60_000);
    expect((await p.api.put('/stores/c', storeBody())).status).to.equal(200);
  });
});
