import { expect } from 'chai';
import { checkOwed, coverFold, productStreamParts, type CoverSubject } from '../../command-api/reactors/cover-work.js';
import type { ProductEvent } from '../../shared-schema/events/product.js';

const A = 'https://cdn.shop.test/a.jpg';
const B = 'https://cdn.shop.test/b.jpg';
const T0 = '2026-01-02T00:00:00.000Z';
const at = (ms: number) => new Date(Date.parse(T0) + ms);
const HOUR = 3_600_000;

/** Folds product events (revisions 0, 1, …) as the reactor reads the stream. */
function given(...events: { type: string; data: Record<string, unknown> }[]): CoverSubject {
  return events.reduce<CoverSubject>(
    (s, e, revision) => coverFold.evolve(s, { ...(e as ProductEvent), revision, metadata: { recorded_at: T0 } }),
    coverFold.initialState(),
  );
}
const sent = (url: string) => ({
  type: 'ProductUpserted',
  data: { sku: 'sku', product: { store_id: 's', image_urls: [url] }, received_at: T0 },
});
const patched = () => ({
  type: 'ProductPatched',
  data: { sku: 'sku', patch: { price_cents: 1, updated_at: T0 }, received_at: T0 },
});
const checked = (url: string, ok: boolean, checkedAt = T0) => ({
  type: 'CoverChecked',
  data: { sku: 'sku', url, ok, reasons: [], checked_at: checkedAt },
});
const removed = () => ({ type: 'ProductRemoved', data: { sku: 'sku', store_id: 's', removed_at: T0 } });

describe('checkOwed: what the log says the cover check still owes', () => {
  it('owes a check for a send with a cover address never checked', () => {
    expect(checkOwed(given(sent(A)), { kind: 'sent', revision: 0 }, at(0))).to.equal(true);
    expect(checkOwed(given(sent(A), checked(A, true), sent(B)), { kind: 'sent', revision: 2 }, at(0))).to.equal(true);
  });

  it('owes nothing for a send already checked after it (a replay after a restart), accepted or rejected', () => {
    expect(checkOwed(given(sent(A), checked(A, true)), { kind: 'sent', revision: 0 }, at(0))).to.equal(false);
    expect(checkOwed(given(sent(A), checked(A, false)), { kind: 'sent', revision: 0 }, at(0))).to.equal(false);
  });

  it('owes a check when a rejected cover is sent again at the same address, not an accepted one', () => {
    expect(checkOwed(given(sent(A), checked(A, false), sent(A)), { kind: 'sent', revision: 2 }, at(0))).to.equal(true);
    expect(checkOwed(given(sent(A), checked(A, true), sent(A)), { kind: 'sent', revision: 2 }, at(0))).to.equal(false);
  });

  it('leaves a send to the later send of the same product, and owes nothing once removed', () => {
    expect(checkOwed(given(sent(A), sent(B)), { kind: 'sent', revision: 0 }, at(0))).to.equal(false);
    expect(checkOwed(given(sent(A), removed()), { kind: 'sent', revision: 0 }, at(0))).to.equal(false);
    expect(
      checkOwed(given(sent(A), patched()), { kind: 'sent', revision: 0 }, at(0)),
      'a PATCH is not a send',
    ).to.equal(true);
  });

  it('is due again after 1 hour when rejected and after 7 days when accepted, by the clock given', () => {
    const rejected = given(sent(A), checked(A, false));
    expect(checkOwed(rejected, { kind: 'due' }, at(HOUR - 1))).to.equal(false);
    expect(checkOwed(rejected, { kind: 'due' }, at(HOUR))).to.equal(true);
    const accepted = given(sent(A), checked(A, true));
    expect(checkOwed(accepted, { kind: 'due' }, at(7 * 24 * HOUR - 1))).to.equal(false);
    expect(checkOwed(accepted, { kind: 'due' }, at(7 * 24 * HOUR))).to.equal(true);
    expect(
      checkOwed(given(sent(A), checked(A, false), sent(B)), { kind: 'due' }, at(2 * HOUR)),
      'a result of another address',
    ).to.equal(false);
  });

  it('owes an "unchecked" check only while the current address has no result', () => {
    expect(checkOwed(given(sent(A)), { kind: 'unchecked' }, at(0))).to.equal(true);
    expect(checkOwed(given(sent(A), checked(A, false)), { kind: 'unchecked' }, at(0))).to.equal(false);
    expect(checkOwed(given(sent(A), checked(A, true), sent(B)), { kind: 'unchecked' }, at(0))).to.equal(true);
  });

  it('reads tenant and sku from the product stream name, colons in the sku included', () => {
    expect(productStreamParts('product-test:pt_X:a:b')).to.deep.equal({
      tenant: { env: 'test', partnerId: 'pt_X' },
      sku: 'a:b',
    });
  });
});
