/**
 * Commission rules and the contract's arithmetic. Integer cents only; BigInt wherever a product of two
 * contract-bounded values can pass 2^53. Rates are carried as integer hundredths of a percent.
 */

export type Commission = { type: 'percentage'; rate: number } | { type: 'fixed'; amount_cents: number } | null;

export type CommissionSource = 'product' | 'store' | null;

export interface EffectiveCommission {
  commission: Commission;
  commission_source: CommissionSource;
}

/** Product rule wins; null or absent on the product inherits the store's default; neither → unknown. */
export function effectiveCommission(
  productRule: Commission | undefined,
  storeDefault: Commission | undefined,
): EffectiveCommission {
  if (productRule !== undefined && productRule !== null)
    return { commission: productRule, commission_source: 'product' };
  if (storeDefault !== undefined && storeDefault !== null)
    return { commission: storeDefault, commission_source: 'store' };
  return { commission: null, commission_source: null };
}

/** `rate` (0..100, multiple of 0.01) as an exact integer of hundredths of a percent. */
export function rateHundredths(rate: number): bigint {
  return BigInt(Math.round(rate * 100));
}

/** round_half_up(numerator / denominator) for non-negative integers. */
export function divRoundHalfUp(numerator: bigint, denominator: bigint): bigint {
  if (denominator <= 0n) throw new RangeError('denominator must be positive');
  if (numerator < 0n) throw new RangeError('numerator must be non-negative');
  return (numerator * 2n + denominator) / (denominator * 2n);
}

/**
 * Expected commission of one unit at `priceCents`: percentage → price × rate / 100 rounded half a cent up;
 * fixed → amount; no rule → null.
 */
export function expectedUnitCommission(rule: Commission, priceCents: number): number | null {
  if (rule === null) return null;
  if (rule.type === 'fixed') return rule.amount_cents;
  return Number(divRoundHalfUp(BigInt(priceCents) * rateHundredths(rule.rate), 10000n));
}
