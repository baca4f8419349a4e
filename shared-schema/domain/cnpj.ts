/**
 * CNPJ (company registration number) as DECISIONS.md "Stores" fixes it: compared without punctuation and
 * upper-cased; check digits by the modulo-11 rule of IN RFB 2.229/2024, each character worth its ASCII code
 * minus 48 after upper-casing (so digits are 0–9 and `A`–`Z` are 17–42), which makes the numeric and the
 * alphanumeric CNPJ one rule.
 */

const WEIGHTS_FIRST = [5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2] as const;
const WEIGHTS_SECOND = [6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2] as const;

/** Removes the punctuation `.`, `/`, `-` and upper-cases. Does not validate. */
export function normalizeCnpj(raw: string): string {
  return raw.replace(/[./-]/g, '').toUpperCase();
}

function checkDigit(chars: string, weights: readonly number[]): number {
  let sum = 0;
  for (let i = 0; i < weights.length; i++) sum += (chars.charCodeAt(i) - 48) * weights[i];
  const remainder = sum % 11;
  return remainder < 2 ? 0 : 11 - remainder;
}

/**
 * True when `normalized` (see normalizeCnpj) is 14 characters — 12 of `0-9A-Z` then 2 digits — that are not
 * all the same character and whose last two digits are the check digits of the first twelve.
 */
export function isValidCnpj(normalized: string): boolean {
  const cnpj = normalized.toUpperCase();
  if (!/^[0-9A-Z]{12}[0-9]{2}$/.test(cnpj)) return false;
  if (/^(.)\1{13}$/.test(cnpj)) return false;
  const first = checkDigit(cnpj, WEIGHTS_FIRST);
  const second = checkDigit(cnpj.slice(0, 12) + String(first), WEIGHTS_SECOND);
  return cnpj.endsWith(`${first}${second}`);
}
