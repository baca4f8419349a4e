/**
 * A local HTTPS receiver of webhook deliveries, on loopback only, with a throw-away CA (infra/topology/demo/certificates.ts):
 * it keeps every request (headers and body) and answers the statuses a test queues, then 200.
 */
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { makeThrowawayCertificates } from '../../infra/topology/demo/certificates.js';

export const RECEIVER_HOST = 'hooks.partner.test';

export interface Received {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export interface HttpsReceiver {
  /** `https://hooks.partner.test:{port}{path}` */
  url(path: string): string;
  /** Environment for a test service that reaches this receiver (and nothing else) through the cover's test settings. */
  env(options?: { allowPrivate?: boolean }): Record<string, string>;
  received: Received[];
  /** The next answers, in order (then 200). */
  answer(...statuses: number[]): void;
  close(): Promise<void>;
}

export async function startHttpsReceiver(): Promise<HttpsReceiver> {
  const { caCert, key, cert } = makeThrowawayCertificates([RECEIVER_HOST]);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'receiver-ca-'));
  const caFile = path.join(dir, 'ca.pem');
  fs.writeFileSync(caFile, caCert);
  const received: Received[] = [];
  const statuses: number[] = [];
  const server = https.createServer({ key, cert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(statuses.shift() ?? 200, { 'content-type': 'text/plain' });
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: (p) => `https://${RECEIVER_HOST}:${port}${p}`,
    env: (options = {}) => ({
      COVER_FETCH_HOSTS: `${RECEIVER_HOST}=127.0.0.1`,
      COVER_FETCH_CA_FILE: caFile,
      ...(options.allowPrivate === false ? {} : { COVER_FETCH_ALLOW_PRIVATE: '1' }),
    }),
    received,
    answer: (...s) => statuses.push(...s),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
