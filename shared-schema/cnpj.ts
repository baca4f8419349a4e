/** CNPJ check digits (DECISIONS.md). Placeholder until the full module lands; same exported names. */
export function normalizeCnpj(raw: string): string {
  return raw.replace(/[./-]/g, '').toUpperCase();
}

export function isValidCnpj(cnpj: string): boolean {
  if (!/^[0-9A-Z]{12}[0-9]{2}$/.test(cnpj)) return false;
  if (/^(.)\1{13}$/.test(cnpj)) return false;
  const values = [...cnpj].map((c) => c.charCodeAt(0) - 48);
  const digit = (weights: number[], n: number) => {
    let sum = 0;
    for (let i = 0; i < n; i++) sum += values[i]! * weights[i]!;
    const r = sum % 11;
    return r < 2 ? 0 : 11 - r;
  };
  const d1 = digit([5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2], 12);
  const d2 = digit([6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2], 13);
  return values[12] === d1 && values[13] === d2;
}
