import { expect } from 'chai';
import { judgeCover } from '../../shared-schema/domain/product-rules.js';

describe('judgeCover (the cover rules, without the network)', () => {
  it('passes a JPEG, PNG or WebP whose shorter side is 500 px or more', () => {
    for (const format of ['jpeg', 'png', 'webp']) expect(judgeCover(format, 500, 1200), format).to.equal(null);
  });

  it('refuses any other format, or none, as image_type', () => {
    expect(judgeCover('gif', 600, 600)?.code).to.equal('image_type');
    expect(judgeCover(null, 0, 0)?.code).to.equal('image_type');
  });

  it('refuses a shorter side under 500 px as image_too_small, naming the size', () => {
    const refusal = judgeCover('png', 800, 499);
    expect(refusal?.code).to.equal('image_too_small');
    expect(refusal?.message).to.match(/800×499/);
  });
});
