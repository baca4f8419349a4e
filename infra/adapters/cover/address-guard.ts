// Which IP addresses the cover check may connect to. Pure: parses text, opens nothing.
//
// IPv4: refused when inside any range below (IANA special-purpose registry, RFC 6890 and successors).
// IPv6: allowed only inside global unicast 2000::/3, minus the special ranges below; forms that carry an
// IPv4 address (mapped ::ffff:0:0/96, compatible ::/96, NAT64 64:ff9b::/96, 6to4 2002::/16) are judged by
// the IPv4 address they carry. Anything that does not parse, or carries a zone (`fe80::1%eth0`), is refused.

type Range4 = readonly [base: number, prefix: number, name: string];

const V4_REFUSED: readonly Range4[] = [
  [ip4('0.0.0.0'), 8, 'this network'],
  [ip4('10.0.0.0'), 8, 'private'],
  [ip4('100.64.0.0'), 10, 'carrier-grade NAT'],
  [ip4('127.0.0.0'), 8, 'loopback'],
  [ip4('169.254.0.0'), 16, 'link-local (cloud metadata)'],
  [ip4('172.16.0.0'), 12, 'private'],
  [ip4('192.0.0.0'), 24, 'IETF protocol assignments'],
  [ip4('192.0.2.0'), 24, 'documentation'],
  [ip4('192.88.99.0'), 24, '6to4 relay anycast'],
  [ip4('192.168.0.0'), 16, 'private'],
  [ip4('198.18.0.0'), 15, 'benchmarking'],
  [ip4('198.51.100.0'), 24, 'documentation'],
  [ip4('203.0.113.0'), 24, 'documentation'],
  [ip4('224.0.0.0'), 4, 'multicast'],
  [ip4('240.0.0.0'), 4, 'reserved / broadcast'],
];

type Range6 = readonly [base: bigint, prefix: number, name: string];

// Inside 2000::/3 but not reachable on the public internet (or, for Teredo, tunnelling to anywhere).
const V6_REFUSED_IN_GLOBAL: readonly Range6[] = [
  [ip6('2001::'), 23, 'IETF protocol assignments (Teredo, benchmarking, ORCHID)'],
  [ip6('2001:db8::'), 32, 'documentation'],
  [ip6('3fff::'), 20, 'documentation'],
];

const GLOBAL_UNICAST: Range6 = [ip6('2000::'), 3, 'global unicast'];
const MAPPED: Range6 = [ip6('::ffff:0:0'), 96, 'IPv4-mapped'];
const COMPATIBLE: Range6 = [ip6('::'), 96, 'IPv4-compatible'];
const NAT64: Range6 = [ip6('64:ff9b::'), 96, 'NAT64'];
const SIX_TO_FOUR: Range6 = [ip6('2002::'), 16, '6to4'];

/** True when `ip` is a literal IPv4/IPv6 address that is reachable on the public internet. */
export function isPublicAddress(ip: string): boolean {
  return addressRefusal(ip) === null;
}

/** Why `ip` is refused (a short range name), or null when it is public. */
export function addressRefusal(ip: string): string | null {
  const v4 = parseIPv4(ip);
  if (v4 !== null) return refusal4(v4);
  const v6 = parseIPv6(ip);
  if (v6 === null) return 'not an IP address';
  return refusal6(v6);
}

function refusal4(value: number): string | null {
  for (const [base, prefix, name] of V4_REFUSED) {
    if (inRange4(value, base, prefix)) return name;
  }
  return null;
}

function refusal6(value: bigint): string | null {
  if (value === 0n) return 'unspecified';
  if (value === 1n) return 'loopback';
  for (const range of [MAPPED, COMPATIBLE, NAT64]) {
    if (inRange6(value, range)) return embedded(range[2], Number(value & 0xffffffffn));
  }
  if (inRange6(value, SIX_TO_FOUR)) return embedded('6to4', Number((value >> 80n) & 0xffffffffn));
  if (!inRange6(value, GLOBAL_UNICAST)) return 'not global unicast (loopback, link-local, unique-local, multicast, …)';
  for (const range of V6_REFUSED_IN_GLOBAL) {
    if (inRange6(value, range)) return range[2];
  }
  return null;
}

function embedded(form: string, v4: number): string | null {
  const inner = refusal4(v4);
  return inner === null ? null : `${form} of ${inner}`;
}

function inRange4(value: number, base: number, prefix: number): boolean {
  const mask = prefix === 0 ? 0 : (~0 << (32 - prefix)) >>> 0;
  return (value & mask) >>> 0 === (base & mask) >>> 0;
}

function inRange6(value: bigint, [base, prefix]: Range6): boolean {
  const shift = BigInt(128 - prefix);
  return value >> shift === base >> shift;
}

/** Strict dotted quad: four decimal parts 0–255, no leading zeros (no octal or hex tricks). */
export function parseIPv4(text: string): number | null {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  let value = 0;
  for (const part of parts) {
    if (!/^(0|[1-9][0-9]{0,2})$/.test(part)) return null;
    const n = Number(part);
    if (n > 255) return null;
    value = value * 256 + n;
  }
  return value;
}

/** RFC 4291 text form, with `::` and a trailing dotted quad; no zone, no brackets. Returns the 128-bit value. */
export function parseIPv6(text: string): bigint | null {
  if (text.includes('%') || text.length > 45) return null;
  let head = text;
  const lastColon = text.lastIndexOf(':');
  if (lastColon >= 0 && text.slice(lastColon + 1).includes('.')) {
    // A trailing dotted quad stands for the last two groups: rewrite it as hex and parse as usual.
    const v4 = parseIPv4(text.slice(lastColon + 1));
    if (v4 === null) return null;
    head = `${text.slice(0, lastColon + 1)}${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`;
  }
  const halves = head.split('::');
  if (halves.length > 2) return null;
  const left = groups(halves[0]);
  const right = halves.length === 2 ? groups(halves[1]) : [];
  if (left === null || right === null) return null;
  const explicit = left.length + right.length;
  if (halves.length === 2 ? explicit > 7 : explicit !== 8) return null;
  const all = [...left, ...new Array<number>(8 - explicit).fill(0), ...right];
  return all.reduce((acc, g) => (acc << 16n) | BigInt(g), 0n);
}

function groups(text: string): number[] | null {
  if (text === '') return [];
  const out: number[] = [];
  for (const g of text.split(':')) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return null;
    out.push(parseInt(g, 16));
  }
  return out;
}

function ip4(text: string): number {
  const v = parseIPv4(text);
  if (v === null) throw new Error(`bad IPv4 constant ${text}`);
  return v;
}

function ip6(text: string): bigint {
  const v = parseIPv6(text);
  if (v === null) throw new Error(`bad IPv6 constant ${text}`);
  return v;
}
