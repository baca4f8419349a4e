import { expect } from 'chai';
import path from 'node:path';
import Database from 'better-sqlite3';
import { productBody, startTestService, storeBody } from '../support/service.js';
import { compareWithReplay } from '../support/replay.js';

describe('replay check of the read models (tests/support/replay.ts)', function () {
  it('finds no difference on an untouched data dir, and names the document that was tampered with', async () => {
    const t = await startTestService();
    try {
      const p = await t.partner();
      await p.api.put('/stores/loja-r', storeBody());
      expect((await p.api.put('/products/sku-r', productBody('loja-r'))).status).to.equal(200);
      await t.approveStore(p, 'loja-r');
      expect(
        await t.service.runner.waitFor(await t.service.events.headPosition(), 30_000),
        'projections caught up',
      ).to.equal(true);
      const clean = await compareWithReplay(t.dataDir);
      expect(clean.differences).to.deep.equal([]);
      expect(clean.collections.products).to.equal(1);

      const id = `live:${p.partnerId}:sku-r`;
      const db = new Database(path.join(t.dataDir, 'read.db'));
      db.prepare(`UPDATE coll_products SET doc = json_set(doc, '$.base_state', 'rejected') WHERE _id = ?`).run(id);
      db.close();
      const tampered = await compareWithReplay(t.dataDir);
      expect(tampered.differences.map((d) => `${d.collection}/${d.id}`)).to.deep.equal([`products/${id}`]);
      expect(tampered.differences[0].live!.base_state).to.equal('rejected');
      expect(tampered.differences[0].replayed!.base_state).to.equal('pending');
    } finally {
      await t.close();
    }
  });
});
