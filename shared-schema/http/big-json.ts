/**
 * JSON text for answers that hold BigCents (shared-schema/domain/order-math.ts): a cents figure is a JSON number while it
 * is a safe integer and its exact decimal text beyond 2^53. The contract types those fields as integers, so the
 * text form must reach the wire as a bare integer. Node 20 has no `JSON.rawJSON`: the figures are swapped for a
 * marker during `JSON.stringify` and the digits spliced in afterwards.
 */
import { randomBytes } from 'node:crypto';

/** Fields whose string value, when an integer's digits, is an exact cents figure (BigCents, or a signed one). */
export const BIG_CENTS_FIELDS: ReadonlySet<string> = new Set([
  'expected_commission_cents',
  'known_expected_commission_cents',
  'gross_cents',
  'refunded_cents',
  'net_cents',
  // the movement statement's signed figures (read-models/ledger.ts)
  'net_delta_cents',
  'known_expected_commission_delta_cents',
  'expected_commission_delta_cents',
  'net_balance_cents',
  'known_expected_commission_balance_cents',
]);

// A marker no value of ours can hold (a random nonce per process; identifiers of the contract have no `~`).
const MARK = `~bigcents${randomBytes(6).toString('hex')}~`;
// Signed: the statement's deltas and balances may be negative (a stored BigCents never is).
const DIGITS = /^(0|-?[1-9][0-9]*)$/;
const SPLICE = new RegExp(`"${MARK}(0|-?[1-9][0-9]*)"`, 'g');

/** JSON text of `value` with every BigCents text figure written as a bare JSON integer. */
export function stringifyBigCents(value: unknown): string {
  let marked = false;
  const text = JSON.stringify(value, (key, v: unknown) => {
    if (typeof v === 'string' && BIG_CENTS_FIELDS.has(key) && DIGITS.test(v)) {
      marked = true;
      return MARK + v;
    }
    return v;
  });
  return marked ? text.replace(SPLICE, '$1') : text;
}

export const JSON_TYPE = 'application/json; charset=utf-8';
