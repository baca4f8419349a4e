import { expect } from 'chai';
import { PROJECTORS } from '../../infra/wiring/projectors.js';
import { forBulkLoad } from '../../projections/parking.js';
import type { CollectionSpec } from '../../shared-schema/ports/read-store.js';

describe('a collection as a bulk load declares it', () => {
  const spec: CollectionSpec = {
    name: 'things',
    indexes: [
      ['partner_id', 'store_id', 'sku'],
      ['base_state', 'cover_checked_at'],
      ['sku', 'env'],
    ],
    filtered: ['last_write_at', 'sku'],
    projected: ['csv'],
    text: ['title'],
  };

  it('keeps only the indexes its projector reads through, and the fields of the others beside the document', () => {
    expect(forBulkLoad({ ...spec, applyIndexes: [['partner_id', 'store_id', 'sku']] })).to.deep.equal({
      name: 'things',
      indexes: [['partner_id', 'store_id', 'sku']],
      filtered: ['last_write_at', 'sku', 'base_state', 'cover_checked_at', 'env'],
      projected: ['csv'],
    });
  });

  it('keeps no index when its projector reads by `_id` only', () => {
    const loaded = forBulkLoad({ ...spec, applyIndexes: [] });
    expect(loaded.indexes).to.deep.equal([]);
    expect(loaded.filtered).to.have.members([
      'last_write_at',
      'sku',
      'partner_id',
      'store_id',
      'base_state',
      'cover_checked_at',
      'env',
    ]);
  });

  it('keeps every index when the spec does not say which its projector reads through; never a text index', () => {
    const loaded = forBulkLoad(spec);
    expect(loaded.indexes).to.deep.equal(spec.indexes);
    expect(loaded.filtered).to.deep.equal(spec.filtered);
    expect(loaded).not.to.have.property('text');
  });

  it('names in each read model only indexes the model declares (a misspelt one would be left out of the load)', () => {
    for (const projector of PROJECTORS)
      for (const c of projector.collections) {
        const declared = c.indexes.map((fields) => fields.join(','));
        for (const fields of c.applyIndexes ?? [])
          expect(declared, `${projector.name}: ${c.name}`).to.include(fields.join(','));
      }
    // Not vacuous: the products, feed and counts models name theirs.
    const named = PROJECTORS.flatMap((p) => p.collections).filter((c) => c.applyIndexes !== undefined);
    expect(named.map((c) => c.name)).to.include.members(['products', 'feed_offers', 'product_counts', 'offers']);
  });
});
