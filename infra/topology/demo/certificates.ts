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
  const openssl = (args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  const ecKey = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  try {
    fs.writeFileSync(
      file('ca.cnf'),
      [
        '[req]',
        'distinguished_name = dn',
        'prompt = no',
        '[dn]',
        'CN = Partner Commerce throw-away CA (demo and tests)',
        '[v3]',
        'basicConstraints = critical,CA:TRUE',
        'keyUsage = critical,keyCertSign,cRLSign',
        'subjectKeyIdentifier = hash',
      ].join('\n'),
    );
    const sans = [...names.map((n) => `DNS:${n}`), ...ips.map((ip) => `IP:${ip}`)].join(',');
    fs.writeFileSync(
      file('server.ext'),
      [
        `subjectAltName = ${sans}`,
        'basicConstraints = CA:FALSE',
        'keyUsage = critical,digitalSignature',
        'extendedKeyUsage = serverAuth',
        'authorityKeyIdentifier = keyid',
        'subjectKeyIdentifier = hash',
      ].join('\n'),
    );
    openssl([
      'req',
      '-x509',
      ...ecKey,
      '-keyout',
      'ca.key',
      '-out',
      'ca.pem',
      '-days',
      '2',
      '-config',
      'ca.cnf',
      '-extensions',
      'v3',
    ]);
    openssl([
      'req',
      '-new',
      ...ecKey,
      '-keyout',
      'server.key',
      '-out',
      'server.csr',
      '-subj',
      `/CN=${names[0] ?? 'localhost'}`,
    ]);
    openssl([
      'x509',
      '-req',
      '-in',
      'server.csr',
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca.key',
      '-set_serial',
      '1',
      '-days',
      '2',
      '-extfile',
      'server.ext',
      '-out',
      'server.pem',
    ]);
    return {
      caCert: fs.readFileSync(file('ca.pem'), 'utf8'),
      key: fs.readFileSync(file('server.key'), 'utf8'),
      cert: fs.readFileSync(file('server.pem'), 'utf8'),
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
