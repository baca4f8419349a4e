/**
 * The money of an order, exactly as DECISIONS.md "Conversions" fixes it. Every product is taken in BigInt.
 *
 * Which figures stay below 2^53 (and are returned as `number`):
 * - a line's gross (`quantity × unit_price_cents` ≤ 10 000 × 1 000 000 000 = 10^13), refund and net;
 * - an order's gross, refunded and net: the contract caps an order's total at 10^12 cents;
 * - a percentage commission: at most 100 % of a net, so at most the gross.
 * Which can pass 2^53 (returned as `bigint` here, and as `BigCents` in stored documents and answers):
 * - a fixed commission: `amount_cents` may be 2^53 − 1 and is paid per unit, so one line can reach
 *   (2^53 − 1) × 10 000 ≈ 9 × 10^19 (beyond 64-bit integers too), and an order of 200 lines 200 times that.
 * Such a figure is never rounded or clamped: it is computed exactly and carried as decimal text (see BigCents).
 */
import { rateHundredths, divRoundHalfUp, type Commission } from './commission.js';

/**
 * An exact integer of cents in a JSON document: a `number` while it is a safe integer (≤ 2^53 − 1), otherwise
 * its decimal text. The form is canonical (one value, one representation), so documents compare with `===`.
 * The HTTP layer writes the text form as a bare JSON integer, since the contract types these fields as integers.
 */
export type BigCents = number | string;

export function toBigCents(value: bigint): BigCents {
  if (value < 0n) throw new RangeError('cents must be non-negative');
  return value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value.toString();
}

export function fromBigCents(value: BigCents): bigint {
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`not a cents value: ${value}`);
    return BigInt(value);
  }
  if (!/^(0|[1-9][0-9]*)$/.test(value)) throw new RangeError(`not a cents value: ${value}`);
  return BigInt(value);
}

/** A bigint the caller has proven safe, as a number; throws instead of losing a cent. */
export function safeNumber(value: bigint, what: string): number {
  if (value < 0n || value > BigInt(Number.MAX_SAFE_INTEGER))
    throw new RangeError(`${what} out of safe range: ${value}`);
  return Number(value);
}

export interface OrderLine {
  quantity: number;
  unit_price_cents: number;
  /** Cumulative refund of the whole line. */
  refunded_cents: number;
  /** The rule of the snapshot; null = no rule at product or store level. */
  commission: Commission;
}

export interface LineFigures {
  gross: bigint;
  refunded: bigint;
  net: bigint;
  /** null: no rule while the line still has a balance. */
  expected: bigint | null;
}

/**
 * percentage: round_half_up(net × rate_hundredths / 10 000);
 * fixed: round_half_up(amount × quantity × net / gross), 0 when gross is 0;
 * no rule: null while net > 0, 0 when net is 0.
 */
export function lineFigures(line: OrderLine): LineFigures {
  const quantity = BigInt(line.quantity);
  const gross = quantity * BigInt(line.unit_price_cents);
  const refunded = BigInt(line.refunded_cents);
  const net = gross - refunded;
  if (net < 0n) throw new RangeError('refunded_cents above the line total');
  const rule = line.commission;
  let expected: bigint | null;
  if (rule === null) expected = net === 0n ? 0n : null;
  else if (rule.type === 'percentage') expected = divRoundHalfUp(net * rateHundredths(rule.rate), 10000n);
  else expected = gross === 0n ? 0n : divRoundHalfUp(BigInt(rule.amount_cents) * quantity * net, gross);
  return { gross, refunded, net, expected };
}

export interface OrderFigures {
  lines: LineFigures[];
  gross_cents: number;
  refunded_cents: number;
  net_cents: number;
  /** null when any line is null. */
  expected: bigint | null;
  /** Sum of the lines whose expectation is known. */
  known_expected: bigint;
}

export function orderFigures(lines: readonly OrderLine[]): OrderFigures {
  const figures = lines.map(lineFigures);
  let gross = 0n;
  let refunded = 0n;
  let known = 0n;
  let unknown = false;
  for (const f of figures) {
    gross += f.gross;
    refunded += f.refunded;
    if (f.expected === null) unknown = true;
    else known += f.expected;
  }
  return {
    lines: figures,
    gross_cents: safeNumber(gross, 'gross_cents'),
    refunded_cents: safeNumber(refunded, 'refunded_cents'),
    net_cents: safeNumber(gross - refunded, 'net_cents'),
    expected: unknown ? null : known,
    known_expected: known,
  };
}
