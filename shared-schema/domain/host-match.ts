/**
 * "On a domain of the store": the one rule for matching a URL's host against a store's `domains` and
 * `image_hosts`. A host matches a listed domain when it IS that domain or a subdomain of it
 * (`img.shop.com.br` is on `shop.com.br`; `evilshop.com.br` and `shop.com.br.evil.io` are not).
 * Comparison ignores case and one trailing dot. An IP literal never matches (a Domain cannot be one).
 * Pure: used by the write-side validation (`domain_not_declared`, `image_host_not_declared`), by the product state
 * (`domain_not_approved`) and by the cover check before it connects, so all three answer the same.
 */
export function hostMatchesDomains(host: string, domains: readonly string[]): boolean {
  return matchingDomains(host, domains).length > 0;
}

/** The listed domains (as listed) that `host` is on: the domain itself or a parent of it. */
export function matchingDomains(host: string, domains: readonly string[]): string[] {
  const h = normalizeHost(host);
  if (h === '' || h.startsWith('[') || /^[0-9.]+$/.test(h)) return [];
  return domains.filter((domain) => {
    const d = normalizeHost(domain);
    return d !== '' && (h === d || h.endsWith(`.${d}`));
  });
}

/** The last address parsed: the projectors of one event ask for the host of the same `product_url` in turn. */
let lastHost: { url: string; host: string } | null = null;

/** The host of a URL (`''` when it is not a URL). */
export function urlHost(url: string): string {
  if (lastHost !== null && lastHost.url === url) return lastHost.host;
  let host: string;
  try {
    host = new URL(url).hostname;
  } catch {
    host = '';
  }
  lastHost = { url, host };
  return host;
}

/** Lower-case and drop one trailing dot (`Shop.Test.` → `shop.test`). */
export function normalizeHost(host: string): string {
  const lower = host.trim().toLowerCase();
  return lower.endsWith('.') ? lower.slice(0, -1) : lower;
}
