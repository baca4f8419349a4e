import { expect } from 'chai';
import { withClickParam } from '../../command-api/redirector.js';
import { stringifyBigCents } from '../../shared-schema/http/big-json.js';
import { pageWindow, resolveWindow, encodeWindowCursor } from '../../shared-schema/http/window.js';
import { ProblemError } from '../../shared-schema/contract/problems.js';
import { CursorSecret } from '../../shared-schema/http/pagination.js';
import {
  combine,
  coveringRanges,
  figuresOf,
  periodOf,
  storedFields,
  zeroFigures,
  commercialTotals,
} from '../../shared-schema/read-models/report.js';
import type { Tenant } from '../../shared-schema/domain/streams.js';

const problemOf = (fn: () => unknown): ProblemError => {
  try {
    fn();
  } catch (err) {
    if (err instanceof ProblemError) return err;
    throw err;
  }
  throw new Error('expected a problem');
};

describe('redirector: svc_click on the product page', () => {
  it('appends svc_click to a page without a query', () => {
    expect(withClickParam('https://shop.test/p/1', 'ic_X')).to.equal('https://shop.test/p/1?svc_click=ic_X');
  });
  it('replaces every svc_click (plain or encoded name) and keeps the other parameters byte for byte', () => {
    expect(withClickParam('https://shop.test/p?a=1&svc_click=old&b=%20x+y&svc%5Fclick=old2&c', 'ic_N')).to.equal(
      'https://shop.test/p?a=1&b=%20x+y&c&svc_click=ic_N',
    );
  });
  it('keeps the fragment after the query and drops empty pairs', () => {
    expect(withClickParam('https://shop.test/p?&a=1&&#top?x=1', 'ic_N')).to.equal(
      'https://shop.test/p?a=1&svc_click=ic_N#top?x=1',
    );
  });
  it('does not mistake a parameter that only starts with svc_click', () => {
    expect(withClickParam('https://shop.test/p?svc_clicks=1', 'ic_N')).to.equal(
      'https://shop.test/p?svc_clicks=1&svc_click=ic_N',
    );
  });
});

describe('BigCents on the wire', () => {
  it('writes text figures of cents fields as bare integers and leaves everything else alone', () => {
    const text = stringifyBigCents({
      expected_commission_cents: '90071992547409910',
      known_expected_commission_cents: 5,
      items: [{ expected_commission_cents: '123456789012345678901234', sku: '123' }],
      order_id: '99999999999999999999',
      gross_cents: 'abc',
    });
    expect(text).to.equal(
      '{"expected_commission_cents":90071992547409910,"known_expected_commission_cents":5,' +
        '"items":[{"expected_commission_cents":123456789012345678901234,"sku":"123"}],' +
        '"order_id":"99999999999999999999","gross_cents":"abc"}',
    );
  });
  it('is plain JSON.stringify without such figures', () => {
    const v = { a: [1, 'x', null], expected_commission_cents: null };
    expect(stringifyBigCents(v)).to.equal(JSON.stringify(v));
  });
});

describe('query windows', () => {
  const now = new Date('2026-05-31T12:00:00.000Z');
  const tenant: Tenant = { partnerId: 'pt_A', env: 'test' };

  it('defaults to the 30 days up to now; only until → the 30 days before it; only since → up to now', () => {
    expect(resolveWindow({}, now)).to.deep.equal({
      since: '2026-05-01T12:00:00.000Z',
      until: '2026-05-31T12:00:00.000Z',
    });
    expect(resolveWindow({ until: '2026-05-10T00:00:00Z' }, now)).to.deep.equal({
      since: '2026-04-10T00:00:00.000Z',
      until: '2026-05-10T00:00:00.000Z',
    });
    expect(resolveWindow({ since: '2026-05-30T00:00:00-03:00' }, now)).to.deep.equal({
      since: '2026-05-30T03:00:00.000Z',
      until: '2026-05-31T12:00:00.000Z',
    });
  });
  it('accepts 31 days exactly, refuses one millisecond more and empty or reversed windows, on the bound the caller sent', () => {
    expect(resolveWindow({ since: '2026-04-30T12:00:00Z' }, now).since).to.equal('2026-04-30T12:00:00.000Z');
    for (const [q, field] of [
      [{ since: '2026-04-30T11:59:59.999Z' }, 'since'],
      [{ since: '2026-06-01T00:00:00Z' }, 'since'],
      [{ since: now.toISOString(), until: now.toISOString() }, 'until'],
      [{ until: '2026-01-01T00:00:00Z', since: '2026-03-01T00:00:00Z' }, 'until'],
    ] as const) {
      const p = problemOf(() => resolveWindow(q, now));
      expect(p.status).to.equal(422);
      expect(p.errors.map((e) => `${e.field}:${e.code}`)).to.deep.equal([`${field}:window`]);
    }
    // The message shows the bounds as understood, defaults named.
    expect(problemOf(() => resolveWindow({ since: '2026-06-01T00:00:00Z' }, now)).errors[0].message).to.equal(
      'since must be before until (since 2026-06-01T00:00:00.000Z, until 2026-05-31T12:00:00.000Z (default: now)).',
    );
  });
  it('binds a cursor to its window: omitted bounds come from it, repeated ones must match, others are refused', () => {
    const secret = new CursorSecret('unit-test-cursor-secret-0123456789abcdef');
    const scope = { tenant, list: 'clicks', filters: {} };
    const shape = ['string', 'string', 'string'] as const;
    const w = { since: '2026-05-01T00:00:00.000Z', until: '2026-05-02T00:00:00.000Z' };
    const cursor = encodeWindowCursor(secret, scope, w, ['2026-05-01T01:00:00.000Z', 's', 'id']);
    expect(pageWindow(secret, scope, { cursor }, now, shape)).to.deep.equal({
      window: w,
      after: ['2026-05-01T01:00:00.000Z', 's', 'id'],
    });
    expect(pageWindow(secret, scope, { cursor, since: '2026-04-30T21:00:00-03:00' }, now, shape).window).to.deep.equal(
      w,
    );
    const moved = problemOf(() => pageWindow(secret, scope, { cursor, until: '2026-05-03T00:00:00Z' }, now, shape));
    expect(moved.errors.map((e) => `${e.field}:${e.code}`)).to.deep.equal(['cursor:invalid']);
    expect(() => pageWindow(secret, { ...scope, tenant: { ...tenant, env: 'live' } }, { cursor }, now, shape)).to.throw(
      ProblemError,
    );
    expect(() => pageWindow(secret, { ...scope, list: 'conversions' }, { cursor }, now, shape)).to.throw(ProblemError);
    expect(() => pageWindow(secret, { ...scope, filters: { store_id: 's' } }, { cursor }, now, shape)).to.throw(
      ProblemError,
    );
    expect(() => pageWindow(secret, scope, { cursor }, now, ['string', 'string'])).to.throw(ProblemError);
  });
});

describe('report figures', () => {
  it('stores cents in limbs of 10^12 and reads them back exactly, beyond 2^64', () => {
    const f = { ...zeroFigures(), orders: 1, known: 180143985094819820000n, gross: 999_999_999_999n };
    const stored = storedFields(f);
    expect(stored).to.deep.equal({ orders: 1, known_hi: 180143985, known_lo: 94819820000, gross_lo: 999999999999 });
    expect(figuresOf(stored)).to.deep.equal(f);
    expect(figuresOf({ known_hi: 1n, known_lo: 2n * 10n ** 12n }).known).to.equal(3n * 10n ** 12n); // sums of lo may carry
  });
  it('moves a bucket by the difference of an order before and after, and refuses to go below zero', () => {
    const before = { ...zeroFigures(), orders: 1, paid_orders: 1, gross: 100n, net: 100n };
    const after = { ...zeroFigures(), orders: 1, cancelled_orders: 1, gross: 100n, refunded: 100n };
    const bucket = combine(before, combine(after, before, -1));
    expect(bucket).to.deep.equal(after);
    expect(() => storedFields(combine(zeroFigures(), before, -1))).to.throw(RangeError);
  });
  it('makes the expected total null while any order is unknown', () => {
    expect(
      commercialTotals({ ...zeroFigures(), unknown_commission_orders: 1, known: 5n }).expected_commission_cents,
    ).to.equal(null);
    expect(commercialTotals({ ...zeroFigures(), known: 5n }).expected_commission_cents).to.equal(5);
  });
  it('finds the periods of an instant', () => {
    expect(periodOf(1, '2026-05-01T10:59:59.999Z')).to.equal('2026-05-01T10:00:00.000Z');
    expect(periodOf(2, '2026-05-01T23:59:59.999Z')).to.equal('2026-05-01T00:00:00.000Z');
  });
  it('covers a window with whole days, whole hours of the partial days and items at both ends', () => {
    const r = (since: string, until: string) =>
      coveringRanges(since, until).map((x) => `${x.field} ${x.from.slice(5, 19)} ${x.to.slice(5, 19)}`);
    expect(r('2026-05-01T10:30:00.000Z', '2026-05-04T02:15:00.000Z')).to.deep.equal([
      'at 05-01T10:30:00 05-01T11:00:00',
      'hour 05-01T11:00:00 05-02T00:00:00',
      'day 05-02T00:00:00 05-04T00:00:00',
      'hour 05-04T00:00:00 05-04T02:00:00',
      'at 05-04T02:00:00 05-04T02:15:00',
    ]);
    expect(r('2026-05-01T00:00:00.000Z', '2026-05-02T00:00:00.000Z')).to.deep.equal([
      'day 05-01T00:00:00 05-02T00:00:00',
    ]);
    expect(r('2026-05-01T10:00:00.000Z', '2026-05-01T12:00:00.000Z')).to.deep.equal([
      'hour 05-01T10:00:00 05-01T12:00:00',
    ]);
    expect(r('2026-05-01T10:10:00.000Z', '2026-05-01T10:50:00.000Z')).to.deep.equal([
      'at 05-01T10:10:00 05-01T10:50:00',
    ]);
    expect(r('2026-05-01T10:50:00.000Z', '2026-05-01T11:10:00.000Z')).to.deep.equal([
      'at 05-01T10:50:00 05-01T11:10:00',
    ]);
    expect(coveringRanges('2026-05-01T10:00:00.000Z', '2026-05-01T10:00:00.000Z')).to.deep.equal([]);
  });
});
