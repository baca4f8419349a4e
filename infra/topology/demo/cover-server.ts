/**
 * The demo's cover server: HTTPS on loopback with a throw-away certificate authority, serving one drawn 800 × 800 JPEG
 * per product at `/covers/{name}.jpg`. The demo's service trusts that authority and maps the store's host name to
 * 127.0.0.1 through the cover check's test-only settings, so the covers pass the same check a real store's do.
 */
import https from 'node:https';
import type net from 'node:net';
import sharp from 'sharp';
import { makeThrowawayCertificates } from './certificates.js';

export interface CoverServer {
  /** PEM of the authority that signed the server's certificate. */
  ca: string;
  port: number;
  /** `https://{host}:{port}/covers/{name}.jpg`: `host` must be one the certificate names. */
  url(host: string, name: string): string;
  close(): Promise<void>;
}

/** A cover: a plain shirt on a coloured square, drawn at 800 × 800 (the check asks for 500 px on the shorter side). */
async function drawCover(colour: string): Promise<Buffer> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="800" height="800">
<rect width="800" height="800" fill="${colour}"/>
<path d="M250 200 L330 160 Q400 210 470 160 L550 200 L620 300 L550 340 L550 640 L250 640 L250 340 L180 300 Z" fill="#fff" opacity="0.9"/>
</svg>`;
  return sharp(Buffer.from(svg)).jpeg({ quality: 85 }).toBuffer();
}

/** Serves `covers` (name → colour) for the host names `hosts`, on 127.0.0.1 at a port the kernel picks. */
export async function startCoverServer(hosts: readonly string[], covers: Record<string, string>): Promise<CoverServer> {
  const { caCert, key, cert } = makeThrowawayCertificates(hosts);
  const images = new Map<string, Buffer>();
  for (const [name, colour] of Object.entries(covers)) images.set(`/covers/${name}.jpg`, await drawCover(colour));
  const server = https.createServer({ key, cert }, (req, res) => {
    const image = images.get((req.url ?? '/').split('?')[0]);
    if (!image) return void res.writeHead(404, { 'content-type': 'text/plain' }).end('no such cover\n');
    res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': image.length }).end(image);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as net.AddressInfo;
  return {
    ca: caCert,
    port,
    url: (host, name) => `https://${host}:${port}/covers/${encodeURIComponent(name)}.jpg`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
