/**
 * LEDGER.md's CSV line and period rules that HTTP cannot reach (docs/spec-coverage/ledger.md): ExternalIds never hold
 * a comma, a quote, CR or LF, so only a line written here shows the RFC 4180 quoting is applied to the partner's
 * texts; a stored date in another form is still written in UTC with milliseconds; and Brasília is UTC−03:00 all
 * year, also in the months it once kept daylight saving.
 */
import { expect } from 'chai';
import { csvLine, periodBounds, periodOf } from '../../query-api/ledger.js';
import type { MovementDoc } from '../../shared-schema/read-models/ledger.js';

const movement = (overrides: Partial<MovementDoc> = {}): MovementDoc => ({
  _id: 'test:pt_1:m:e1',
  partner_id: 'pt_1',
  env: 'test',
  position: 7,
  event_id: 'e1',
  store_id: 's1',
  order_id: 'o1',
  type: 'refunded',
  occurred_at: '2026-10-15T11:00:00.000Z',
  recorded_at: '2026-10-15T12:00:00.000Z',
  net_delta: '-500',
  known_delta: '-50',
  expected_delta: null,
  net_balance: '4500',
  known_balance: '350',
  store_net_balance: '1',
  store_known_balance: '2',
  ...overrides,
});

describe('ledger CSV lines and periods (rules HTTP cannot reach)', () => {
  it('writes one CRLF line in header order, the null expectation as an empty field, the whole-scope balances', () => {
    expect(csvLine(movement())).to.equal(
      '2026-10-15T12:00:00.000Z,2026-10-15T11:00:00.000Z,s1,o1,e1,refunded,-500,-50,,4500,350\r\n',
    );
    expect(csvLine(movement({ expected_delta: '0' }))).to.contain(',-500,-50,0,4500,350\r\n');
  });

  it('quotes the partner’s texts that hold a comma, a quote, CR or LF, quotes doubled', () => {
    const line = csvLine(movement({ store_id: 'a,b', order_id: 'say "hi"', event_id: 'x\r\ny' }));
    expect(line).to.equal(
      '2026-10-15T12:00:00.000Z,2026-10-15T11:00:00.000Z,"a,b","say ""hi""","x\r\ny",refunded,-500,-50,,4500,350\r\n',
    );
  });

  it('writes a stored date of another form in UTC with milliseconds', () => {
    const line = csvLine(movement({ occurred_at: '2026-10-15T08:00:00-03:00', recorded_at: '2026-10-15T12:00:00Z' }));
    expect(line.startsWith('2026-10-15T12:00:00.000Z,2026-10-15T11:00:00.000Z,')).to.equal(true);
  });

  it('bounds a period at 03:00 UTC also in a month Brazil once kept daylight saving', () => {
    // Brasília kept UTC−02:00 from November 2018 to February 2019; the spec's periods are UTC−03:00 all year.
    expect(periodBounds('2018-12')).to.deep.equal({
      since: '2018-12-01T03:00:00.000Z',
      until: '2019-01-01T03:00:00.000Z',
    });
    expect(periodOf('2019-01-01T02:30:00.000Z')).to.equal('2018-12');
    expect(periodOf('2019-01-01T03:00:00.000Z')).to.equal('2019-01');
  });
});
