import { expect } from 'chai';
import type { HistoryEntry } from '../../infra/ops/history.js';
import { productBody, startTestService, storeBody, type TestService } from '../support/service.js';
import { until } from '../support/deadline.js';

describe('operation history of a real batch', function () {
  let t: TestService;
  before(async () => {
    t = await startTestService();
    t.clock.set(new Date('2026-01-02T00:00:00Z'));
  });
  after(async () => t.close());

  it('writes two entries: the batch received (202) and the batch processed (done), both naming the job', async () => {
    const hub = await t.partner({ type: 'hub' });
    expect((await hub.api.put('/stores/loja', storeBody())).status).to.equal(200);
    const posted = await hub.api.post('/products/batch', {
      items: [
        { op: 'upsert', sku: 'a', product: productBody('loja') },
        { op: 'delete', sku: 'b' },
      ],
    });
    expect(posted.status, JSON.stringify(posted.body)).to.equal(202);
    const jobId = posted.body.job_id as string;
    let entries: HistoryEntry[] = [];
    await until(
      async () => {
        const r = await t.admin.get(`/partners/${hub.partnerId}/history?limit=100`);
        entries = (r.body.entries as HistoryEntry[]).filter((e) => JSON.stringify(e).includes(jobId));
        return entries.length >= 2;
      },
      10_000,
      'both batch entries',
    );
    const kinds = entries.map((e) => (e as unknown as { kind: string }).kind).sort();
    expect(kinds).to.deep.equal(['batch_processed', 'request']);
    const processed = entries.find((e) => (e as unknown as { kind: string }).kind === 'batch_processed') as unknown as {
      outcome: string;
    };
    expect(processed.outcome).to.equal('done');
  });
});
