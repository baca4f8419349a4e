/**
 * Test services on shared engines: each gets its own EventStoreDB stream namespace and MongoDB database, derived from
 * its DATA_DIR, and the configuration carries them to the adapters (EsdbEventStore's namespace itself is unit-tested
 * in esdb-event-store.unit.spec.ts, "keeps to its namespace").
 */
import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../infra/wiring/config.js';
import { engineEnv, namespaceOf } from '../support/engines.js';

describe('test services on shared engines', () => {
  it('without EVENTSTORE_URL / MONGO_URL: nothing (SQLite files of DATA_DIR)', () => {
    expect(engineEnv({}, '/tmp/pc-test-a')).to.deep.equal({});
  });

  it('gives each DATA_DIR its own namespace and database, the same one again for the same DATA_DIR', () => {
    const urls = {
      EVENTSTORE_URL: 'esdb://127.0.0.1:2113?tls=false',
      MONGO_URL: 'mongodb://127.0.0.1:27017/?replicaSet=rs0',
    };
    const a = engineEnv(urls, '/tmp/pc-test-a');
    const b = engineEnv(urls, '/tmp/pc-test-b');
    expect(a.EVENTSTORE_URL).to.equal(urls.EVENTSTORE_URL);
    expect(a.MONGO_URL).to.equal(urls.MONGO_URL);
    expect(a.EVENTSTORE_STREAM_PREFIX).to.not.equal(b.EVENTSTORE_STREAM_PREFIX);
    expect(a.MONGO_DB).to.not.equal(b.MONGO_DB);
    expect(engineEnv(urls, '/tmp/pc-test-a')).to.deep.equal(a);
    expect(a.EVENTSTORE_STREAM_PREFIX).to.match(/^[A-Za-z0-9_]+$/);
    expect(namespaceOf('/tmp/x')).to.match(/^t[0-9a-f]{16}$/);
    const config = loadConfig({ ADMIN_TOKEN: 'test-admin-token-0123456789', ...a });
    expect(config.eventstoreStreamPrefix).to.equal(a.EVENTSTORE_STREAM_PREFIX);
    expect(config.mongoDb).to.equal(a.MONGO_DB);
  });

  it('refuses a namespace with a dash (it would change categories) and defaults to none', () => {
    expect(() => loadConfig({ ADMIN_TOKEN: 'test-admin-token-0123456789', EVENTSTORE_STREAM_PREFIX: 'a-b' })).to.throw(
      ConfigError,
    );
    expect(() => loadConfig({ ADMIN_TOKEN: 'test-admin-token-0123456789', MONGO_DB: 'a.b' })).to.throw(ConfigError);
    const plain = loadConfig({ ADMIN_TOKEN: 'test-admin-token-0123456789' });
    expect(plain.eventstoreStreamPrefix).to.equal('');
    expect(plain.mongoDb).to.equal(undefined);
  });
});
