import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../infra/wiring/config.js';

describe('configuration: rate brake limits and the event store writer', () => {
  it("defaults to the contract's 600 writes and 1200 reads per minute per key", () => {
    expect(loadConfig({}).rateLimits).to.deep.equal({ write: 600, read: 1200 });
  });

  it('takes RATE_LIMIT_WRITES / RATE_LIMIT_READS and refuses values that are not positive integers', () => {
    expect(loadConfig({ RATE_LIMIT_WRITES: '100000', RATE_LIMIT_READS: '5' }).rateLimits).to.deep.equal({
      write: 100_000,
      read: 5,
    });
    try {
      loadConfig({ RATE_LIMIT_WRITES: '0', RATE_LIMIT_READS: 'many' });
      expect.fail('expected a ConfigError');
    } catch (err) {
      expect(err).to.be.instanceOf(ConfigError);
      expect((err as ConfigError).problems).to.deep.equal([
        'RATE_LIMIT_WRITES must be a positive integer, got "0"',
        'RATE_LIMIT_READS must be a positive integer, got "many"',
      ]);
    }
  });

  it('bounds what a body may cost: 30 s to arrive, 8 uploads in flight per key, 16 per address, or as set', () => {
    expect(loadConfig({}).bodies).to.deep.equal({ deadlineMs: 30_000, uploadsPerKey: 8, uploadsPerAddress: 16 });
    expect(
      loadConfig({ BODY_DEADLINE_MS: '1000', UPLOADS_PER_KEY: '2', UPLOADS_PER_ADDRESS: '3' }).bodies,
    ).to.deep.equal({ deadlineMs: 1000, uploadsPerKey: 2, uploadsPerAddress: 3 });
    expect(() => loadConfig({ BODY_DEADLINE_MS: '10', UPLOADS_PER_KEY: '0' }))
      .to.throw(ConfigError)
      .with.property('problems')
      .that.deep.equals([
        'BODY_DEADLINE_MS must be an integer from 100 to 600000, got "10"',
        'UPLOADS_PER_KEY must be an integer from 1 to 10000, got "0"',
      ]);
  });

  it('commits the event store in a writer thread unless SQLITE_WRITER_THREAD=off', () => {
    expect(loadConfig({}).sqliteWriterThread).to.equal(true);
    expect(loadConfig({ SQLITE_WRITER_THREAD: 'off' }).sqliteWriterThread).to.equal(false);
    expect(() => loadConfig({ SQLITE_WRITER_THREAD: 'maybe' })).to.throw(
      ConfigError,
      'SQLITE_WRITER_THREAD must be one of on, off',
    );
  });

  it('takes the cover-check queue settings: deliveries before a dead letter, retry pause, worker role', () => {
    const defaults = loadConfig({});
    expect([defaults.coverCheckMaxDeliveries, defaults.coverCheckRetryMs, defaults.coverCheckWorker]).to.deep.equal([
      5,
      1000,
      false,
    ]);
    const set = loadConfig({ COVER_CHECK_MAX_DELIVERIES: '2', COVER_CHECK_RETRY_MS: '0', COVER_CHECK_WORKER: 'on' });
    expect([set.coverCheckMaxDeliveries, set.coverCheckRetryMs, set.coverCheckWorker]).to.deep.equal([2, 0, true]);
    try {
      loadConfig({ COVER_CHECK_MAX_DELIVERIES: '0', COVER_CHECK_RETRY_MS: '-1', COVER_CHECK_WORKER: 'yes' });
      expect.fail('expected a ConfigError');
    } catch (err) {
      expect((err as ConfigError).problems).to.have.members([
        'COVER_CHECK_MAX_DELIVERIES must be an integer from 1 to 100, got "0"',
        'COVER_CHECK_RETRY_MS must be an integer from 0 to 60000, got "-1"',
        'COVER_CHECK_WORKER must be one of on, off, got "yes"',
      ]);
    }
  });

  it('takes ADMIN_TOKENS as name:token pairs and refuses a bad one without printing any token', () => {
    const tokens = loadConfig({ ADMIN_TOKENS: 'alice:alice-token-0123456789, bob:bob-token-0123456789' }).adminTokens;
    expect(tokens).to.deep.equal([
      { name: 'alice', token: 'alice-token-0123456789' },
      { name: 'bob', token: 'bob-token-0123456789' },
    ]);
    expect(loadConfig({}).adminTokens).to.deep.equal([]);
    try {
      loadConfig({
        ADMIN_TOKEN: 'shared-token-0123456789',
        ADMIN_TOKENS:
          'Alice:alice-token-0123456789,bob:short,carol:shared-token-0123456789,dan:a-token-0123456789,dan:b-token-0123456789,no-colon',
      });
      expect.fail('expected a ConfigError');
    } catch (err) {
      expect(err).to.be.instanceOf(ConfigError);
      const problems = (err as ConfigError).problems;
      expect(problems).to.deep.equal([
        'ADMIN_TOKENS entry 1 must be name:token with a name of a-z, 0-9, . _ - (at most 32)',
        'ADMIN_TOKENS token of bob must be at least 16 characters',
        'ADMIN_TOKENS token of carol is not unique (each operator has a token of their own)',
        'ADMIN_TOKENS names dan twice',
        'ADMIN_TOKENS entry 6 must be name:token with a name of a-z, 0-9, . _ - (at most 32)',
      ]);
      expect(problems.join('\n')).not.to.match(/token-0123456789|short/);
    }
  });

  it('reports every bad value at once, never repeating a secret, and the production rules', () => {
    try {
      loadConfig({
        NODE_ENV: 'production',
        PORT: '70000',
        ADMIN_TOKEN: 'short-secret',
        CLOCK: 'manual',
        PUBLIC_BASE_URL: 'http://shop.example',
        SEARCHES_IN_FLIGHT: '0',
        MONGO_DB: 'no-dash',
        COVER_CHECK: 'off',
        COVER_FETCH_ALLOW_PRIVATE: '1',
      });
      expect.fail('expected a ConfigError');
    } catch (err) {
      expect((err as ConfigError).problems).to.have.members([
        'PORT must be a port number (0-65535), got "70000"',
        'ADMIN_TOKEN must be at least 16 characters',
        'PUBLIC_BASE_URL must be https:// when NODE_ENV=production',
        'CLOCK=manual is refused when NODE_ENV=production',
        'MONGO_DB must be letters, digits and _ (at most 60), got "no-dash"',
        'COVER_CHECK=off is refused when NODE_ENV=production',
        'SEARCHES_IN_FLIGHT must be an integer from 1 to 10000, got "0"',
        'COVER_FETCH_ALLOW_PRIVATE must not be set when NODE_ENV=production: they exist for tests and let the cover check reach addresses it must refuse',
      ]);
    }
    expect(() => loadConfig({ NODE_ENV: 'production', PUBLIC_BASE_URL: 'https://shop.example' })).to.throw(
      ConfigError,
      'ADMIN_TOKEN is required when NODE_ENV=production',
    );
  });

  it('derives the base URLs from PORT, strips their trailing slashes and counts an empty variable as unset', () => {
    const derived = loadConfig({ PORT: '9000', HOST: '', EVENTSTORE_STREAM_PREFIX: '' });
    expect([derived.apiBaseUrl, derived.publicBaseUrl, derived.host, derived.eventstoreStreamPrefix]).to.deep.equal([
      'http://127.0.0.1:9000/v1',
      'http://127.0.0.1:9000',
      '127.0.0.1',
      '',
    ]);
    const set = loadConfig({ PUBLIC_BASE_URL: 'https://shop.example//', MONGO_DB: '' });
    expect([set.publicBaseUrl, set.mongoDb, set.coverFetch.idleConnections]).to.deep.equal([
      'https://shop.example',
      undefined,
      8,
    ]);
  });
});
