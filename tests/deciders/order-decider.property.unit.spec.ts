/**
 * Random sequences of conversion events for one order, checked against a small reference model written here from
 * the contract and DECISIONS.md (BigInt from first principles; it calls nothing of order-math or the decider).
 */
import { expect } from 'chai';
import fc from 'fast-check';
import { decide, evolve, initialState, type OrderState } from '../../command-api/deciders/order.js';
import { ProblemError } from '../../shared-schema/contract/problems.js';
import { fromBigCents } from '../../shared-schema/domain/order-math.js';
import type { EffectiveCommission } from '../../shared-schema/domain/commission.js';
import type {
  ConversionEventReservation,
  ConversionInput,
  ConversionReceipt,
} from '../../shared-schema/events/order.js';
import { tenant, CLICK, CLICK_ID, PAID_AT } from '../support/order-fixtures.js';

// ------------------------------------------------------------------ the reference model

type Rule = null | { kind: 'pct'; hundredths: bigint } | { kind: 'fixed'; amount: bigint };
interface MLine {
  sku: string;
  q: bigint;
  u: bigint;
  rule: Rule;
  refunded: bigint;
}
interface MOrder {
  status: string;
  eventId: string;
  at: number;
  paidAt: number;
  click: string;
  lines: MLine[];
}
interface MAnswer {
  order: MOrder;
  duplicate: boolean;
  stale: boolean;
}
type MOutcome = { problem: number; codes: string[] } | MAnswer;
interface MOrderStream {
  order: MOrder | null;
  seen: Map<string, { key: string; answer: MAnswer }>;
}
/** Two orders of one store; `reservations` (event_id → body key) is null when the harness does not use them. */
interface Model {
  orders: Map<string, MOrderStream>;
  reservations: Map<string, string> | null;
}
const ORDERS = ['order-1', 'order-2'] as const;

const HOUR = 3_600_000;
const PAID_MS = Date.parse(PAID_AT);
const NOW_MS = PAID_MS + 10 * 24 * HOUR;
const half = (n: bigint, d: bigint) => n / d + ((n % d) * 2n >= d ? 1n : 0n); // n, d ≥ 0

function expectedOf(l: MLine): bigint | null {
  const gross = l.q * l.u;
  const net = gross - l.refunded;
  if (l.rule === null) return net > 0n ? null : 0n;
  if (l.rule.kind === 'pct') return half(net * l.rule.hundredths, 10000n);
  return gross === 0n ? 0n : half(l.rule.amount * l.q * net, gross);
}

interface Sent {
  input: ConversionInput;
  items: { sku: string; q: bigint; u: bigint; r: bigint }[];
  paidAt: number;
  at: number;
}

function modelStep(model: Model, s: Sent, rules: Map<string, Rule>, clickOk: boolean): MOutcome {
  const codes: string[] = [];
  const { input } = s;
  if (s.paidAt > NOW_MS + 300_000) codes.push('future');
  if (s.at > NOW_MS + 300_000) codes.push('future');
  if (input.status === 'paid' && s.at !== s.paidAt) codes.push('must_equal_paid_at');
  if (input.status !== 'paid' && s.at < s.paidAt) codes.push('before_paid_at');
  let total = 0n;
  for (const it of s.items) {
    total += it.q * it.u;
    if (input.status === 'paid' && it.r !== 0n) codes.push('must_be_zero');
    else if (it.r > it.q * it.u) codes.push('exceeds_line_total');
    else if (input.status === 'cancelled' && it.r !== it.q * it.u) codes.push('must_be_full');
  }
  if (total > 1_000_000_000_000n) codes.push('total_too_large');
  if (codes.length > 0) return { problem: 422, codes };

  const key = JSON.stringify([
    input.event_id,
    input.order_id,
    input.store_id,
    input.click_id,
    input.status,
    s.paidAt,
    s.at,
    [...s.items].sort((a, b) => (a.sku < b.sku ? -1 : 1)).map((i) => [i.sku, `${i.q}`, `${i.u}`, `${i.r}`]),
  ]);
  const reserved = model.reservations?.get(input.event_id);
  if (reserved !== undefined && reserved !== key) return { problem: 409, codes: ['event_conflict'] };
  const m = model.orders.get(input.order_id)!;
  const seen = m.seen.get(input.event_id);
  if (seen) return seen.key === key ? { ...seen.answer, duplicate: true } : { problem: 409, codes: ['event_conflict'] };

  const answer = (order: MOrder, stale = false): MAnswer => {
    const a = { order, duplicate: false, stale };
    m.seen.set(input.event_id, { key, answer: a });
    m.order = order;
    if (model.reservations && !model.reservations.has(input.event_id)) model.reservations.set(input.event_id, key);
    return a;
  };
  const o = m.order;
  const lines = [...s.items].sort((a, b) => (a.sku < b.sku ? -1 : 1));
  if (o === null) {
    if (input.status !== 'paid') return { problem: 409, codes: ['payment_required'] };
    if (!clickOk || input.click_id !== CLICK_ID) return { problem: 422, codes: ['invalid_attribution'] };
    return answer({
      status: 'paid',
      eventId: input.event_id,
      at: s.at,
      paidAt: s.paidAt,
      click: input.click_id,
      lines: lines.map((l) => ({ sku: l.sku, q: l.q, u: l.u, rule: rules.get(l.sku)!, refunded: 0n })),
    });
  }
  const same = (a: MLine, b: { sku: string; q: bigint; u: bigint }) => a.sku === b.sku && a.q === b.q && a.u === b.u;
  if (
    input.click_id !== o.click ||
    s.paidAt !== o.paidAt ||
    lines.length !== o.lines.length ||
    !lines.every((l, i) => same(o.lines[i], l))
  )
    return { problem: 409, codes: ['order_conflict'] };
  if (input.status === 'paid') return o.status === 'paid' ? answer(o) : { problem: 409, codes: ['invalid_transition'] };
  if (s.at < o.at) return answer(o, true);
  const sameRefunds = lines.every((l, i) => l.r === o.lines[i].refunded);
  if (s.at === o.at)
    return input.status === o.status && sameRefunds ? answer(o) : { problem: 409, codes: ['order_conflict'] };
  if (o.status === 'cancelled')
    return input.status === 'cancelled' ? answer(o) : { problem: 409, codes: ['invalid_transition'] };
  if (lines.some((l, i) => l.r < o.lines[i].refunded)) return { problem: 409, codes: ['invalid_transition'] };
  return answer({
    ...o,
    status: input.status,
    eventId: input.event_id,
    at: s.at,
    lines: o.lines.map((l, i) => ({ ...l, refunded: lines[i].r })),
  });
}

// ------------------------------------------------------------------ comparing the decider with the model

function expectReceiptMatches(r: ConversionReceipt, a: MAnswer, where: string): void {
  const o = a.order;
  expect([r.status, r.event_id, r.duplicate, r.ignored_stale], where).to.deep.equal([
    o.status,
    o.eventId,
    a.duplicate,
    a.stale,
  ]);
  expect(Date.parse(r.occurred_at), where).to.equal(o.at);
  expect(
    r.items.map((i) => [i.sku, BigInt(i.refunded_cents)]),
    where,
  ).to.deep.equal(o.lines.map((l) => [l.sku, l.refunded]));
  const gross = o.lines.reduce((t, l) => t + l.q * l.u, 0n);
  const refunded = o.lines.reduce((t, l) => t + l.refunded, 0n);
  expect([BigInt(r.gross_cents), BigInt(r.refunded_cents), BigInt(r.net_cents)], where).to.deep.equal([
    gross,
    refunded,
    gross - refunded,
  ]);
  const perLine = o.lines.map(expectedOf);
  const big = (x: number | string | null) => (x === null ? null : fromBigCents(x));
  expect(
    r.items.map((i) => big(i.expected_commission_cents)),
    where,
  ).to.deep.equal(perLine);
  const known = perLine.reduce<bigint>((t, x) => t + (x ?? 0n), 0n);
  expect(big(r.known_expected_commission_cents), where).to.equal(known);
  expect(big(r.expected_commission_cents), where).to.equal(perLine.includes(null) ? null : known);
}

// ------------------------------------------------------------------ generators

const SKUS = ['a', 'b', 'c'] as const;
const MAX = Number.MAX_SAFE_INTEGER;
const ruleArb: fc.Arbitrary<Rule> = fc.oneof(
  fc.constant(null),
  fc.integer({ min: 0, max: 10000 }).map((h) => ({ kind: 'pct' as const, hundredths: BigInt(h) })),
  fc
    .oneof(fc.constantFrom(0, 1, 7, MAX), fc.integer({ min: 0, max: MAX }))
    .map((a) => ({ kind: 'fixed' as const, amount: BigInt(a) })),
);
const lineArb = fc.record({
  q: fc.oneof(fc.constantFrom(1, 2, 3, 10000), fc.integer({ min: 1, max: 10000 })),
  u: fc.oneof(fc.constantFrom(0, 1, 3, 99, 33_333_333, 100_000_000), fc.integer({ min: 0, max: 1_000_000_000 })),
  rule: ruleArb,
});
const refundArb = fc.record({
  how: fc.constantFrom('keep', 'up', 'up', 'down', 'any', 'full', 'zero'),
  num: fc.integer({ min: 0, max: 1000 }),
});
const stepArb = fc.record({
  status: fc.constantFrom('paid', 'refunded', 'refunded', 'cancelled'),
  hour: fc.integer({ min: 0, max: 6 }),
  refunds: fc.array(refundArb, { minLength: 3, maxLength: 3 }),
  id: fc.record({
    mode: fc.oneof(
      { weight: 2, arbitrary: fc.constant('fresh' as const) },
      fc.constantFrom('resend' as const, 'reuse' as const),
    ),
    pick: fc.nat(),
  }),
  mutate: fc.oneof(
    { weight: 8, arbitrary: fc.constant('none') },
    { weight: 1, arbitrary: fc.constantFrom('click', 'unit', 'paid_at', 'over', 'future', 'notfull') },
  ),
  /** Mostly the first order; sometimes a second one of the same store, sharing the event_id space. */
  order: fc.oneof({ weight: 4, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.constant(1) }),
  shuffle: fc.boolean(),
  offset: fc.boolean(),
});
const mostly = (weight: number) =>
  fc.oneof({ weight, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) });
const scenarioArb = fc
  .record({
    lines: fc.array(lineArb, { minLength: 1, maxLength: 3 }),
    /** Mostly keep the order within the 10^12 total (each line ≤ 10^12 / 3); sometimes let it pass. */
    fitTotal: mostly(9),
    clickOk: mostly(9),
    startPaid: mostly(9),
    /** Sometimes the reservation stream is not consulted (as after a crash between the two appends). */
    useReservations: mostly(3),
    steps: fc.array(stepArb, { minLength: 1, maxLength: 14 }),
  })
  .map((sc) => ({
    ...sc,
    lines: sc.fitTotal
      ? sc.lines.map((l) => ({ ...l, u: Math.min(l.u, Math.floor(333_333_333_333 / l.q)) }))
      : sc.lines,
    steps: sc.startPaid
      ? [
          { ...sc.steps[0], status: 'paid' as const, mutate: 'none' as const, id: { mode: 'fresh' as const, pick: 0 } },
          ...sc.steps,
        ]
      : sc.steps,
  }));

const iso = (ms: number, offset: boolean) =>
  offset ? new Date(ms - 3 * HOUR).toISOString().replace('Z', '-03:00') : new Date(ms).toISOString();

// ------------------------------------------------------------------ the property

describe('order decider against a reference model (property)', function () {
  this.timeout(60_000);

  it('answers, balances and commission equal the model to the cent; refunds never decrease; cancelled never revives', () => {
    fc.assert(
      fc.property(scenarioArb, (sc) => {
        const base = sc.lines.map((l, i) => ({ sku: SKUS[i], q: BigInt(l.q), u: BigInt(l.u), rule: l.rule }));
        const rules = new Map(base.map((l) => [l.sku, l.rule]));
        const rulesBySku: Record<string, EffectiveCommission> = Object.fromEntries(
          base.map((l) => [l.sku, toEffective(l.rule)]),
        );
        const model: Model = {
          orders: new Map(ORDERS.map((id) => [id, { order: null, seen: new Map() }])),
          reservations: sc.useReservations ? new Map() : null,
        };
        const states = new Map<string, OrderState>(ORDERS.map((id) => [id, initialState()]));
        const reservations = new Map<string, ConversionEventReservation>();
        const sent: Sent[] = [];

        sc.steps.forEach((step, n) => {
          let s: Sent;
          if (step.id.mode === 'resend' && sent.length > 0) {
            const old = sent[step.id.pick % sent.length];
            s = { ...old, input: format(old, step.shuffle, step.offset) };
          } else {
            const eventId =
              step.id.mode === 'reuse' && sent.length > 0 ? sent[step.id.pick % sent.length].input.event_id : `ev-${n}`;
            s = build(step, eventId, ORDERS[step.order], base, model);
            s.input = format(s, step.shuffle, step.offset);
          }
          sent.push(s);

          const expected = modelStep(model, s, rules, sc.clickOk);
          const state = states.get(s.input.order_id)!;
          const before = state.order;
          const where = `step ${n}: ${JSON.stringify(s.input)}`;
          let outcome;
          try {
            outcome = decide(
              {
                type: 'RecordConversion',
                data: {
                  tenant,
                  input: s.input,
                  now: new Date(NOW_MS).toISOString(),
                  existingReservation: (sc.useReservations && reservations.get(s.input.event_id)) || null,
                  click: sc.clickOk ? CLICK : null,
                  rulesBySku,
                },
              },
              state,
            );
          } catch (err) {
            if (!(err instanceof ProblemError)) throw err;
            expect('problem' in expected, `${where} → unexpected ${err.message}`).to.equal(true);
            const m = expected as { problem: number; codes: string[] };
            expect([err.status, [...new Set(err.errors.map((e) => e.code))].sort()], where).to.deep.equal([
              m.problem,
              [...new Set(m.codes)].sort(),
            ]);
            return;
          }
          expect(
            'problem' in expected,
            `${where} → expected ${JSON.stringify(expected, (_k, v) => (typeof v === 'bigint' ? `${v}` : v))}`,
          ).to.equal(false);
          const { receipt, reserve } = outcome.result;
          expectReceiptMatches(receipt, expected as MAnswer, where);
          if (reserve && !reservations.has(reserve.event_id)) reservations.set(reserve.event_id, reserve);
          const next = outcome.events.reduce(evolve, state);
          states.set(s.input.order_id, next);

          // invariants of the decider's own state, whatever the model says
          const after = next.order;
          if (before && after) {
            if (before.status === 'cancelled') expect(after.status, where).to.equal('cancelled');
            before.items.forEach((item, i) =>
              expect(after.items[i].refunded_cents, where).to.be.at.least(item.refunded_cents),
            );
          }
        });
        for (const id of ORDERS) {
          const mo = model.orders.get(id)!.order;
          const so = states.get(id)!.order;
          expect(so === null, `final ${id} exists`).to.equal(mo === null);
          if (mo && so)
            expectReceiptMatches(
              { ...so, duplicate: false, ignored_stale: false },
              { order: mo, duplicate: false, stale: false },
              `final ${id}`,
            );
        }
      }),
      { numRuns: 400 },
    );
  });
});

function toEffective(rule: Rule): EffectiveCommission {
  if (rule === null) return { commission: null, commission_source: null };
  if (rule.kind === 'pct')
    return { commission: { type: 'percentage', rate: Number(rule.hundredths) / 100 }, commission_source: 'product' };
  return { commission: { type: 'fixed', amount_cents: Number(rule.amount) }, commission_source: 'store' };
}

type Step = typeof stepArb extends fc.Arbitrary<infer T> ? T : never;

/** The partner's event for this step, its refunds chosen around the model's current balance. */
function build(
  step: Step,
  eventId: string,
  orderId: string,
  base: { sku: string; q: bigint; u: bigint }[],
  model: Model,
): Sent {
  const status = step.status;
  let paidAt = PAID_MS;
  let at = status === 'paid' ? PAID_MS : PAID_MS + step.hour * HOUR;
  const items = base.map((l, i) => {
    const full = l.q * l.u;
    const current = model.orders.get(orderId)!.order?.lines.find((m) => m.sku === l.sku)?.refunded ?? 0n;
    const { how, num } = step.refunds[i];
    const frac = (x: bigint) => (x * BigInt(num)) / 1000n;
    let r = {
      keep: current,
      up: current + frac(full - current),
      down: current > 0n ? current - 1n - frac(current - 1n) : 0n,
      any: frac(full),
      full,
      zero: 0n,
    }[how];
    if (status === 'paid') r = 0n;
    if (status === 'cancelled') r = full;
    return { sku: l.sku, q: l.q, u: l.u, r };
  });
  const first = items[0];
  switch (step.mutate) {
    case 'click':
      break;
    case 'unit':
      first.u += 1n;
      break;
    case 'paid_at':
      paidAt += 1000;
      if (status === 'paid') at = paidAt;
      break;
    case 'over':
      first.r = first.q * first.u + 1n;
      break;
    case 'future':
      at = NOW_MS + 6 * 60_000;
      break;
    case 'notfull':
      if (first.r > 0n) first.r -= 1n;
      break;
  }
  const input: ConversionInput = {
    event_id: eventId,
    order_id: orderId,
    store_id: 'store-1',
    click_id: step.mutate === 'click' ? 'ic_ZZZZZZZZZZZZZZZZZZZZZZ' : CLICK_ID,
    status,
    currency: 'BRL',
    paid_at: '',
    occurred_at: '',
    items: [],
  };
  return { input, items, paidAt, at };
}

/** The same event written another way: items in another order, dates in another offset. */
function format(s: Sent, shuffle: boolean, offset: boolean): ConversionInput {
  const items = s.items.map((i) => ({
    sku: i.sku,
    quantity: Number(i.q),
    unit_price_cents: Number(i.u),
    refunded_cents: Number(i.r),
  }));
  if (shuffle) items.reverse();
  return { ...s.input, paid_at: iso(s.paidAt, offset), occurred_at: iso(s.at, !offset), items };
}
