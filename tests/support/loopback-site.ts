/**
 * A store's site on loopback for the browser tests: HTTPS (as `product_url` and covers must be) under a throw-away
 * certificate for `shop.test` and `cdn.shop.test` (the browser maps both names to 127.0.0.1), serving the test
 * images under `/img/` (`/img/800x600.jpg`), what `page` answers, and 404 for anything else.
 */
import https from 'node:https';
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import { makeThrowawayCertificates } from '../../infra/topology/demo/certificates.js';
import { makeTestImages } from './test-images.js';

export const SITE_NAMES = ['shop.test', 'cdn.shop.test'] as const;

export interface LoopbackSite {
  port: number;
  close(): Promise<void>;
}

/** `page` answers a request it recognises (returning true) or leaves it (false: 404). */
export async function startLoopbackSite(
  page: (url: URL, res: http.ServerResponse) => boolean = () => false,
): Promise<LoopbackSite> {
  const certs = makeThrowawayCertificates(SITE_NAMES);
  const images = await makeTestImages();
  const server = https.createServer({ key: certs.key, cert: certs.cert }, (req, res) => {
    const url = new URL(req.url ?? '/', 'https://shop.test');
    const image = /^\/img\/(.+)$/.exec(url.pathname);
    if (image && images[image[1]]) res.writeHead(200, { 'Content-Type': 'image/jpeg' }).end(images[image[1]]);
    else if (!page(url, res)) res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
