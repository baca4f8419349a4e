// Local HTTPS servers for the cover check, on loopback only, each counting the TCP connections it accepts
// so a test can say "no connection reached this listener".
//
//   main  127.0.0.1  every route below          alt   127.0.0.2  same routes (when the OS allows binding it)
//   v6    ::1        same routes (when IPv6)    evil  127.0.0.1  same routes, another port: the "outside" host
//   stall 127.0.0.1  plain TCP that accepts and never answers (connect-timeout case)
//
// Routes: /img/{800x600,499x800,500x500}.{jpg,png,webp}, /img/600x600.gif, /text-as-jpeg (text labelled
// image/jpeg), /jpeg-as-text (a JPEG labelled text/plain), /png-garbage (PNG signature, then junk), /huge.png
// (IHDR claims 60000×60000), /status/404, /status/500, /redirect/{inside,relative,outside,http,loop,to-alt,
// no-location}, /redirect/chain/N (N ≥ 1 redirects, the last to the 800×600 JPEG), /endless (a body that never ends),
// /trickle (one byte every 50 ms, forever), /hang (never answers), /oversized and /oversized-chunked
// (OVERSIZED_BYTES, with and without Content-Length), /switch/{name} (answers what `setSwitch(name, …)` says: an
// image of /img/ or `status:NNN`; 404 until set), /delay/{ms}/{route} (any route above, answered `ms` later),
// /gate/{name}/{route} (any route above, held until the test lets it through: `gate(name)`; a gate is shut until
// opened, so a test can keep a check provably in flight for as long as it needs, whatever the machine's speed).
// Every listener counts requests by path (query string dropped): `requests(path)`.
import https from 'node:https';
import net from 'node:net';
import type tls from 'node:tls';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { makeThrowawayCertificates } from '../../infra/topology/demo/certificates.js';
import { makeTestImages, pngClaiming } from './test-images.js';

/** Names the server certificate covers. `wrong.test` is deliberately absent. */
export const CERT_NAMES = [
  'shop.test',
  'cdn.shop.test',
  'img.shop.test',
  'alt.shop.test',
  'v6.shop.test',
  'dns.shop.test',
  'evil.test',
] as const;
export const OVERSIZED_BYTES = 2 * 1024 * 1024;

export interface CountingListener {
  readonly address: string;
  readonly port: number;
  connections(): number;
  /** TLS connections that resumed an earlier session (no certificate sent or checked). */
  resumed(): number;
  /** Closes every open connection, as a server closes the idle ones it keeps. */
  dropConnections(): void;
}

export interface ImageServers {
  /** PEM of the CA that signed the server certificate. */
  ca: string;
  /** The bytes served under /img/ (`'800x600.jpg'` → the JPEG). */
  images: Record<string, Buffer>;
  main: CountingListener;
  alt: CountingListener | null;
  v6: CountingListener | null;
  evil: CountingListener;
  stall: CountingListener;
  /** Every test name → its loopback listener's address (use as the fetcher's hostMap). */
  hostMap: Record<string, string>;
  /** What /switch/{name} answers from now on: an image name of /img/ (`'800x600.jpg'`) or `'status:404'`. */
  setSwitch(name: string, answer: string): void;
  /**
   * The gate of /gate/{name}/…: `held()` requests are waiting at it now; `release()` lets those through (later
   * ones wait again); `open()` lets those and every later one through. A request whose client goes away stops
   * being held.
   */
  gate(name: string): Gate;
  /** Requests received for `path` (without query string) by every listener together. */
  requests(path: string): number;
  /** `https://{host}:{listener.port}{path}`, listener defaulting to main. */
  url(host: string, path: string, listener?: CountingListener): string;
  close(): Promise<void>;
}

export interface Gate {
  held(): number;
  release(): void;
  open(): void;
}

interface Started extends CountingListener {
  close(): Promise<void>;
}

export async function startImageServers(): Promise<ImageServers> {
  const { caCert, key, cert } = makeThrowawayCertificates(CERT_NAMES);
  const images = await makeTestImages();
  const ports = { main: 0, alt: 0, evil: 0 };
  const switches = new Map<string, string>();
  const counts = new Map<string, number>();
  const handle = routes(images, ports, switches);
  const gates = new Map<string, { open: boolean; waiting: Set<() => void> }>();
  const gateNamed = (name: string) => {
    let g = gates.get(name);
    if (!g) gates.set(name, (g = { open: false, waiting: new Set() }));
    return g;
  };
  const served = new WeakMap<net.Socket, number>();
  /**
   * Answers `path` (counted once, by the handler); a gate or a delay answers its inner route later.
   * `/first-only/{path}` answers the first request of a connection and resets the connection on any later one,
   * without an answer: what a client sees when it reuses a kept connection the server has just closed.
   */
  const serve = (req: IncomingMessage, res: ServerResponse, path: string): void => {
    const firstOnly = /^\/first-only(\/.*)$/.exec(path);
    if (firstOnly) {
      const count = (served.get(req.socket) ?? 0) + 1;
      served.set(req.socket, count);
      if (count > 1) return void req.socket.destroy();
      req.url = firstOnly[1];
      return serve(req, res, firstOnly[1]);
    }
    const gated = /^\/gate\/([^/]+)(\/.*)$/.exec(path);
    if (gated) {
      const g = gateNamed(gated[1]);
      const pass = () => {
        g.waiting.delete(pass);
        req.url = gated[2];
        serve(req, res, gated[2]);
      };
      if (g.open) return pass();
      g.waiting.add(pass);
      res.on('close', () => g.waiting.delete(pass));
      return;
    }
    const delayed = /^\/delay\/(\d+)(\/.*)$/.exec(path);
    if (!delayed) return void handle(req, res);
    const timer = setTimeout(() => {
      req.url = delayed[2];
      handle(req, res);
    }, Number(delayed[1]));
    res.on('close', () => clearTimeout(timer));
  };
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0];
    counts.set(path, (counts.get(path) ?? 0) + 1);
    serve(req, res, path);
  };
  const makeHttps = () => https.createServer({ key, cert }, handler);

  const main = await listen(makeHttps(), '127.0.0.1');
  const evil = await listen(makeHttps(), '127.0.0.1');
  const stall = await listen(
    net.createServer(() => {}),
    '127.0.0.1',
  );
  const alt = await listen(makeHttps(), '127.0.0.2').catch(() => null);
  const v6 = await listen(makeHttps(), '::1').catch(() => null);
  Object.assign(ports, { main: main.port, evil: evil.port, alt: alt?.port ?? 0 });
  const all = [main, evil, stall, alt, v6].filter((l): l is Started => l !== null);

  return {
    ca: caCert,
    images,
    main,
    alt,
    v6,
    evil,
    stall,
    hostMap: {
      'shop.test': '127.0.0.1',
      'cdn.shop.test': '127.0.0.1',
      'img.shop.test': '127.0.0.1',
      'evil.test': '127.0.0.1',
      'wrong.test': '127.0.0.1',
      'stall.shop.test': '127.0.0.1',
      'alt.shop.test': '127.0.0.2',
      'v6.shop.test': '::1',
    },
    setSwitch: (name, answer) => void switches.set(name, answer),
    gate: (name) => ({
      held: () => gateNamed(name).waiting.size,
      release: () => [...gateNamed(name).waiting].forEach((pass) => pass()),
      open: () => {
        gateNamed(name).open = true;
        [...gateNamed(name).waiting].forEach((pass) => pass());
      },
    }),
    requests: (path) => counts.get(path) ?? 0,
    url: (host, path, listener = main) => `https://${host}:${listener.port}${path}`,
    close: async () => {
      await Promise.all(all.map((l) => l.close()));
    },
  };
}

async function listen(server: net.Server, address: string): Promise<Started> {
  let count = 0;
  let resumed = 0;
  const sockets = new Set<net.Socket>();
  server.on('secureConnection', (socket: tls.TLSSocket) => {
    if (socket.isSessionReused()) resumed += 1;
  });
  server.on('connection', (socket: net.Socket) => {
    count += 1;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: 0, host: address, ipv6Only: address.includes(':') }, () => resolve());
  });
  const { port } = server.address() as net.AddressInfo;
  const dropConnections = () => sockets.forEach((socket) => socket.destroy());
  return {
    address,
    port,
    connections: () => count,
    resumed: () => resumed,
    dropConnections,
    close: () =>
      new Promise<void>((resolve) => {
        dropConnections();
        server.close(() => resolve());
      }),
  };
}

function routes(
  images: Record<string, Buffer>,
  ports: { main: number; alt: number; evil: number },
  switches: Map<string, string>,
) {
  const huge = pngClaiming(60000, 60000);
  const jpeg = images['800x600.jpg'];
  const oversized = Buffer.concat([jpeg, Buffer.alloc(OVERSIZED_BYTES - jpeg.length)]);
  const send = (res: ServerResponse, status: number, type: string, body: Buffer | string) => {
    res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) }).end(body);
  };
  const redirect = (res: ServerResponse, location: string | null) => {
    res.writeHead(302, location === null ? {} : { location }).end();
  };
  const endless = (res: ServerResponse, chunk: Buffer) => {
    const pump = () => {
      while (!res.destroyed && res.write(chunk));
      if (!res.destroyed) res.once('drain', pump);
    };
    pump();
  };

  return (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0];
    const image = path.startsWith('/img/') ? images[path.slice(5)] : undefined;
    if (image) return send(res, 200, contentType(path), image);
    const switched = path.startsWith('/switch/') ? switches.get(path.slice(8)) : undefined;
    if (path.startsWith('/switch/')) {
      const status = /^status:(\d{3})$/.exec(switched ?? 'status:404');
      if (status) return send(res, Number(status[1]), 'text/plain', 'switched');
      const answer = images[switched!];
      return answer ? send(res, 200, contentType(switched!), answer) : send(res, 404, 'text/plain', 'no such image');
    }
    const chain = /^\/redirect\/chain\/(\d+)$/.exec(path);
    if (chain) {
      const n = Number(chain[1]);
      return redirect(res, n > 1 ? `/redirect/chain/${n - 1}` : '/img/800x600.jpg');
    }
    switch (path) {
      case '/text-as-jpeg':
        return send(res, 200, 'image/jpeg', 'this is text, not a photo\n');
      case '/jpeg-as-text':
        return send(res, 200, 'text/plain', jpeg);
      case '/png-garbage':
        return send(res, 200, 'image/png', Buffer.concat([huge.subarray(0, 8), Buffer.alloc(200, 0x5a)]));
      case '/huge.png':
        return send(res, 200, 'image/png', huge);
      case '/status/404':
        return send(res, 404, 'text/plain', 'not found');
      case '/status/500':
        return send(res, 500, 'text/plain', 'boom');
      case '/redirect/inside':
        return redirect(res, `https://cdn.shop.test:${ports.main}/img/800x600.jpg`);
      case '/redirect/relative':
        return redirect(res, '/img/800x600.jpg');
      case '/redirect/outside':
        return redirect(res, `https://evil.test:${ports.evil}/img/800x600.jpg`);
      case '/redirect/http':
        return redirect(res, `http://shop.test:${ports.main}/img/800x600.jpg`);
      case '/redirect/loop':
        return redirect(res, '/redirect/loop');
      case '/redirect/to-alt':
        return redirect(res, `https://alt.shop.test:${ports.alt}/img/800x600.jpg`);
      case '/redirect/no-location':
        return redirect(res, null);
      case '/endless':
        res.writeHead(200, { 'content-type': 'image/jpeg' });
        return endless(res, Buffer.alloc(64 * 1024, 0xff));
      case '/trickle': {
        res.writeHead(200, { 'content-type': 'image/jpeg' });
        res.write(jpeg.subarray(0, 3));
        const timer = setInterval(() => res.write(Buffer.from([0])), 50);
        return res.on('close', () => clearInterval(timer));
      }
      case '/hang':
        return;
      case '/oversized':
        return send(res, 200, 'image/jpeg', oversized);
      case '/oversized-chunked':
        res.writeHead(200, { 'content-type': 'image/jpeg' });
        return res.end(oversized);
      default:
        return send(res, 404, 'text/plain', 'no such route');
    }
  };
}

function contentType(path: string): string {
  if (path.endsWith('.jpg')) return 'image/jpeg';
  if (path.endsWith('.png')) return 'image/png';
  if (path.endsWith('.webp')) return 'image/webp';
  return 'image/gif';
}
