/**
 * The rules partners are promised about how their offers are shown in one search answer (SHOPPER.md), pure:
 *
 * - Price sanity (rule 5): among the offers of one product with the same `condition`, an offer whose `price_cents` is
 *   below half of the median `price_cents` of the OTHER offers of that product and condition is left out, when at
 *   least two other offers are there to compare with. The median of an even count is the mean of its two middle
 *   values; exactly half is not below half. Every offer is judged against the same set (the answer's offers before
 *   any is left out), the same way for every store.
 * - Condition: only `new` offers are in `offers`; `used` and `refurbished` ones are `alternatives` with their label.
 */
export type Condition = 'new' | 'used' | 'refurbished';

export const CONDITION_LABELS: Record<Condition, string | null> = {
  new: null,
  used: 'Usado',
  refurbished: 'Recondicionado',
};

export interface PricedOffer {
  condition: Condition;
  price_cents: number;
}

/**
 * Whether `price` is below half of the median of `others` (at least two of them). Exact: compares 4·price with twice
 * the median (the sum of the two middle values, or twice the middle one), in BigInt.
 */
export function farBelow(price: number, others: readonly number[]): boolean {
  if (others.length < 2) return false;
  const sorted = [...others].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const twiceMedian =
    sorted.length % 2 === 1 ? 2n * BigInt(sorted[mid]) : BigInt(sorted[mid - 1]) + BigInt(sorted[mid]);
  return 4n * BigInt(price) < twiceMedian;
}

/** The offers of one product that rule 5 keeps (input order kept). */
export function priceSanity<T extends PricedOffer>(offers: readonly T[]): T[] {
  return offers.filter((o, i) => {
    const others = offers.filter((p, j) => j !== i && p.condition === o.condition).map((p) => p.price_cents);
    return !farBelow(o.price_cents, others);
  });
}

/** Rule 5, then the condition split: `offers` (new) and `alternatives` (used, refurbished), input order kept. */
export function applyOfferRules<T extends PricedOffer>(
  productOffers: readonly T[],
): { offers: T[]; alternatives: T[] } {
  const kept = priceSanity(productOffers);
  return { offers: kept.filter((o) => o.condition === 'new'), alternatives: kept.filter((o) => o.condition !== 'new') };
}
