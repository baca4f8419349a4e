// The cover check's test-only settings, read from the environment and refused in production.
import fs from 'node:fs';
import net from 'node:net';
import tls from 'node:tls';
import { normalizeHost } from '../../../shared-schema/domain/host-match.js';
import type { CoverFetcherOptions } from './cover-fetcher.js';

/**
 * `COVER_FETCH_HOSTS="shop.test=127.0.0.1,cdn.shop.test=::1"` → `hostMap` (used instead of DNS; still checked);
 * `COVER_FETCH_ALLOW_PRIVATE=1` → `allowPrivate` (`0` or empty: off);
 * `COVER_FETCH_CA_FILE=/path/ca.pem` → `ca`: Node's root CAs plus the PEM certificates of that file (what
 * `NODE_EXTRA_CA_CERTS` does, for a service started inside an already running process, such as a test).
 * Throws a clear error for a malformed value, and when any is set (to anything) while `NODE_ENV=production`.
 */
export function coverFetcherOptionsFromEnv(env: NodeJS.ProcessEnv): CoverFetcherOptions {
  const hosts = (env.COVER_FETCH_HOSTS ?? '').trim();
  const allowPrivate = (env.COVER_FETCH_ALLOW_PRIVATE ?? '').trim();
  const caFile = (env.COVER_FETCH_CA_FILE ?? '').trim();
  if (env.NODE_ENV === 'production') {
    const set = [
      hosts !== '' && 'COVER_FETCH_HOSTS',
      allowPrivate !== '' && 'COVER_FETCH_ALLOW_PRIVATE',
      caFile !== '' && 'COVER_FETCH_CA_FILE',
    ].filter(Boolean);
    if (set.length > 0) {
      throw new Error(
        `${set.join(' and ')} must not be set when NODE_ENV=production: they exist for tests and let the cover check reach addresses it must refuse`,
      );
    }
  }
  if (allowPrivate !== '' && allowPrivate !== '0' && allowPrivate !== '1') {
    throw new Error(`COVER_FETCH_ALLOW_PRIVATE must be 1 or 0, not "${allowPrivate}"`);
  }
  const options: CoverFetcherOptions = {};
  if (hosts !== '') options.hostMap = parseHostMap(hosts);
  if (allowPrivate === '1') options.allowPrivate = true;
  if (caFile !== '') options.ca = [...tls.rootCertificates, readCaFile(caFile)];
  return options;
}

function readCaFile(file: string): string {
  let pem: string;
  try {
    pem = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new Error(`COVER_FETCH_CA_FILE: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'})`, {
      cause: err,
    });
  }
  if (!pem.includes('-----BEGIN CERTIFICATE-----'))
    throw new Error(`COVER_FETCH_CA_FILE: ${file} holds no PEM certificate`);
  return pem;
}

/** `name=address,name=address` → a map; names are host names, addresses literal IPv4/IPv6. */
export function parseHostMap(text: string): Record<string, string> {
  const map: Record<string, string> = {};
  for (const entry of text
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '')) {
    const eq = entry.indexOf('=');
    const name = normalizeHost(eq < 0 ? entry : entry.slice(0, eq));
    const address = eq < 0 ? '' : entry.slice(eq + 1).trim();
    if (!/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/.test(name)) {
      throw new Error(`COVER_FETCH_HOSTS: "${entry}" must be name=address with a host name`);
    }
    if (net.isIP(address) === 0) throw new Error(`COVER_FETCH_HOSTS: "${entry}" must map ${name} to an IP address`);
    if (Object.hasOwn(map, name)) throw new Error(`COVER_FETCH_HOSTS: ${name} is listed twice`);
    map[name] = address;
  }
  return map;
}
