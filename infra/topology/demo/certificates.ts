// A throw-away certificate authority and one server certificate, made with `openssl` when needed: for the cover
// server of `make demo` and of the tests, whose cover check is told to trust that authority (COVER_FETCH_CA_FILE).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface ThrowawayCertificates {
  /** PEM of the test CA: pass it as `ca` to trust the server certificate. */
  caCert: string;
  key: string;
  cert: string;
}

/** A CA and a server certificate whose SANs are exactly `names` (DNS names) and `ips`. */
export function makeThrowawayCertificates(
  names: readonly string[],
  ips: readonly string[] = [],
): ThrowawayCertificates {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
  } catch {
    throw new Error('a throw-away certificate authority needs the `openssl` command line (apt-get install openssl)');
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cover-ca-'));
  const file = (name: string) => path.join(dir, name);
  // A command line of plain words, then arguments that may hold anything (a name).
  const openssl = (words: string, ...args: string[]) =>
    execFileSync('openssl', [...words.split(' '), ...args], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  try {
    fs.writeFileSync(file('ca.cnf'), CA_CONFIG);
    fs.writeFileSync(file('server.ext'), serverExtensions(names, ips));
    // The authority: self-signed, with the extensions of `ca.cnf`.
    openssl(`req -x509 ${EC_KEY} ${DAYS} -keyout ca.key -out ca.pem -config ca.cnf -extensions v3`);
    // The server's key and request, then its certificate signed by the authority with `server.ext`.
    openssl(`req -new ${EC_KEY} -keyout server.key -out server.csr -subj`, `/CN=${names[0] ?? 'localhost'}`);
    openssl(
      `x509 -req -in server.csr -CA ca.pem -CAkey ca.key -set_serial 1 ${DAYS} -extfile server.ext -out server.pem`,
    );
    return {
      caCert: fs.readFileSync(file('ca.pem'), 'utf8'),
      key: fs.readFileSync(file('server.key'), 'utf8'),
      cert: fs.readFileSync(file('server.pem'), 'utf8'),
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** A P-256 key, unencrypted. */
const EC_KEY = '-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes';
/** Throw-away: two days, enough for a demo or a test run. */
const DAYS = '-days 2';

const CA_CONFIG = [
  '[req]',
  'distinguished_name = dn',
  'prompt = no',
  '[dn]',
  'CN = Partner Commerce throw-away CA (demo and tests)',
  '[v3]',
  'basicConstraints = critical,CA:TRUE',
  'keyUsage = critical,keyCertSign,cRLSign',
  'subjectKeyIdentifier = hash',
].join('\n');

/** The server certificate's extensions: its names, and a server's uses only. */
function serverExtensions(names: readonly string[], ips: readonly string[]): string {
  const sans = [...names.map((n) => `DNS:${n}`), ...ips.map((ip) => `IP:${ip}`)].join(',');
  return [
    `subjectAltName = ${sans}`,
    'basicConstraints = CA:FALSE',
    'keyUsage = critical,digitalSignature',
    'extendedKeyUsage = serverAuth',
    'authorityKeyIdentifier = keyid',
    'subjectKeyIdentifier = hash',
  ].join('\n');
}
