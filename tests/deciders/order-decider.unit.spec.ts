import { expect } from 'chai';
import {
  attributionFailure,
  evolve,
  initialState,
  requiresCreationData,
  conversionHash,
  normalizeConversion,
} from '../../command-api/deciders/order.js';
import type { ConversionInput, OrderEvent } from '../../shared-schema/events/order.js';
import {
  given,
  givenRecorded,
  command,
  paid,
  refund,
  cancel,
  reservationOf,
  orderStream,
  tenant,
  PAID_AT,
  NOW,
  CLICK,
  CLICK_ID,
  ITEMS,
  RULES,
  at,
  MINUTE,
  DAY,
} from './order-given.js';

const T1 = at(PAID_AT, 1 * DAY);
const T2 = at(PAID_AT, 2 * DAY);

describe('order decider', () => {
  describe('(0) input rules a schema cannot express: 422 with every field at once', () => {
    it('refuses a paid whose occurred_at differs from paid_at', () => {
      given()
        .when(paid({ occurred_at: at(PAID_AT, 1000) }))
        .thenProblem(422, 'occurred_at: must_equal_paid_at');
    });
    it('accepts a paid whose occurred_at is the same instant written in another offset', () => {
      given()
        .when(paid({ occurred_at: '2026-03-01T09:00:00-03:00' }))
        .thenRecords('OrderPaid');
    });
    it('refuses a paid with a refund on a line, at that line’s index as sent', () => {
      const items = ITEMS.map((i) => ({ ...i }));
      items[2].refunded_cents = 1;
      given().when(paid({ items })).thenProblem(422, 'items[2].refunded_cents: must_be_zero');
    });
    it('refuses a refund above quantity × unit_price_cents on that field, and accepts exactly the line total', () => {
      given(paid())
        .when(refund('ev-r', T1, { 'sku-c': 301 }))
        .thenProblem(422, 'items[2].refunded_cents: exceeds_line_total');
      given(paid())
        .when(refund('ev-r', T1, { 'sku-c': 300 }))
        .thenRecords('OrderRefunded');
    });
    it('refuses a cancelled that does not refund every line in full', () => {
      const input = refund('ev-x', T1, { 'sku-a': 2000, 'sku-b': 2999, 'sku-c': 300 }, 'cancelled');
      given(paid()).when(input).thenProblem(422, 'items[1].refunded_cents: must_be_full');
    });
    it('refuses a repeated SKU', () => {
      const items = [...ITEMS, { ...ITEMS[0] }];
      given().when(paid({ items })).thenProblem(422, 'items[3].sku: duplicate');
    });
    it('refuses an order total above one trillion cents, and accepts exactly one trillion', () => {
      const big = (unit: number) => [{ sku: 'sku-a', quantity: 10000, unit_price_cents: unit, refunded_cents: 0 }];
      given()
        .when(paid({ items: big(100_000_001) }))
        .thenProblem(422, 'items: total_too_large');
      given()
        .when(paid({ items: big(100_000_000) }))
        .thenRecords('OrderPaid');
    });
    it('refuses a date more than five minutes after now, and accepts exactly five minutes', () => {
      const late = at(NOW, 5 * MINUTE + 1);
      given()
        .when(paid({ paid_at: late, occurred_at: late }))
        .thenProblem(422, 'paid_at: future', 'occurred_at: future');
      const edge = at(NOW, 5 * MINUTE);
      given()
        .when(command(paid({ paid_at: edge, occurred_at: edge }), { click: { ...CLICK, occurred_at: NOW } }))
        .thenRecords('OrderPaid');
      given(paid())
        .when(refund('ev-r', at(NOW, 5 * MINUTE + 1000), { 'sku-a': 1 }))
        .thenProblem(422, 'occurred_at: future');
    });
    it('refuses a currency other than BRL', () => {
      given()
        .when(paid({ currency: 'USD' }))
        .thenProblem(422, 'currency: enum');
    });
    it('refuses a refund that occurred before the payment', () => {
      given(paid())
        .when(refund('ev-r', at(PAID_AT, -1), { 'sku-a': 1 }))
        .thenProblem(422, 'occurred_at: before_paid_at');
    });
    it('lists every invalid field at once', () => {
      const items = ITEMS.map((i) => ({ ...i, refunded_cents: 99999 }));
      given(paid())
        .when({ ...refund('ev-r', T1, {}), items, currency: 'EUR' })
        .thenProblem(
          422,
          'currency: enum',
          'items[0].refunded_cents: exceeds_line_total',
          'items[1].refunded_cents: exceeds_line_total',
          'items[2].refunded_cents: exceeds_line_total',
        );
    });
  });

  describe('(1) event_id seen before', () => {
    it('when an event is repeated with the same body, answers the first receipt with duplicate true and writes nothing', () => {
      const first = given().when(paid()).thenRecords('OrderPaid');
      const s = given(paid(), refund('ev-r1', T1, { 'sku-a': 500 }));
      const d = s.when(paid()).thenNothing();
      expect(d.receipt).to.deep.equal({ ...first.receipt, duplicate: true });
      expect(d.receipt.refunded_cents, 'the first answer, not the current order').to.equal(0);
    });
    it('when repeated with items in another order and dates in another offset, it is the same normalized body', () => {
      const s = given(paid(), refund('ev-r1', T1, { 'sku-a': 500 }));
      const again = refund('ev-r1', '2026-03-02T09:00:00-03:00', { 'sku-a': 500 });
      again.items.reverse();
      again.paid_at = '2026-03-01T12:00:00Z';
      const d = s.when(again).thenNothing();
      expect(d.receipt.duplicate).to.equal(true);
      expect(d.receipt.refunded_cents).to.equal(500);
    });
    it('when a stale event is repeated, answers ignored_stale true again', () => {
      const s = given(paid(), refund('ev-r2', T2, { 'sku-a': 800 }), refund('ev-old', T1, { 'sku-a': 100 }));
      const d = s.when(refund('ev-old', T1, { 'sku-a': 100 })).thenNothing();
      expect([d.receipt.duplicate, d.receipt.ignored_stale]).to.deep.equal([true, true]);
    });
    it('when the event_id was used with another body, refuses with event_conflict', () => {
      given(paid(), refund('ev-r1', T1, { 'sku-a': 500 }))
        .when(refund('ev-r1', T1, { 'sku-a': 600 }))
        .thenProblem(409, 'event_id: event_conflict');
    });
    it('when the event_id is reserved by another order, refuses with event_conflict', () => {
      const other = given()
        .when(paid({ order_id: 'order-2' }))
        .thenRecords('OrderPaid');
      given()
        .when(command(paid(), { reservation: reservationOf(other) }))
        .thenProblem(409, 'event_id: event_conflict');
    });
    it('when the reservation exists for this body but the order never got the event, applies it and reserves nothing', () => {
      const first = given().when(paid()).thenRecords('OrderPaid');
      const d = given()
        .when(command(paid(), { reservation: reservationOf(first) }))
        .thenRecords('OrderPaid');
      expect(d.reserve).to.equal(null);
      expect(d.receipt.duplicate).to.equal(false);
    });
    it('reserves a new event_id for this order stream with the hash of the normalized body', () => {
      const d = given().when(paid()).thenRecords('OrderPaid');
      expect(d.reserve).to.deep.equal({
        event_id: 'ev-paid',
        body_hash: conversionHash(normalizeConversion(paid())),
        store_id: 'store-1',
        order_id: 'order-1',
        order_stream: orderStream(),
      });
    });
  });

  describe('(2) no order yet', () => {
    it('when there is no order, refuses a refunded with payment_required', () => {
      given()
        .when(refund('ev-r', T1, { 'sku-a': 1 }))
        .thenProblem(409, 'status: payment_required');
    });
    it('when there is no order, refuses a cancelled with payment_required', () => {
      given().when(cancel('ev-c', T1)).thenProblem(409, 'status: payment_required');
    });
    it('when there is no order, a paid creates it with the rule snapshot as of now', () => {
      const d = given().when(paid()).thenRecords('OrderPaid');
      const r = d.receipt;
      expect(r).to.include({
        event_id: 'ev-paid',
        status: 'paid',
        currency: 'BRL',
        paid_at: PAID_AT,
        occurred_at: PAID_AT,
        gross_cents: 5300,
        refunded_cents: 0,
        net_cents: 5300,
        expected_commission_cents: null,
        known_expected_commission_cents: 700,
        commission_snapshot_at: NOW,
        recorded_at: NOW,
        updated_at: NOW,
        duplicate: false,
        ignored_stale: false,
      });
      expect(r.items.map((i) => [i.sku, i.commission, i.commission_source, i.expected_commission_cents])).to.deep.equal(
        [
          ['sku-a', RULES['sku-a'].commission, 'product', 200],
          ['sku-b', RULES['sku-b'].commission, 'store', 500],
          ['sku-c', null, null, null],
        ],
      );
    });
    it('a paid without an attributable click writes nothing: 422 invalid_attribution', () => {
      given()
        .when(command(paid(), { click: null }))
        .thenProblem(422, 'click_id: invalid_attribution');
      given()
        .when(command(paid(), { click: { ...CLICK, store_id: 'store-2' } }))
        .thenProblem(422, 'click_id: invalid_attribution');
      given()
        .when(command(paid(), { click: { ...CLICK, occurred_at: at(PAID_AT, -30 * DAY - 1000) } }))
        .thenProblem(422, 'click_id: invalid_attribution');
    });
    it('a paid reported long after the payment is attributed by paid_at, not by the receipt date', () => {
      const now = at(PAID_AT, 90 * DAY);
      given()
        .when(command(paid(), { now, click: { ...CLICK, occurred_at: at(PAID_AT, -30 * DAY) } }))
        .thenRecords('OrderPaid');
    });
    it('carries a commission beyond 2^53 exactly, as decimal text that survives JSON storage', () => {
      const items = [{ sku: 'sku-b', quantity: 10000, unit_price_cents: 100_000_000, refunded_cents: 0 }];
      const rules = {
        'sku-b': {
          commission: { type: 'fixed' as const, amount_cents: Number.MAX_SAFE_INTEGER },
          commission_source: 'product' as const,
        },
      };
      const o = given().when(command(paid({ items }), { rules }));
      const d = o.thenRecords('OrderPaid');
      expect(d.receipt.items[0].expected_commission_cents).to.equal('90071992547409910000');
      expect(d.receipt.expected_commission_cents).to.equal('90071992547409910000');
      expect(d.receipt.gross_cents).to.equal(1_000_000_000_000);
      // the event read back from JSON storage decides the next step exactly
      const stored = JSON.parse(JSON.stringify(o.events[0])) as OrderEvent;
      const next = givenRecorded(stored)
        .when(
          paid({ event_id: 'r1', status: 'refunded', occurred_at: T1, items: [{ ...items[0], refunded_cents: 1 }] }),
        )
        .thenRecords('OrderRefunded');
      // 90071992547409910000 × (10^12 − 1) / 10^12 = 90071992547319838007.45… → …007
      expect(next.receipt.expected_commission_cents).to.equal('90071992547319838007');
    });
    it('only a first paid needs the click and the rules', () => {
      expect(requiresCreationData(initialState(), paid())).to.equal(true);
      expect(requiresCreationData(initialState(), refund('r', T1, {}))).to.equal(false);
      expect(requiresCreationData(given(paid()).state, paid({ event_id: 'ev-2' }))).to.equal(false);
    });
  });

  describe('(3) immutable fields', () => {
    const s = () => given(paid());
    it('when the click differs, refuses with order_conflict on click_id', () => {
      s()
        .when({ ...refund('r', T1, {}), click_id: 'ic_BBBBBBBBBBBBBBBBBBBBBB' })
        .thenProblem(409, 'click_id: order_conflict');
    });
    it('when paid_at differs, refuses with order_conflict on paid_at', () => {
      s()
        .when({ ...refund('r', T1, {}), paid_at: at(PAID_AT, 1000) })
        .thenProblem(409, 'paid_at: order_conflict');
    });
    it('when the set of SKUs differs, refuses with order_conflict on items', () => {
      s()
        .when({ ...refund('r', T1, {}), items: ITEMS.slice(0, 2) })
        .thenProblem(409, 'items: order_conflict');
      const renamed = ITEMS.map((i) => ({ ...i }));
      renamed[1].sku = 'sku-z';
      s()
        .when({ ...refund('r', T1, {}), items: renamed })
        .thenProblem(409, 'items: order_conflict');
    });
    it('when a quantity or a unit price differs, refuses with order_conflict at those lines', () => {
      const items = ITEMS.map((i) => ({ ...i }));
      items[0].quantity = 3;
      items[2].unit_price_cents = 99;
      s()
        .when({ ...refund('r', T1, {}), items })
        .thenProblem(409, 'items[0].quantity: order_conflict', 'items[2].unit_price_cents: order_conflict');
    });
    it('when a second paid changes a unit price, refuses with order_conflict (not a repeat)', () => {
      const items = ITEMS.map((i) => ({ ...i }));
      items[1].unit_price_cents = 2999;
      s()
        .when(paid({ event_id: 'ev-2', items }))
        .thenProblem(409, 'items[1].unit_price_cents: order_conflict');
    });
  });

  describe('(4) a paid on an existing order', () => {
    it('when paid, a second paid with a new event_id changes nothing: 200, duplicate false, audited', () => {
      const s = given(paid());
      const d = s.when(paid({ event_id: 'ev-paid-2' })).thenRecords('ConversionRepeated');
      expect(d.receipt).to.deep.equal({ ...s.state.order!, duplicate: false, ignored_stale: false });
      expect(d.receipt.event_id).to.equal('ev-paid');
    });
    it('when refunded, refuses a paid with invalid_transition', () => {
      given(paid(), refund('r1', T1, { 'sku-a': 1 }))
        .when(paid({ event_id: 'ev-2' }))
        .thenProblem(409, 'status: invalid_transition');
    });
    it('when cancelled, refuses a paid with invalid_transition', () => {
      given(paid(), cancel('c1', T1))
        .when(paid({ event_id: 'ev-2' }))
        .thenProblem(409, 'status: invalid_transition');
    });
  });

  describe('(5) stale', () => {
    it('when an event is older than the last applied, answers ignored_stale true and leaves the balance', () => {
      const s = given(paid(), refund('r2', T2, { 'sku-a': 800 }));
      const d = s.when(refund('r1', T1, { 'sku-a': 100 })).thenRecords('ConversionIgnoredStale');
      expect(d.receipt).to.deep.equal({ ...s.state.order!, duplicate: false, ignored_stale: true });
      expect(d.receipt.refunded_cents).to.equal(800);
    });
    it('when cancelled, an older refunded is stale, not a transition error', () => {
      given(paid(), cancel('c', T2))
        .when(refund('r1', T1, { 'sku-a': 1 }))
        .thenRecords('ConversionIgnoredStale');
    });
  });

  describe('(6) the same instant as the last applied event', () => {
    it('with other content, refuses with order_conflict on occurred_at', () => {
      given(paid(), refund('r1', T1, { 'sku-a': 500 }))
        .when(refund('r2', T1, { 'sku-a': 600 }))
        .thenProblem(409, 'occurred_at: order_conflict');
      given(paid(), refund('r1', T1, { 'sku-a': 500 }))
        .when(refund('r2', T1, { 'sku-a': 400 }))
        .thenProblem(409, 'occurred_at: order_conflict');
    });
    it('a refunded at the instant of the payment diverges from it', () => {
      given(paid())
        .when(refund('r1', PAID_AT, {}))
        .thenProblem(409, 'occurred_at: order_conflict');
    });
    it('with the same content under a new event_id, changes nothing: 200, audited', () => {
      const s = given(paid(), refund('r1', T1, { 'sku-a': 500 }));
      const d = s.when(refund('r1-bis', T1, { 'sku-a': 500 })).thenRecords('ConversionRepeated');
      expect(d.receipt.event_id).to.equal('r1');
      expect(d.receipt.ignored_stale).to.equal(false);
    });
  });

  describe('(7) the transition', () => {
    it('when paid, a refunded sets the cumulative refund per line (not an increment) and reduces commission', () => {
      const s = given(paid(), refund('r1', T1, { 'sku-a': 100 }));
      const d = s.when(refund('r2', T2, { 'sku-a': 300, 'sku-b': 1500 })).thenRecords('OrderRefunded');
      const r = d.receipt;
      expect(r).to.include({
        status: 'refunded',
        event_id: 'r2',
        occurred_at: T2,
        gross_cents: 5300,
        refunded_cents: 1800,
        net_cents: 3500,
        updated_at: NOW,
      });
      // sku-a 10 % of 1700 = 170; sku-b 500 × 1500/3000 = 250; sku-c unknown
      expect(r.items.map((i) => i.expected_commission_cents)).to.deep.equal([170, 250, null]);
      expect([r.expected_commission_cents, r.known_expected_commission_cents]).to.deep.equal([null, 420]);
    });
    it('a line with no rule gives 0 once fully refunded, and the order expectation becomes known', () => {
      const d = given(paid())
        .when(refund('r1', T1, { 'sku-c': 300 }))
        .thenRecords('OrderRefunded');
      expect(d.receipt.items[2].expected_commission_cents).to.equal(0);
      expect(d.receipt.expected_commission_cents).to.equal(700);
    });
    it('when refunded, a lower refund on any line is refused with invalid_transition on that line', () => {
      given(paid(), refund('r1', T1, { 'sku-a': 500, 'sku-c': 200 }))
        .when(refund('r2', T2, { 'sku-a': 499, 'sku-b': 3000, 'sku-c': 100 }))
        .thenProblem(409, 'items[0].refunded_cents: invalid_transition', 'items[2].refunded_cents: invalid_transition');
    });
    it('when refunded, a cancelled refunds every line and zeroes the commission', () => {
      const d = given(paid(), refund('r1', T1, { 'sku-a': 500 }))
        .when(cancel('c1', T2))
        .thenRecords('OrderCancelled');
      expect(d.receipt).to.include({
        status: 'cancelled',
        refunded_cents: 5300,
        net_cents: 0,
        expected_commission_cents: 0,
        known_expected_commission_cents: 0,
      });
    });
    it('when paid, a cancelled applies directly', () => {
      given(paid()).when(cancel('c1', T1)).thenRecords('OrderCancelled');
    });
    it('when cancelled, refuses a newer refunded with invalid_transition', () => {
      given(paid(), cancel('c1', T1))
        .when(refund('r1', T2, { 'sku-a': 2000, 'sku-b': 3000, 'sku-c': 300 }))
        .thenProblem(409, 'status: invalid_transition');
    });
    it('when cancelled, a newer cancelled changes nothing: 200, audited, the order keeps its last applied event', () => {
      const s = given(paid(), cancel('c1', T1));
      const d = s.when(cancel('c2', T2)).thenRecords('ConversionRepeated');
      expect(d.receipt).to.include({ event_id: 'c1', occurred_at: T1, duplicate: false, ignored_stale: false });
    });
    it('keeps the rule snapshot of the first paid when the catalog changes', () => {
      const changed = {
        ...RULES,
        'sku-a': { commission: { type: 'fixed' as const, amount_cents: 1 }, commission_source: 'store' as const },
      };
      const d = given(paid())
        .when(command(refund('r1', T1, { 'sku-a': 1000 }), { rules: changed }))
        .thenRecords('OrderRefunded');
      expect(d.receipt.items[0]).to.include({ commission_source: 'product', expected_commission_cents: 100 });
      expect(d.receipt.commission_snapshot_at).to.equal(NOW);
    });
    it('keeps recorded_at and commission_snapshot_at of the first paid; updated_at follows the last applied event', () => {
      const later = at(NOW, DAY);
      const d = given(paid())
        .when(command(refund('r1', T1, { 'sku-a': 1 }), { now: later }))
        .thenRecords('OrderRefunded');
      expect([d.receipt.recorded_at, d.receipt.commission_snapshot_at, d.receipt.updated_at]).to.deep.equal([
        NOW,
        NOW,
        later,
      ]);
    });
  });

  describe('evolve', () => {
    it('audit-only events leave the order unchanged but remember their event_id', () => {
      const s = given(paid(), refund('r2', T2, { 'sku-a': 800 }));
      const o = s.when(refund('r1', T1, { 'sku-a': 100 }));
      o.thenRecords('ConversionIgnoredStale');
      expect(o.after.order).to.deep.equal(s.state.order);
      expect(o.after.seen.has('r1')).to.equal(true);
    });
    it('accepts an event_id such as __proto__', () => {
      const input: ConversionInput = refund('__proto__', T1, { 'sku-a': 5 });
      const s = given(paid(), input);
      expect(s.when(input).thenNothing().receipt.duplicate).to.equal(true);
      const o = given().when(paid());
      o.thenRecords('OrderPaid');
      expect(evolve(initialState(), o.events[0]).order!.status).to.equal('paid');
    });
  });
});

describe('attributionFailure (the reason of invalid_attribution)', () => {
  const input = paid();
  const failure = (click: typeof CLICK | null) => attributionFailure(click, input, tenant);
  it('accepts a click exactly 30 days before paid_at, and refuses one second earlier as click_too_old', () => {
    expect(failure({ ...CLICK, occurred_at: at(PAID_AT, -30 * DAY) })).to.equal(null);
    expect(failure({ ...CLICK, occurred_at: at(PAID_AT, -30 * DAY - 1000) })).to.equal('click_too_old');
    expect(failure({ ...CLICK, occurred_at: at(PAID_AT, -30 * DAY + 1000) })).to.equal(null);
  });
  it('accepts a click at the instant of payment and refuses one a second after it as click_after_payment', () => {
    expect(failure({ ...CLICK, occurred_at: PAID_AT })).to.equal(null);
    expect(failure({ ...CLICK, occurred_at: at(PAID_AT, 1000) })).to.equal('click_after_payment');
  });
  it('compares instants, whatever the offset they are written in', () => {
    expect(failure({ ...CLICK, occurred_at: '2026-01-30T09:00:00-03:00' })).to.equal(null); // = PAID_AT − 30 days
  });
  it("names another store; another partner's or environment's click, or none, is unknown_click (nothing of another tenant shows)", () => {
    expect(failure({ ...CLICK, store_id: 'store-2' })).to.equal('other_store');
    expect(failure({ ...CLICK, partner_id: 'pt_OTHER' })).to.equal('unknown_click');
    expect(failure({ ...CLICK, environment: 'live' })).to.equal('unknown_click');
    expect(failure({ ...CLICK, click_id: 'ic_CCCCCCCCCCCCCCCCCCCCCC' })).to.equal('unknown_click');
    expect(failure(null)).to.equal('unknown_click');
    expect(attributionFailure(CLICK, { ...input, click_id: CLICK_ID }, tenant)).to.equal(null);
  });
});
