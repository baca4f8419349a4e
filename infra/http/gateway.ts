/**
 * The in-process gateway of the embedded default: GET/HEAD go to the query door, every other method to the
 * command door (nginx does the same in the distributed topology; see infra/topology/deploy/). The public redirector
 * (`/r/…`, `/test/r/…`) writes clicks, so it is served by the write side's own handler even for a GET; the public
 * pages and search (`/`, `/busca`, `/api/…`, the offer pages `/p/…`) are the query door's whatever the method (it
 * answers 405 to anything but GET/HEAD there), and so is the partner portal (`/portal…`), whose sign-in and sign-out
 * posts are answered by the query door too (docs/adr/0081-portal-door-and-sessions.md).
 */
import http from 'node:http';
import type { Duplex } from 'node:stream';
import { newRequestId } from '../../shared-schema/domain/ids.js';
import { ProblemError, titleOf } from '../../shared-schema/contract/problems.js';
import { answerOf } from './problem-answer.js';
import { isRedirectPath } from '../../command-api/redirector.js';
import { isFeedPath, isPortalPath, isShopperPath } from '../../shared-schema/http/routes.js';

/** A Node request listener; a Koa app's `callback()` returns a promise that never rejects (Koa answers its errors). */
export type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void | Promise<void>;

export function gatewayHandler(command: Handler, query: Handler, redirect?: Handler): Handler {
  return (req, res) => {
    const url = req.url ?? '/';
    if (redirect && isRedirectPath(url)) return redirect(req, res);
    const toQuery =
      req.method === 'GET' || req.method === 'HEAD' || isShopperPath(url) || isFeedPath(url) || isPortalPath(url);
    return toQuery ? query(req, res) : command(req, res);
  };
}

/**
 * Headers of every answer of every door (partner API, shopper pages, redirector, admin API), set before any handler
 * runs (DECISIONS.md, "Security headers"). The policy is for the HTML pages (SHOPPER.md, problem pages): no script
 * at all, styles inline (the pages carry their CSS in a <style> element and `style` attributes: no script can run
 * from a style), images from https (partners' covers) or our own origin, forms only to our own origin, and never in
 * a frame. On a JSON answer it costs nothing and protects a browser that opens one.
 */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'X-Content-Type-Options': 'nosniff',
  'Content-Security-Policy':
    "default-src 'none'; img-src 'self' https:; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
  'Referrer-Policy': 'strict-origin-when-cross-origin',
};

/** Responses not yet finished, per server: a closing server tells their clients to drop the connection. */
const inFlight = new WeakMap<http.Server, Set<http.ServerResponse>>();
const closing = new WeakSet<http.Server>();

/** Node's limit on a request line and its headers together (its default, stated: nginx's limits follow it). */
export const MAX_HEADER_BYTES = 16 * 1024;

const CLIENT_ERROR_DETAILS: Record<number, string> = {
  400: 'The request is not valid HTTP.',
  408: 'The request took too long to arrive.',
  413: 'The request body is above the limit of this route: 5 MB for /products/batch, 1 MB elsewhere.',
  431: 'The request line and headers are above the limit: 16 KB together.',
};

/** The headers and body of a problem answer of `status` made before any route: those every answer carries too. */
function gatewayProblem(status: number, problemBaseUrl: string): { headers: Record<string, string>; body: string } {
  const requestId = newRequestId();
  const answer = answerOf(new ProblemError(status, [], CLIENT_ERROR_DETAILS[status]), problemBaseUrl, requestId);
  const body = JSON.stringify(answer.body);
  const headers = {
    ...SECURITY_HEADERS,
    ...answer.headers,
    'Content-Length': String(Buffer.byteLength(body)),
    'X-Request-Id': requestId,
    Connection: 'close',
  };
  return { headers, body };
}

/** `gatewayProblem` written straight on a socket whose request Node could not read. */
function writeProblem(socket: Duplex, status: number, problemBaseUrl: string): void {
  const { headers, body } = gatewayProblem(status, problemBaseUrl);
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
  // Closed once the answer is written (not at once: an unflushed answer would be lost).
  socket.end(`HTTP/1.1 ${status} ${titleOf(status)}\r\n${lines.join('')}\r\n${body}`, () => socket.destroy());
}

/**
 * What Node refuses before any handler sees the request (an oversized or malformed request line or header, chunk
 * extensions too long, a request too slow to arrive) is answered as a problem like every other answer, with the
 * statuses Node itself would use. As in Node, nothing is written once an answer on that connection has begun.
 */
function answerClientError(problemBaseUrl: string) {
  return (err: NodeJS.ErrnoException, socket: Duplex): void => {
    // Node's own test of an answer in flight on this connection (a private field, read as Node reads it).
    const answering = (socket as Duplex & { _httpMessage?: http.ServerResponse })._httpMessage;
    if (err.code === 'ECONNRESET' || !socket.writable || answering?.headersSent) {
      socket.destroy();
      return;
    }
    const status =
      err.code === 'HPE_HEADER_OVERFLOW'
        ? 431
        : err.code === 'HPE_CHUNK_EXTENSIONS_OVERFLOW'
          ? 413
          : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
            ? 408
            : 400;
    writeProblem(socket, status, problemBaseUrl);
  };
}

/**
 * A server for `handler` on `port`. With `problemBaseUrl` (the API's base URL, the `type` of problems), what Node
 * refuses by itself is answered as a problem too (answerClientError), and so is an HTTP/1.1 request without a
 * `Host` header, which Node would answer with an empty 400 of its own (nginx answers it with its 400 problem).
 */
export async function listen(
  handler: Handler,
  port: number,
  host: string,
  problemBaseUrl?: string,
): Promise<http.Server> {
  const active = new Set<http.ServerResponse>();
  const problems = problemBaseUrl !== undefined;
  const options = { keepAliveTimeout: 65_000, maxHeaderSize: MAX_HEADER_BYTES, requireHostHeader: !problems };
  const server = http.createServer(options, (req, res) => {
    if (problems && req.httpVersion === '1.1' && req.headers.host === undefined) {
      const { headers, body } = gatewayProblem(400, problemBaseUrl);
      res.writeHead(400, headers).end(body); // through `res`: after the answers of requests before it on the connection
      return;
    }
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(name, value);
    if (closing.has(server)) res.setHeader('Connection', 'close');
    active.add(res);
    res.once('close', () => active.delete(res));
    void handler(req, res); // errors are answered inside the handler (Koa's ctx.onerror): nothing to await or catch
  });
  inFlight.set(server, active);
  if (problems) server.on('clientError', answerClientError(problemBaseUrl));
  server.headersTimeout = 66_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return server;
}

/**
 * Stops taking connections and lets the requests in flight finish. Keep-alive clients would otherwise keep a busy
 * server open for ever: every answer from now on carries `Connection: close`, idle connections are closed at once,
 * and whatever is still open after `graceMs` is cut.
 */
export async function closeServer(server: http.Server, graceMs = 3_000): Promise<void> {
  closing.add(server);
  for (const res of inFlight.get(server) ?? []) if (!res.headersSent) res.setHeader('Connection', 'close');
  await new Promise<void>((resolve) => {
    const cut = setTimeout(() => server.closeAllConnections(), graceMs);
    cut.unref();
    server.close(() => {
      clearTimeout(cut);
      resolve();
    });
    server.closeIdleConnections();
  });
}

export function portOf(server: http.Server): number {
  const address = server.address();
  if (address && typeof address === 'object') return address.port;
  throw new Error('server is not listening on a TCP port');
}
