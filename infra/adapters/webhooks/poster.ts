/**
 * Posts webhook deliveries over HTTPS, with the cover check's address rule (infra/adapters/cover/address-guard.ts): the host
 * is resolved once, every address it resolves to must be public (loopback, private, link-local and metadata ranges
 * are refused), and the connection goes to the address that was checked (TLS still verifies the host name).
 * Redirects are not followed (a 3xx is a failed delivery); the answer's body is not read beyond a small bound.
 *
 * It takes the cover check's test settings (COVER_FETCH_HOSTS, COVER_FETCH_ALLOW_PRIVATE, COVER_FETCH_CA_FILE), which
 * are refused in production: tests reach a local HTTPS receiver through them.
 */
import dns from 'node:dns';
import https from 'node:https';
import net from 'node:net';
import { normalizeHost } from '../../../shared-schema/domain/host-match.js';
import type { WebhookPoster } from '../../../shared-schema/ports/webhook-poster.js';
import { addressRefusal } from '../cover/address-guard.js';
import { isSpecialUseName, type CoverFetcherOptions } from '../cover/cover-fetcher.js';

export const WEBHOOK_TIMEOUT_MS = 10_000;
const ANSWER_BYTES_READ = 64 * 1024;

export function createWebhookPoster(
  options: Pick<CoverFetcherOptions, 'hostMap' | 'allowPrivate' | 'ca'> & { timeoutMs?: number } = {},
): WebhookPoster {
  const hostMap = new Map(Object.entries(options.hostMap ?? {}).map(([name, ip]) => [normalizeHost(name), ip]));
  const timeoutMs = options.timeoutMs ?? WEBHOOK_TIMEOUT_MS;

  async function addressesOf(host: string): Promise<string[]> {
    const mapped = hostMap.get(host);
    if (mapped !== undefined) return [mapped];
    if (net.isIP(host) !== 0) return [host];
    // Never a DNS query for a name that cannot be on the public internet (shop.test, localhost…).
    if (isSpecialUseName(host)) throw new Error(`the host ${host} is a special-use name`);
    const answers = await dns.promises.lookup(host, { all: true, verbatim: true });
    return answers.map((a) => a.address);
  }

  return async ({ url, headers, body }) => {
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      return { error: 'the URL is not valid' };
    }
    if (target.protocol !== 'https:') return { error: 'the URL is not HTTPS' };
    const host = normalizeHost(target.hostname.replace(/^\[|\]$/g, ''));
    let addresses: string[];
    try {
      addresses = await addressesOf(host);
    } catch (err) {
      return { error: `the host did not resolve (${(err as Error).message})` };
    }
    if (addresses.length === 0) return { error: 'the host did not resolve' };
    if (!options.allowPrivate) {
      for (const address of addresses) {
        const why = net.isIP(address) === 0 ? 'not an address' : addressRefusal(address);
        if (why !== null) return { error: `the host resolves to an address webhooks may not reach (${why})` };
      }
    }
    const payload = Buffer.from(body, 'utf8');
    return new Promise((resolve) => {
      const req = https.request(
        {
          host: addresses[0],
          port: target.port === '' ? 443 : Number(target.port),
          path: `${target.pathname}${target.search}`,
          method: 'POST',
          servername: net.isIP(host) === 0 ? host : '',
          headers: {
            ...headers,
            host: target.host,
            'content-length': String(payload.length),
            'user-agent': 'partner-commerce-webhooks/1',
          },
          agent: false,
          ...(options.ca !== undefined ? { ca: options.ca } : {}),
        },
        (res) => {
          let read = 0;
          res.on('data', (chunk: Buffer) => {
            read += chunk.length;
            if (read > ANSWER_BYTES_READ) res.destroy();
          });
          res.on('error', () => undefined);
          resolve({ status: res.statusCode ?? 0 });
          res.resume();
        },
      );
      // The whole exchange, not only each silence, is bounded: a receiver that trickles its answer is cut off too.
      const deadline = setTimeout(() => req.destroy(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      req.on('close', () => clearTimeout(deadline));
      req.on('error', (err) => resolve({ error: `no answer (${err.message})` }));
      req.end(payload);
    });
  };
}
