// The cover check: fetch a partner-supplied image URL (the service's main attack surface) and judge it.
//
// 1. HTTPS only, no credentials in the URL, and the host must be a domain or image host of the store
//    (`hostMatchesDomains`: the listed domain itself or a subdomain of it). An IP literal never passes.
// 2. Resolve the host: the configured host map INSTEAD of DNS, else DNS (every address of the answer).
// 3. EVERY resolved address must be allowed (`isPublicAddress`, unless allowPrivate); else refuse, unconnected.
// 4. Connect to the checked address itself: https.request gets a `lookup` that only returns that address, while
//    SNI, certificate check and Host stay the hostname — no second DNS answer can slip in (DNS rebinding).
// 5. At most `maxRedirects` redirects; each new URL goes through 1–4 again. A loop, or one more, is refused.
// 6. Connect (TCP + TLS) timeout, one total deadline for the whole check, a byte cap on the body.
//    A connection is kept open for the next check of the same (host, checked address, port) only, and only after a
//    complete 200 answer: never across host names, never to an address the check of that request did not pass.
// 7. Type and size come from the BYTES: a magic-number sniff first (only JPEG, PNG, WebP ever reach libvips),
//    then sharp's header-only `metadata()` with a pixel cap. Content-Type is never read. The verdict on them is the
//    contract's rule, `judgeCover` (shared-schema/domain/product-rules.ts).
// A bad remote never throws: every failure becomes a reason. Only bad local configuration throws.
import https from 'node:https';
import net from 'node:net';
import tls from 'node:tls';
import dns from 'node:dns';
import type { ClientRequest, IncomingMessage } from 'node:http';
import sharp from 'sharp';
import { hostMatchesDomains, normalizeHost } from '../../../shared-schema/domain/host-match.js';
import { addressRefusal } from './address-guard.js';
import { judgeCover, type CoverFormat } from '../../../shared-schema/domain/product-rules.js';

export type CoverReasonCode = 'image_unreachable' | 'image_type' | 'image_too_small';
export interface CoverReason {
  code: CoverReasonCode;
  field: 'image_urls[0]';
  message: string;
}
export interface CoverCheckResult {
  ok: boolean;
  reasons: CoverReason[];
  format?: CoverFormat;
  width?: number;
  height?: number;
}

export interface CoverFetcherOptions {
  /** Host name → address, used INSTEAD of DNS for those names (tests: COVER_FETCH_HOSTS). Still checked. */
  hostMap?: Record<string, string>;
  /** Let the check reach private and loopback addresses (tests only: COVER_FETCH_ALLOW_PRIVATE=1). */
  allowPrivate?: boolean;
  connectTimeoutMs?: number;
  totalTimeoutMs?: number;
  maxBytes?: number;
  maxPixels?: number;
  maxRedirects?: number;
  /** DNS: all addresses of a name. Default: the system resolver (`dns.lookup`, all families). */
  lookup?: (host: string) => Promise<string[]>;
  /** Trust exactly these CAs (in-process tests). Default: Node's CAs plus NODE_EXTRA_CA_CERTS. */
  ca?: string | Buffer | Array<string | Buffer>;
  /** Replaces the address rule entirely (tests that allow one loopback address and refuse another). */
  addressAllowed?: (ip: string) => boolean;
  /** TLS sessions kept for resumption, one per host, address and port (`TLS_SESSIONS_KEPT` by default). */
  tlsSessions?: number;
  /** Idle connections kept per host, address and port (`IDLE_CONNECTIONS_KEPT` by default; 0: none kept). */
  idleConnections?: number;
}

/** The bound of the fetcher's TLS session cache: 1,000 servers, a ticket of a few hundred bytes each. */
export const TLS_SESSIONS_KEPT = 1_000;
/**
 * Idle connections kept per server when not configured (the service passes COVER_CHECK_CONCURRENCY); each is closed
 * after `IDLE_CONNECTION_MS` unused.
 */
export const IDLE_CONNECTIONS_KEPT = 4;
/** Below the 5 s most servers (Node's default among them) keep an idle connection, so we close it first. */
export const IDLE_CONNECTION_MS = 4_000;

export type CoverFetcher = (url: string, allowedHosts: readonly string[]) => Promise<CoverCheckResult>;

export const COVER_FETCH_DEFAULTS = {
  connectTimeoutMs: 5_000,
  totalTimeoutMs: 15_000,
  maxBytes: 10 * 1024 * 1024,
  maxPixels: 100_000_000,
  maxRedirects: 3,
} as const;

export { coverFetcherOptionsFromEnv, parseHostMap } from './cover-fetch-config.js';

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

class CoverFailure extends Error {
  constructor(
    readonly code: CoverReasonCode,
    message: string,
  ) {
    super(message);
  }
}
/** The socket never connected: the next resolved address may be tried. */
class NotConnected extends Error {}
/** A kept connection failed before any answer (the server closed it meanwhile): ask once more on a new one. */
class StaleConnection extends Error {}

/** The request options of one check: the address the check passed rides along, to name the connection's pool. */
type PinnedRequest = https.RequestOptions &
  Pick<tls.ConnectionOptions, 'secureContext' | 'session'> & { pinnedAddress: string };

/**
 * Node's agent names a pool of kept connections by host, port and TLS options; the address the check pinned is
 * added, so a kept connection serves only requests whose resolved address is the one it was opened to. The agent's
 * own session cache is off: the fetcher keeps only sessions whose certificate passed.
 */
class PinnedAgent extends https.Agent {
  override getName(options?: https.RequestOptions & { pinnedAddress?: string }): string {
    return `${super.getName(options)}:${options?.pinnedAddress ?? ''}`;
  }
}

const unreachable = (message: string) => new CoverFailure('image_unreachable', message);

export function createCoverFetcher(options: CoverFetcherOptions = {}): CoverFetcher {
  const limits = coverLimits(options);
  const steps: FetchSteps = {
    limits,
    resolve: addressResolver(options),
    connections: new TlsConnections(options, limits),
  };
  return async function checkCover(url, allowedHosts) {
    const deadline = Date.now() + limits.totalTimeoutMs;
    try {
      return await inspect(await fetchBody(url, allowedHosts, deadline, steps), limits.maxPixels);
    } catch (err) {
      const failure = asFailure(err);
      return { ok: false, reasons: [reason(failure.code, failure.message)] };
    }
  };
}

type CoverLimits = { readonly [K in keyof typeof COVER_FETCH_DEFAULTS]: number };

function coverLimits(options: CoverFetcherOptions): CoverLimits {
  return {
    connectTimeoutMs: options.connectTimeoutMs ?? COVER_FETCH_DEFAULTS.connectTimeoutMs,
    totalTimeoutMs: options.totalTimeoutMs ?? COVER_FETCH_DEFAULTS.totalTimeoutMs,
    maxBytes: options.maxBytes ?? COVER_FETCH_DEFAULTS.maxBytes,
    maxPixels: options.maxPixels ?? COVER_FETCH_DEFAULTS.maxPixels,
    maxRedirects: options.maxRedirects ?? COVER_FETCH_DEFAULTS.maxRedirects,
  };
}

/** What one check goes through, built once per fetcher. */
interface FetchSteps {
  limits: CoverLimits;
  resolve: AddressResolver;
  connections: TlsConnections;
}

/** Steps 2–3: every address of a host name, each one allowed, or a refusal before any connection. */
type AddressResolver = (host: string, deadline: number) => Promise<string[]>;

function addressResolver(options: CoverFetcherOptions): AddressResolver {
  const hostMap = new Map<string, string>();
  for (const [name, address] of Object.entries(options.hostMap ?? {})) {
    if (net.isIP(address) === 0)
      throw new Error(`cover fetcher hostMap: "${address}" (for ${name}) is not an IP address`);
    hostMap.set(normalizeHost(name), address);
  }
  const addressAllowed =
    options.addressAllowed ?? (options.allowPrivate ? () => true : (ip: string) => addressRefusal(ip) === null);
  const lookup = options.lookup ?? systemLookup;
  return async (host, deadline) => {
    const mapped = hostMap.get(host);
    // Special-use names never resolve on the public internet: refuse them without asking the system resolver, so a
    // test host name (shop.test) can never leave the machine as a DNS query, even by mistake.
    if (mapped === undefined && options.lookup === undefined && isSpecialUseName(host))
      throw unreachable(`the host ${host} is a special-use name`);
    let addresses: string[];
    try {
      addresses = mapped !== undefined ? [mapped] : await beforeDeadline(lookup(host), deadline);
    } catch (err) {
      if (err instanceof CoverFailure) throw err;
      throw unreachable(`the host ${host} did not resolve`);
    }
    if (addresses.length === 0) throw unreachable(`the host ${host} did not resolve`);
    for (const address of addresses) {
      if (net.isIP(address) === 0 || !addressAllowed(address)) {
        const why = addressRefusal(address) ?? 'not allowed';
        throw unreachable(`the host ${host} resolves to an address the check may not reach (${why})`);
      }
    }
    return addresses;
  };
}

/** Steps 1–5: the body of the cover at `url`, following at most `maxRedirects` redirects, each checked again. */
async function fetchBody(
  url: string,
  allowedHosts: readonly string[],
  deadline: number,
  { limits, resolve, connections }: FetchSteps,
): Promise<Buffer> {
  let current: URL;
  try {
    current = new URL(url);
  } catch {
    throw unreachable('the cover URL is not a valid URL');
  }
  const visited = new Set([current.href]);
  for (let redirects = 0; ; redirects += 1) {
    const host = checkTarget(current, allowedHosts, redirects > 0);
    const addresses = await resolve(host, deadline);
    const answer = await connections.firstReachable(current, host, addresses, deadline);
    if (Buffer.isBuffer(answer)) return answer;
    if (redirects >= limits.maxRedirects) throw unreachable(`more than ${limits.maxRedirects} redirects`);
    let next: URL;
    try {
      next = new URL(answer.location, current);
    } catch {
      throw unreachable('redirected to an invalid URL');
    }
    if (visited.has(next.href)) throw unreachable('redirect loop');
    visited.add(next.href);
    current = next;
  }
}

/** A complete 200 answer's body, or where a redirect points. */
type Answer = Buffer | { location: string };

/**
 * Steps 4 and 6: HTTPS requests to a checked address, under the connect timeout and the check's deadline, on one
 * TLS context, resuming the TLS sessions and reusing the connections of earlier checks of the same server.
 */
class TlsConnections {
  // One TLS context for every check: built per connection (what https.request does by default) it parses every
  // trusted CA again, milliseconds of the event loop per cover with a CA list.
  private readonly secureContext: tls.SecureContext;
  // The last TLS session of each server (host, pinned address, port): the next check to it resumes the session
  // instead of a full handshake, which verifies and parses the server's certificate chain again each time (a large
  // share of the cover thread's CPU under a batch load). Only sessions of connections whose certificate passed are
  // kept, and a resumed session is one that passed for this very host name. Oldest dropped past the bound.
  private readonly sessions = new Map<string, Buffer>();
  private readonly sessionsKept: number;
  // Kept connections: a new TLS connection per check costs most of the cover thread's CPU (creating the socket,
  // setting the session, the handshake). Unlimited connections in use,
  // at most `idleConnections` idle per pool, each closed after IDLE_CONNECTION_MS.
  private readonly agent: https.Agent | false;

  constructor(
    options: CoverFetcherOptions,
    private readonly limits: CoverLimits,
  ) {
    this.secureContext = tls.createSecureContext(options.ca === undefined ? {} : { ca: options.ca });
    this.sessionsKept = Math.max(0, options.tlsSessions ?? TLS_SESSIONS_KEPT);
    const idleKept = Math.max(0, options.idleConnections ?? IDLE_CONNECTIONS_KEPT);
    this.agent =
      idleKept === 0
        ? false
        : new PinnedAgent({
            keepAlive: true,
            maxFreeSockets: idleKept,
            timeout: IDLE_CONNECTION_MS,
            maxCachedSessions: 0,
          });
  }

  /** The answer of the first address that connects; a kept connection found closed is replaced by a new one. */
  async firstReachable(url: URL, host: string, addresses: string[], deadline: number): Promise<Answer> {
    let lastError: unknown;
    for (const address of addresses) {
      try {
        return await this.request(url, host, address, deadline, this.agent).catch((err) => {
          if (err instanceof StaleConnection) return this.request(url, host, address, deadline, false);
          throw err;
        });
      } catch (err) {
        if (!(err instanceof NotConnected)) throw err;
        lastError = err.cause ?? err;
      }
    }
    throw unreachable(
      lastError instanceof CoverFailure ? lastError.message : `could not connect to ${host} (${describe(lastError)})`,
    );
  }

  private request(
    url: URL,
    host: string,
    address: string,
    deadline: number,
    via: https.Agent | false,
  ): Promise<Answer> {
    const remaining = deadline - Date.now();
    if (remaining <= 0) return Promise.reject(this.late());
    return new Promise((resolvePromise, rejectPromise) => {
      const port = url.port === '' ? 443 : Number(url.port);
      const sessionKey = `${host}\u0000${address}\u0000${port}`;
      const req = https.request(this.pinnedRequest(url, host, address, port, this.sessions.get(sessionKey), via));
      let connected = false;
      let answered = false;
      let settled = false;
      /** Settles once. The connection is closed unless `keep`: a complete 200 leaves it to the agent's pool. */
      const finish = (outcome: () => void, keep = false) => {
        if (settled) return;
        settled = true;
        clearTimeout(total);
        clearTimeout(connect);
        outcome();
        if (!keep) req.destroy();
      };
      // Before the TCP connection exists a failure lets the caller try the next address; after it, or at the
      // total deadline, it is the answer. A kept connection that fails before any answer is asked again.
      const failure = (err: unknown, final: boolean): Error => {
        if (final) return asFailure(err);
        if (req.reusedSocket && !answered) return new StaleConnection('kept connection failed', { cause: err });
        return connected ? asFailure(err) : new NotConnected('not connected', { cause: err });
      };
      const fail = (err: unknown, final = false) => finish(() => rejectPromise(failure(err, final)));
      const total = setTimeout(() => fail(this.late(), true), remaining);
      const connect = setTimeout(
        () => fail(unreachable(`no TLS connection to ${host} within ${this.limits.connectTimeoutMs} ms`)),
        this.limits.connectTimeoutMs,
      );
      req.on('socket', (socket) => {
        this.watchConnection(
          req,
          socket as tls.TLSSocket,
          sessionKey,
          () => (connected = true),
          () => clearTimeout(connect),
        );
      });
      req.on('error', fail);
      req.on('response', (res: IncomingMessage) => {
        answered = true;
        readAnswer(res, this.limits.maxBytes, {
          fail,
          done: (answer, keep) => finish(() => resolvePromise(answer), keep),
          settled: () => settled,
        });
      });
      req.end();
    });
  }

  private late(): CoverFailure {
    return unreachable(`the cover did not arrive within ${this.limits.totalTimeoutMs} ms`);
  }

  /** The request options that pin the checked address while SNI, certificate check and Host stay the host name. */
  private pinnedRequest(
    url: URL,
    host: string,
    address: string,
    port: number,
    session: Buffer | undefined,
    via: https.Agent | false,
  ): PinnedRequest {
    // `secureContext` and `session` reach tls.connect, which @types/node does not say of https.request.
    return {
      hostname: host,
      servername: host,
      port,
      path: `${url.pathname}${url.search}`,
      method: 'GET',
      headers: {
        'user-agent': 'partner-commerce-cover-check/1',
        accept: 'image/jpeg, image/png, image/webp',
        'accept-encoding': 'identity',
      },
      agent: via,
      pinnedAddress: address,
      secureContext: this.secureContext,
      lookup: pinnedLookup(address),
      ...(session ? { session } : {}),
    };
  }

  /** Connected (TCP), then secure (TLS): a kept connection is both already. Keeps the sessions whose certificate passed. */
  private watchConnection(
    req: ClientRequest,
    socket: tls.TLSSocket,
    sessionKey: string,
    onConnected: () => void,
    onSecure: () => void,
  ): void {
    if (req.reusedSocket) {
      // A kept connection: connected, its certificate passed for this host when it was opened.
      onConnected();
      onSecure();
      return;
    }
    socket.once('connect', onConnected);
    socket.once('secureConnect', onSecure);
    // TLS 1.2 may hand over a session before the certificate is checked: keep it only once it passed.
    socket.on('session', (s: Buffer) => {
      if (socket.authorized) this.keepSession(sessionKey, s);
      else socket.once('secureConnect', () => socket.authorized && this.keepSession(sessionKey, s));
    });
  }

  private keepSession(key: string, session: Buffer): void {
    this.sessions.delete(key);
    this.sessions.set(key, session);
    if (this.sessions.size > this.sessionsKept) this.sessions.delete(this.sessions.keys().next().value!);
  }
}

/**
 * Step 6, the body: a redirect's Location, or a 200's body read under `maxBytes` (its declared length first), the
 * connection kept only once the body is complete.
 */
function readAnswer(
  res: IncomingMessage,
  maxBytes: number,
  settle: { fail(err: unknown): void; done(answer: Answer, keep: boolean): void; settled(): boolean },
): void {
  res.on('error', (err) => settle.fail(err));
  // Every answer closes, the complete ones after `end`: the error (its stack) is built only when it is one.
  res.on(
    'close',
    () => settle.settled() || settle.fail(unreachable('the connection closed before the cover was complete')),
  );
  const status = res.statusCode ?? 0;
  if (REDIRECTS.has(status)) {
    const location = res.headers.location;
    if (!location) return settle.fail(unreachable(`HTTP ${status} redirect without a Location`));
    return settle.done({ location }, false);
  }
  if (status !== 200) return settle.fail(unreachable(`HTTP status ${status}`));
  const declared = Number(res.headers['content-length']);
  if (declared > maxBytes) return settle.fail(tooLarge(maxBytes));
  const chunks: Buffer[] = [];
  let size = 0;
  res.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size > maxBytes) return settle.fail(tooLarge(maxBytes));
    chunks.push(chunk);
  });
  res.on('end', () => settle.done(Buffer.concat(chunks, size), true));
}

/** Step 1: scheme, credentials and host of one URL (the first or a redirect target). Returns the host. */
function checkTarget(url: URL, allowedHosts: readonly string[], redirected: boolean): string {
  if (url.protocol !== 'https:')
    throw unreachable(redirected ? 'redirected to a URL that is not HTTPS' : 'the cover URL is not HTTPS');
  if (url.username !== '' || url.password !== '') throw unreachable('the cover URL carries credentials');
  const host = normalizeHost(url.hostname);
  if (!hostMatchesDomains(host, allowedHosts)) {
    throw unreachable(
      redirected
        ? `redirected to ${host}, outside the store's domains and image hosts`
        : `${host} is not a domain or image host of the store`,
    );
  }
  return host;
}

/**
 * Step 7. A header claiming more pixels than `maxPixels` (a 60000×60000 PNG) is refused as `image_unreachable`:
 * it may well be a real PNG, so `image_type` would be false, and nothing says it is small; the service declined
 * to open it, which is what "did not open" tells the partner. Nothing is decoded — `metadata()` reads headers.
 */
async function inspect(body: Buffer, maxPixels: number): Promise<CoverCheckResult> {
  const sniffed = sniffFormat(body);
  if (sniffed === null) return verdict(null, 0, 0);
  let width: number | undefined;
  let height: number | undefined;
  let format: string | undefined;
  try {
    ({ width, height, format } = await sharp(body, { limitInputPixels: maxPixels }).metadata());
  } catch (err) {
    if (err instanceof Error && /pixel limit/i.test(err.message))
      throw unreachable(`the cover claims more than ${maxPixels} pixels and was not opened`);
    throw new CoverFailure('image_type', `the cover could not be read as ${sniffed.toUpperCase()}`);
  }
  if (format !== sniffed || !width || !height)
    throw new CoverFailure('image_type', `the cover could not be read as ${sniffed.toUpperCase()}`);
  if (width * height > maxPixels)
    throw unreachable(`the cover claims more than ${maxPixels} pixels and was not opened`);
  return verdict(sniffed, width, height);
}

/** The cover rules' verdict on the image the bytes hold (format null: none the check could read). */
function verdict(format: CoverFormat | null, width: number, height: number): CoverCheckResult {
  const refusal = judgeCover(format, width, height);
  const image = format === null ? {} : { format, width, height };
  return refusal
    ? { ok: false, reasons: [reason(refusal.code, refusal.message)], ...image }
    : { ok: true, reasons: [], ...image };
}

/** Which cover format the bytes start with (a magic number of each of COVER_FORMATS), null for any other. */
function sniffFormat(b: Buffer): CoverFormat | null {
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'jpeg';
  if (b.length >= 8 && b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])))
    return 'png';
  if (b.length >= 12 && b.toString('latin1', 0, 4) === 'RIFF' && b.toString('latin1', 8, 12) === 'WEBP') return 'webp';
  return null;
}

/** RFC 6761 / 6762 special-use names (and `localhost`), which public DNS never answers. */
const SPECIAL_USE_SUFFIXES = ['test', 'example', 'invalid', 'localhost', 'local'];
export function isSpecialUseName(host: string): boolean {
  const h = host.toLowerCase().replace(/\.$/, '');
  return SPECIAL_USE_SUFFIXES.some((s) => h === s || h.endsWith(`.${s}`));
}

/** A `lookup` for https.request that answers only the address already checked, in either callback form. */
function pinnedLookup(address: string): net.LookupFunction {
  const family = net.isIPv6(address) ? 6 : 4;
  return (_hostname, options, callback) => {
    if (options.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  };
}

async function systemLookup(host: string): Promise<string[]> {
  const answers = await dns.promises.lookup(host, { all: true, verbatim: true });
  return answers.map((a) => a.address);
}

function beforeDeadline<T>(promise: Promise<T>, deadline: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(unreachable('the host name did not resolve in time')),
      Math.max(0, deadline - Date.now()),
    );
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function reason(code: CoverReasonCode, message: string): CoverReason {
  return { code, field: 'image_urls[0]', message };
}

function tooLarge(maxBytes: number): CoverFailure {
  return unreachable(`the cover is larger than ${maxBytes} bytes`);
}

function asFailure(err: unknown): CoverFailure {
  return err instanceof CoverFailure ? err : unreachable(`the cover could not be fetched (${describe(err)})`);
}

/** An error's code when it has one (ECONNREFUSED, ERR_TLS_CERT_ALTNAME_INVALID, …): messages may hold addresses. */
function describe(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as NodeJS.ErrnoException).code;
    return typeof code === 'string' ? code : err.message;
  }
  return String(err);
}
