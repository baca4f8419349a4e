/**
 * A store domain must be a registrable domain or a name below one: a public suffix of the Public Suffix List
 * (`com.br`, `github.io`, `blogspot.com`; ICANN and private sections) is shared by strangers, so declaring it would
 * put every site under it on the store (its products' pages, its photos, its redirects). The list is the one `tldts`
 * ships, kept current by its maintainers.
 *
 * A top-level label the list does not know (`test`, `localhost`, `internal`) is itself the suffix, by the list's own
 * default rule `*`: `shop.test` is registrable, a bare `test` is not (docs/adr/0067-public-suffix-domains.md).
 */
import { getPublicSuffix } from 'tldts';
import { fieldError, type FieldError } from '../contract/problems.js';

// The schema's pattern judges the shape of a name; tldts is asked only which suffix the name ends with (its own
// hostname check would turn a malformed name such as `a..shop.test` into "no domain", which is not this rule).
const OPTIONS = { allowPrivateDomains: true, validateHostname: false } as const;

/** True when `domain` is itself a public suffix (`com.br`, `github.io`, `foo.ck`), not a name under one. */
export function isPublicSuffix(domain: string): boolean {
  return getPublicSuffix(domain, OPTIONS) === domain;
}

/**
 * `public_suffix` for each entry of a store's domain list (`domains`, `image_hosts`) that is a public suffix, at
 * its index. Entries that are not strings, or already refused at `field[i]`, are left to the schema's errors.
 */
export function publicSuffixErrors(field: string, list: unknown, refused: ReadonlySet<string>): FieldError[] {
  if (!Array.isArray(list)) return [];
  const errors: FieldError[] = [];
  list.forEach((d: unknown, i) => {
    const at = `${field}[${i}]`;
    if (typeof d !== 'string' || refused.has(at) || !isPublicSuffix(d)) return;
    errors.push(
      fieldError(
        at,
        'public_suffix',
        `${at}: ${d} is a public suffix (shared by unrelated sites); declare your own domain under it, such as loja.${d}.`,
      ),
    );
  });
  return errors;
}
