// The cover check against local HTTPS servers. Only loopback is ever reached: every name is in the host map
// (pointing at 127.0.0.1, 127.0.0.2 or ::1) or answered by a stub lookup with loopback addresses, and the DNS
// fallback is a stub that records the call and throws, so a typo cannot reach a real resolver.
import { expect } from 'chai';
import net from 'node:net';
import {
  COVER_FETCH_DEFAULTS,
  createCoverFetcher,
  type CoverCheckResult,
  type CoverFetcherOptions,
} from '../../infra/adapters/cover/cover-fetcher.js';
import { startImageServers, type CountingListener, type ImageServers } from '../support/https-image-server.js';

describe('cover fetcher (local HTTPS servers)', function () {
  this.timeout(40_000);
  let servers: ImageServers;
  let dnsCalls: string[];
  const STORE = ['shop.test'];

  before(async () => {
    servers = await startImageServers();
  });
  after(async () => {
    await servers?.close();
  });
  beforeEach(() => {
    dnsCalls = [];
  });

  const noDns = async (host: string): Promise<string[]> => {
    dnsCalls.push(host);
    throw new Error(`test tried DNS for ${host}`);
  };
  /** A fetcher for loopback servers: private addresses allowed (unless overridden), test CA trusted. */
  const fetcher = (extra: CoverFetcherOptions = {}) =>
    createCoverFetcher({ hostMap: servers.hostMap, allowPrivate: true, ca: servers.ca, lookup: noDns, ...extra });
  const check = (path: string, extra: CoverFetcherOptions = {}, allowed = STORE) =>
    fetcher(extra)(servers.url('shop.test', path), allowed);

  /** Runs `action` and returns the connections `listener` accepted meanwhile. */
  async function connectionsDuring(listener: CountingListener, action: () => Promise<CoverCheckResult>) {
    const before = listener.connections();
    const result = await action();
    return { result, connections: listener.connections() - before };
  }

  function expectReason(result: CoverCheckResult, code: string, message?: RegExp) {
    expect(result.ok, JSON.stringify(result)).to.equal(false);
    expect(result.reasons).to.have.length(1);
    expect(result.reasons[0]).to.include({ code, field: 'image_urls[0]' });
    if (message) expect(result.reasons[0].message).to.match(message);
  }

  describe('type and size, read from the bytes', () => {
    for (const ext of ['jpg', 'png', 'webp']) {
      const format = ext === 'jpg' ? 'jpeg' : ext;
      it(`accepts an 800×600 and a 500×500 ${format}`, async () => {
        expect(await check(`/img/800x600.${ext}`)).to.deep.equal({
          ok: true,
          reasons: [],
          format,
          width: 800,
          height: 600,
        });
        expect(await check(`/img/500x500.${ext}`)).to.deep.equal({
          ok: true,
          reasons: [],
          format,
          width: 500,
          height: 500,
        });
      });
      it(`refuses a 499×800 ${format} as image_too_small, with its size`, async () => {
        const result = await check(`/img/499x800.${ext}`);
        expectReason(result, 'image_too_small', /499×800/);
        expect(result).to.include({ format, width: 499, height: 800 });
      });
    }

    it('refuses a GIF as image_type', async () => {
      expectReason(await check('/img/600x600.gif'), 'image_type');
    });

    it('refuses text served as image/jpeg as image_type', async () => {
      expectReason(await check('/text-as-jpeg'), 'image_type', /not a JPEG, PNG or WebP/);
    });

    it('accepts a JPEG served as text/plain: the header is not read', async () => {
      expect(await check('/jpeg-as-text')).to.include({ ok: true, format: 'jpeg', width: 800 });
    });

    it('refuses a PNG signature followed by junk as image_type', async () => {
      expectReason(await check('/png-garbage'), 'image_type', /could not be read as PNG/);
    });

    it('refuses a PNG whose header claims 60000×60000 without decoding it (image_unreachable)', async () => {
      // /huge.png is an IHDR and 64 bytes of image data: only a refusal read from the header can name the pixel
      // count (a decode would fail on the missing rows, or try to allocate 10 GB). No wall-clock bound: how long
      // the check takes says more about the machine than about the fetcher.
      expectReason(await check('/huge.png'), 'image_unreachable', /more than 100000000 pixels/);
      expectReason(await check('/img/800x600.png', { maxPixels: 800 * 600 - 1 }), 'image_unreachable', /pixels/);
      expect(await check('/img/800x600.png', { maxPixels: 800 * 600 })).to.include({ ok: true });
    });
  });

  describe('status, redirects, size and time limits', () => {
    it('refuses 404 and 500 as image_unreachable', async () => {
      expectReason(await check('/status/404'), 'image_unreachable', /HTTP status 404/);
      expectReason(await check('/status/500'), 'image_unreachable', /HTTP status 500/);
    });

    it('follows redirects inside the store, absolute (to a subdomain) or relative', async () => {
      expect(await check('/redirect/inside')).to.include({ ok: true, width: 800 });
      expect(await check('/redirect/relative')).to.include({ ok: true, width: 800 });
    });

    it('follows at most maxRedirects (3 by default), then refuses', async () => {
      expect(await check('/redirect/chain/3')).to.include({ ok: true });
      expectReason(await check('/redirect/chain/4'), 'image_unreachable', /more than 3 redirects/);
      expectReason(await check('/redirect/chain/1', { maxRedirects: 0 }), 'image_unreachable', /more than 0 redirects/);
    });

    it('refuses a redirect loop', async () => {
      expectReason(await check('/redirect/loop'), 'image_unreachable', /redirect loop/);
    });

    it('refuses a redirect outside the store without connecting to the outside host', async () => {
      const { result, connections } = await connectionsDuring(servers.evil, () => check('/redirect/outside'));
      expectReason(result, 'image_unreachable', /redirected to evil\.test, outside the store's domains/);
      expect(connections).to.equal(0);
    });

    it('refuses a redirect to http:// and one without a Location', async () => {
      expectReason(await check('/redirect/http'), 'image_unreachable', /redirected to a URL that is not HTTPS/);
      expectReason(await check('/redirect/no-location'), 'image_unreachable', /without a Location/);
    });

    it('re-checks the address after a redirect: a refused address is never connected', async function () {
      if (!servers.alt) return this.skip();
      const onlyMain = { addressAllowed: (ip: string) => ip === '127.0.0.1' };
      const { result, connections } = await connectionsDuring(servers.alt, () => check('/redirect/to-alt', onlyMain));
      expectReason(result, 'image_unreachable', /alt\.shop\.test resolves to an address the check may not reach/);
      expect(connections).to.equal(0);
    });

    it('stops a never-ending body at the byte cap', async () => {
      expectReason(
        await check('/endless', { maxBytes: 1024 * 1024 }),
        'image_unreachable',
        /larger than 1048576 bytes/,
      );
    });

    it('refuses a body over the cap, with or without Content-Length; the same body passes a larger cap', async () => {
      const small = { maxBytes: 1024 * 1024 };
      expectReason(await check('/oversized', small), 'image_unreachable', /larger than 1048576 bytes/);
      expectReason(await check('/oversized-chunked', small), 'image_unreachable', /larger than 1048576 bytes/);
      expect(await check('/oversized-chunked')).to.include({ ok: true, format: 'jpeg' });
    });

    it('gives up at the total deadline on a trickling body and on a server that never answers', async () => {
      for (const path of ['/trickle', '/hang']) {
        const started = Date.now();
        expectReason(await check(path, { totalTimeoutMs: 300 }), 'image_unreachable', /did not arrive within 300 ms/);
        // Not before the deadline; and well before the default one (the option was used), however busy the machine.
        expect(Date.now() - started)
          .to.be.at.least(250)
          .and.below(COVER_FETCH_DEFAULTS.totalTimeoutMs);
      }
    });

    it('gives up at the connect timeout when TCP connects but TLS never does', async () => {
      const { result, connections } = await connectionsDuring(servers.stall, () =>
        fetcher({ connectTimeoutMs: 200 })(servers.url('stall.shop.test', '/x', servers.stall), STORE),
      );
      expectReason(result, 'image_unreachable', /no TLS connection to stall\.shop\.test within 200 ms/);
      expect(connections).to.equal(1);
    });

    it('reports a refused connection', async () => {
      const port = await closedPort();
      expectReason(
        await fetcher()(`https://shop.test:${port}/img/800x600.jpg`, STORE),
        'image_unreachable',
        /could not connect to shop\.test \(ECONNREFUSED\)/,
      );
    });
  });

  describe('TLS', () => {
    it('refuses a certificate that does not name the host', async () => {
      expectReason(
        await fetcher()(servers.url('wrong.test', '/img/800x600.jpg'), ['wrong.test']),
        'image_unreachable',
        /ALTNAME/,
      );
    });

    it('refuses a certificate from a CA it does not trust', async () => {
      const { result, connections } = await connectionsDuring(servers.main, () =>
        fetcher({ ca: undefined })(servers.url('shop.test', '/img/800x600.jpg'), STORE),
      );
      expectReason(result, 'image_unreachable');
      expect(connections).to.equal(1);
    });

    /** Runs the checks of `urls` one after the other with one fetcher; the sessions `main` resumed meanwhile. */
    async function resumedDuring(f: ReturnType<typeof fetcher>, urls: [host: string, allowed: string[]][]) {
      const before = servers.main.resumed();
      for (const [host, allowed] of urls) {
        servers.main.dropConnections(); // the server closed the kept connection: a new one is opened
        expect(await f(servers.url(host, '/img/800x600.jpg'), allowed)).to.include({ ok: true, width: 800 });
      }
      return servers.main.resumed() - before;
    }

    it('resumes the TLS session of an earlier check of the same host, never across hosts', async () => {
      const f = fetcher();
      expect(await resumedDuring(f, [['shop.test', STORE]])).to.equal(0);
      expect(await resumedDuring(f, [['shop.test', STORE]])).to.equal(1);
      expect(await resumedDuring(f, [['cdn.shop.test', STORE]])).to.equal(0);
    });

    it('never keeps the session of a certificate that failed: the next check is refused again', async () => {
      const f = fetcher();
      const wrong = servers.url('wrong.test', '/img/800x600.jpg');
      expectReason(await f(wrong, ['wrong.test']), 'image_unreachable', /ALTNAME/);
      const before = { resumed: servers.main.resumed(), connections: servers.main.connections() };
      expectReason(await f(wrong, ['wrong.test']), 'image_unreachable', /ALTNAME/);
      expect(servers.main.resumed() - before.resumed).to.equal(0);
      expect(servers.main.connections() - before.connections, 'a new connection, certificate checked again').to.equal(
        1,
      );
    });

    it('keeps at most tlsSessions sessions, dropping the oldest', async () => {
      const cycle: [string, string[]][] = [
        ['shop.test', STORE],
        ['cdn.shop.test', STORE],
        ['img.shop.test', STORE],
        ['shop.test', STORE],
      ];
      // Two kept: shop.test's session was dropped for img.shop.test's before it came back.
      expect(await resumedDuring(fetcher({ tlsSessions: 2 }), cycle)).to.equal(0);
      expect(await resumedDuring(fetcher({ tlsSessions: 3 }), cycle)).to.equal(1);
    });
  });

  describe('kept connections', () => {
    const ok = (f: ReturnType<typeof fetcher>, host: string, path = '/img/800x600.jpg', allowed = STORE) =>
      connectionsDuring(servers.main, () => f(servers.url(host, path), allowed));

    it('checks the next cover of the same host on the connection of the last one, never on another host', async () => {
      const f = fetcher();
      servers.main.dropConnections();
      expect(await ok(f, 'shop.test')).to.deep.include({ connections: 1 });
      const again = await ok(f, 'shop.test', '/img/500x500.png');
      expect(again.result).to.include({ ok: true, format: 'png', width: 500 });
      expect(again.connections).to.equal(0);
      // Same address and port, another name: its own connection (its own certificate check).
      expect(await ok(f, 'cdn.shop.test')).to.deep.include({ connections: 1 });
      expect(await ok(f, 'cdn.shop.test')).to.deep.include({ connections: 0 });
    });

    it('keeps a connection only after a complete 200: a refusal of the server closes it', async () => {
      const f = fetcher({ maxBytes: 1024 * 1024 });
      servers.main.dropConnections();
      for (const path of ['/status/404', '/oversized']) {
        expect((await ok(f, 'shop.test', path)).result, path).to.include({ ok: false });
        const next = await ok(f, 'shop.test');
        expect(next.result).to.include({ ok: true });
        expect(next.connections, `after ${path}`).to.equal(1);
      }
    });

    it('asks again on a new connection when the server closed the kept one meanwhile', async () => {
      const f = fetcher();
      servers.main.dropConnections();
      const path = '/first-only/img/800x600.jpg';
      expect(await ok(f, 'shop.test', path)).to.deep.include({ connections: 1 });
      const again = await ok(f, 'shop.test', path);
      expect(again.result).to.include({ ok: true, width: 800 });
      expect(again.connections, 'the kept connection was reset, a new one answered').to.equal(1);
      expect(servers.requests(path)).to.be.at.least(3);
    });

    it('opens a new connection per check with idleConnections: 0', async () => {
      const f = fetcher({ idleConnections: 0 });
      servers.main.dropConnections();
      expect(await ok(f, 'shop.test')).to.deep.include({ connections: 1 });
      expect(await ok(f, 'shop.test')).to.deep.include({ connections: 1 });
    });
  });

  describe('which hosts: HTTPS on a domain or image host of the store', () => {
    it('refuses a host outside the allowed list without resolving or connecting', async () => {
      for (const host of ['evil.test', 'elsewhere.test', 'evilshop.test']) {
        const { result, connections } = await connectionsDuring(servers.main, () =>
          fetcher()(servers.url(host, '/img/800x600.jpg'), STORE),
        );
        expectReason(
          result,
          'image_unreachable',
          new RegExp(`${host.replace('.', '\\.')} is not a domain or image host of the store`),
        );
        expect(connections).to.equal(0);
      }
      expect(dnsCalls).to.deep.equal([]);
    });

    it('accepts a subdomain of a store domain, and a host listed as image host', async () => {
      expect(await fetcher()(servers.url('img.shop.test', '/img/800x600.jpg'), STORE)).to.include({ ok: true });
      expect(
        await fetcher()(servers.url('evil.test', '/img/800x600.jpg', servers.evil), ['shop.test', 'evil.test']),
      ).to.include({ ok: true });
    });

    it('matches the host without regard to case or a trailing dot', async () => {
      expect(await fetcher()(servers.url('SHOP.test.', '/img/800x600.jpg'), STORE)).to.include({ ok: true });
    });

    it('refuses http://, IP literals, credentials and non-URLs without connecting', async () => {
      const port = servers.main.port;
      const cases: [string, RegExp][] = [
        [`http://shop.test:${port}/img/800x600.jpg`, /not HTTPS/],
        [`https://127.0.0.1:${port}/img/800x600.jpg`, /127\.0\.0\.1 is not a domain/],
        [`https://[::1]:${port}/img/800x600.jpg`, /not a domain/],
        [`https://user:secret@shop.test:${port}/img/800x600.jpg`, /credentials/],
        ['not a url', /not a valid URL/],
      ];
      for (const [url, message] of cases) {
        const { result, connections } = await connectionsDuring(servers.main, () =>
          fetcher()(url, [...STORE, '127.0.0.1', '[::1]']),
        );
        expectReason(result, 'image_unreachable', message);
        expect(connections, url).to.equal(0);
      }
    });
  });

  describe('which addresses: only public ones unless allowPrivate', () => {
    const loopbacks: [string, (s: ImageServers) => CountingListener | null][] = [
      ['127.0.0.1', (s) => s.main],
      ['127.0.0.2', (s) => s.alt],
      ['::1', (s) => s.v6],
      ['::ffff:127.0.0.1', (s) => s.main],
    ];
    for (const [address, pick] of loopbacks) {
      it(`shop.test → ${address}: refused without a connection; reached with allowPrivate`, async function () {
        const listener = pick(servers);
        if (!listener) return this.skip();
        const hostMap = { 'shop.test': address };
        const url = servers.url('shop.test', '/img/800x600.jpg', listener);
        const refused = await connectionsDuring(listener, () => fetcher({ hostMap, allowPrivate: false })(url, STORE));
        expectReason(
          refused.result,
          'image_unreachable',
          /resolves to an address the check may not reach \(.*loopback\)/,
        );
        expect(refused.connections).to.equal(0);
        const allowed = await connectionsDuring(listener, () => fetcher({ hostMap, allowPrivate: true })(url, STORE));
        expect(allowed.result).to.include({ ok: true, width: 800 });
        expect(allowed.connections).to.equal(1);
      });
    }

    it('resolves names outside the host map with the lookup, and needs EVERY address to pass', async function () {
      if (!servers.alt) return this.skip();
      const lookup = async () => ['127.0.0.1', '127.0.0.2'];
      const url = servers.url('dns.shop.test', '/img/800x600.jpg');
      const onlyMain = (ip: string) => ip === '127.0.0.1';
      const before = [servers.main.connections(), servers.alt.connections()];
      expectReason(
        await fetcher({ lookup, addressAllowed: onlyMain })(url, STORE),
        'image_unreachable',
        /may not reach/,
      );
      expectReason(await fetcher({ lookup, allowPrivate: false })(url, STORE), 'image_unreachable', /may not reach/);
      expect([servers.main.connections(), servers.alt.connections()]).to.deep.equal(before);
    });

    it('refuses a name that does not resolve, or resolves to nothing', async () => {
      const url = servers.url('dns.shop.test', '/img/800x600.jpg');
      expectReason(await fetcher()(url, STORE), 'image_unreachable', /dns\.shop\.test did not resolve/);
      expect(dnsCalls).to.deep.equal(['dns.shop.test']);
      expectReason(await fetcher({ lookup: async () => [] })(url, STORE), 'image_unreachable', /did not resolve/);
      expectReason(
        await fetcher({ lookup: async () => ['not-an-ip'] })(url, STORE),
        'image_unreachable',
        /may not reach/,
      );
    });

    it('resolves once and connects to the checked address, even if DNS would answer differently later', async function () {
      if (!servers.alt) return this.skip();
      const answers = [['127.0.0.1'], ['127.0.0.2']];
      let calls = 0;
      const lookup = async () => answers[Math.min(calls++, 1)];
      const { result, connections } = await connectionsDuring(servers.alt, () =>
        fetcher({ lookup, addressAllowed: (ip) => ip === '127.0.0.1' })(
          servers.url('dns.shop.test', '/img/800x600.jpg'),
          STORE,
        ),
      );
      expect(result).to.include({ ok: true });
      expect(calls).to.equal(1);
      expect(connections).to.equal(0);
    });

    it('tries the next checked address when one refuses the connection', async () => {
      const port = await closedPort();
      const lookup = async () => ['127.0.0.1', '::1'];
      // Nothing listens on `port`: both addresses refuse, and the answer says so once.
      expectReason(
        await fetcher({ lookup })(`https://dns.shop.test:${port}/`, STORE),
        'image_unreachable',
        /ECONNREFUSED/,
      );
      if (!servers.v6) return;
      const fallback = async () => ['127.0.0.3', '::1']; // nothing listens on 127.0.0.3
      const { result, connections } = await connectionsDuring(servers.v6, () =>
        fetcher({ lookup: fallback })(
          servers.url('dns.shop.test', '/img/800x600.jpg', servers.v6 as CountingListener),
          STORE,
        ),
      );
      expect(result).to.include({ ok: true });
      expect(connections).to.equal(1);
    });
  });
});

/** A loopback port nobody listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
