/**
 * Environment for a test service whose cover check reaches the local HTTPS image servers, and nothing else:
 * every test host name is mapped (COVER_FETCH_HOSTS), so no name is ever looked up in the DNS.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ImageServers } from './https-image-server.js';

export interface CoverEnv {
  env: Record<string, string>;
  cleanup(): void;
}

export function coverTestEnv(
  servers: ImageServers,
  options: { allowPrivate?: boolean; hostMap?: Record<string, string>; extra?: Record<string, string> } = {},
): CoverEnv {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cover-ca-file-'));
  const caFile = path.join(dir, 'ca.pem');
  fs.writeFileSync(caFile, servers.ca);
  const hostMap = { ...servers.hostMap, ...(options.hostMap ?? {}) };
  const env: Record<string, string> = {
    COVER_CHECK: 'on',
    COVER_FETCH_HOSTS: Object.entries(hostMap)
      .map(([name, address]) => `${name}=${address}`)
      .join(','),
    COVER_FETCH_CA_FILE: caFile,
    COVER_RECHECK_SCAN_MS: '100',
    ...(options.allowPrivate === false ? {} : { COVER_FETCH_ALLOW_PRIVATE: '1' }),
    ...(options.extra ?? {}),
  };
  return { env, cleanup: () => fs.rmSync(dir, { recursive: true, force: true }) };
}
