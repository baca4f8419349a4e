import { expect } from 'chai';
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
});
