/** Periods in Brasília time and the CSV's field rules (query-api/ledger.ts). */
import { expect } from 'chai';
import { csvField, isClosed, periodBounds, periodOf, periodPlus } from '../../query-api/ledger.js';

describe('ledger periods and CSV fields', () => {
  it('bounds a month at 03:00 UTC on its first day and the next month’s, across a year end', () => {
    expect(periodBounds('2026-10')).to.deep.equal({
      since: '2026-10-01T03:00:00.000Z',
      until: '2026-11-01T03:00:00.000Z',
    });
    expect(periodBounds('2026-12')).to.deep.equal({
      since: '2026-12-01T03:00:00.000Z',
      until: '2027-01-01T03:00:00.000Z',
    });
    expect(periodBounds('2028-02').until).to.equal('2028-03-01T03:00:00.000Z');
    expect(periodBounds('0001-01')).to.deep.equal({
      since: '0001-01-01T03:00:00.000Z',
      until: '0001-02-01T03:00:00.000Z',
    });
    expect(periodBounds('9999-12').until).to.equal('+010000-01-01T03:00:00.000Z');
  });

  it('places an instant in the month of Brasília, and says when a period has closed', () => {
    expect(periodOf('2026-11-01T02:59:59.999Z')).to.equal('2026-10');
    expect(periodOf('2026-11-01T03:00:00.000Z')).to.equal('2026-11');
    expect(periodOf('2027-01-01T01:00:00.000Z')).to.equal('2026-12');
    expect(periodPlus('2026-01', -1)).to.equal('2025-12');
    expect(periodPlus('2026-12', 1)).to.equal('2027-01');
    expect(isClosed('2026-10', new Date('2026-11-01T02:59:59.999Z'))).to.equal(false);
    expect(isClosed('2026-10', new Date('2026-11-01T03:00:00.000Z'))).to.equal(true);
  });

  it('quotes a field holding a comma, a quote, CR or LF (quotes doubled), and only those', () => {
    expect(csvField('plain-id_1.x')).to.equal('plain-id_1.x');
    expect(csvField('a,b')).to.equal('"a,b"');
    expect(csvField('say "hi"')).to.equal('"say ""hi"""');
    expect(csvField('a\rb')).to.equal('"a\rb"');
    expect(csvField('a\nb')).to.equal('"a\nb"');
  });
});
