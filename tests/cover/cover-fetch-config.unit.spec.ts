import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { expect } from 'chai';
import {
  coverFetcherOptionsFromEnv,
  createCoverFetcher,
  parseHostMap,
} from '../../infra/adapters/cover/cover-fetcher.js';
import { loadConfig } from '../../infra/wiring/config.js';

describe('cover fetch settings from the environment', () => {
  it('reads COVER_FETCH_HOSTS as a host map, IPv6 addresses included, names lower-cased', () => {
    const options = coverFetcherOptionsFromEnv({ COVER_FETCH_HOSTS: 'shop.test=127.0.0.1, CDN.shop.test=::1,' });
    expect(options).to.deep.equal({ hostMap: { 'shop.test': '127.0.0.1', 'cdn.shop.test': '::1' } });
  });

  it('reads COVER_FETCH_ALLOW_PRIVATE=1 as on, 0 or unset as off, anything else as an error', () => {
    expect(coverFetcherOptionsFromEnv({ COVER_FETCH_ALLOW_PRIVATE: '1' })).to.deep.equal({ allowPrivate: true });
    expect(coverFetcherOptionsFromEnv({ COVER_FETCH_ALLOW_PRIVATE: '0' })).to.deep.equal({});
    expect(coverFetcherOptionsFromEnv({})).to.deep.equal({});
    expect(() => coverFetcherOptionsFromEnv({ COVER_FETCH_ALLOW_PRIVATE: 'yes' })).to.throw(
      /COVER_FETCH_ALLOW_PRIVATE must be 1 or 0/,
    );
  });

  it('refuses either setting when NODE_ENV=production, naming it', () => {
    expect(() =>
      coverFetcherOptionsFromEnv({ NODE_ENV: 'production', COVER_FETCH_HOSTS: 'shop.test=127.0.0.1' }),
    ).to.throw(/COVER_FETCH_HOSTS must not be set when NODE_ENV=production/);
    expect(() => coverFetcherOptionsFromEnv({ NODE_ENV: 'production', COVER_FETCH_ALLOW_PRIVATE: '1' })).to.throw(
      /COVER_FETCH_ALLOW_PRIVATE must not be set when NODE_ENV=production/,
    );
    expect(coverFetcherOptionsFromEnv({ NODE_ENV: 'production' })).to.deep.equal({});
    expect(coverFetcherOptionsFromEnv({ NODE_ENV: 'test', COVER_FETCH_ALLOW_PRIVATE: '1' })).to.deep.equal({
      allowPrivate: true,
    });
  });

  it('refuses malformed host maps with the entry in the message', () => {
    expect(() => parseHostMap('shop.test')).to.throw(/"shop.test" must map shop.test to an IP address/);
    expect(() => parseHostMap('shop.test=localhost')).to.throw(/must map shop.test to an IP address/);
    expect(() => parseHostMap('shop.test=127.0.0.1:8443')).to.throw(/IP address/);
    expect(() => parseHostMap('=127.0.0.1')).to.throw(/host name/);
    expect(() => parseHostMap('bad_name=127.0.0.1')).to.throw(/host name/);
    expect(() => parseHostMap('a.test=127.0.0.1,A.test=::1')).to.throw(/a.test is listed twice/);
  });

  it('createCoverFetcher refuses a host map value that is not an address', () => {
    expect(() => createCoverFetcher({ hostMap: { 'shop.test': 'example.com' } })).to.throw(/not an IP address/);
  });

  it("reads COVER_FETCH_CA_FILE as Node's root CAs plus that file, refuses an unreadable or empty one and production", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ca-file-'));
    try {
      const pem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
      fs.writeFileSync(path.join(dir, 'ca.pem'), pem);
      fs.writeFileSync(path.join(dir, 'empty.pem'), 'nothing here');
      const options = coverFetcherOptionsFromEnv({ COVER_FETCH_CA_FILE: path.join(dir, 'ca.pem') });
      expect(options.ca).to.deep.equal([...tls.rootCertificates, pem]);
      expect(() => coverFetcherOptionsFromEnv({ COVER_FETCH_CA_FILE: path.join(dir, 'missing.pem') })).to.throw(
        /COVER_FETCH_CA_FILE: cannot read .*ENOENT/,
      );
      expect(() => coverFetcherOptionsFromEnv({ COVER_FETCH_CA_FILE: path.join(dir, 'empty.pem') })).to.throw(
        /holds no PEM certificate/,
      );
      expect(() =>
        coverFetcherOptionsFromEnv({ NODE_ENV: 'production', COVER_FETCH_CA_FILE: path.join(dir, 'ca.pem') }),
      ).to.throw(/COVER_FETCH_CA_FILE must not be set when NODE_ENV=production/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the service configuration carries them, and refuses COVER_CHECK=off or a bad value in production', () => {
    // As many idle connections kept per image server as checks run at once.
    expect(loadConfig({ COVER_FETCH_HOSTS: 'shop.test=127.0.0.1' }).coverFetch).to.deep.equal({
      hostMap: { 'shop.test': '127.0.0.1' },
      idleConnections: 8,
    });
    expect(loadConfig({ COVER_CHECK_CONCURRENCY: '3' }).coverFetch).to.deep.equal({ idleConnections: 3 });
    const defaults = loadConfig({});
    expect(defaults).to.include({
      coverCheck: true,
      coverCheckConcurrency: 8,
      coverRecheckScanMs: 60_000,
      batchPasses: 4,
    });
    expect(loadConfig({ COVER_CHECK: 'off' }).coverCheck).to.equal(false);
    const production = {
      NODE_ENV: 'production',
      ADMIN_TOKEN: 'a-long-enough-admin-token',
      PUBLIC_BASE_URL: 'https://x.example',
    };
    expect(() => loadConfig({ ...production, COVER_CHECK: 'off', COVER_FETCH_ALLOW_PRIVATE: '1' })).to.throw(
      /COVER_CHECK=off is refused[\s\S]*COVER_FETCH_ALLOW_PRIVATE must not be set/,
    );
    expect(() => loadConfig({ COVER_CHECK_CONCURRENCY: '0' })).to.throw(
      /COVER_CHECK_CONCURRENCY must be an integer from 1 to 64/,
    );
  });
});
