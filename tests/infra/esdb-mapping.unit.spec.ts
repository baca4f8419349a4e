import { expect } from 'chai';
import type { ResolvedEvent } from '@eventstore/db-client';
import {
  BARRIER_EVENT_TYPE,
  BARRIER_STREAM,
  appendBytes,
  bookingTime,
  fromEsdbCurrent,
  inScope,
  numberToPosition,
  positionToNumber,
  serverFilter,
  serverPrefixes,
  toEsdbExpected,
  toRecorded,
  uuidv7,
} from '../../infra/adapters/esdb/mapping.js';
import { isLoopbackUrl, urlHosts } from '../support/server-url.js';
import { CATEGORIES } from '../../shared-schema/domain/streams.js';

function resolved(stream: string, type: string, over: Record<string, unknown> = {}): ResolvedEvent {
  return {
    event: {
      streamId: stream,
      id: '0190d5a2-0000-7000-8000-000000000001',
      isJson: true,
      revision: 3n,
      type,
      created: new Date('2026-01-02T03:04:05.000Z'),
      data: { a: 1 },
      metadata: { recorded_at: '2026-01-02T03:04:05.678Z', request_id: 'req_1' },
      position: { commit: 4242n, prepare: 4242n },
      ...over,
    },
  } as unknown as ResolvedEvent;
}

describe('EventStoreDB mapping', () => {
  it('maps every expected-revision kind to the driver and refuses revisions that are not revisions', () => {
    expect(toEsdbExpected('any')).to.equal('any');
    expect(toEsdbExpected('no_stream')).to.equal('no_stream');
    expect(toEsdbExpected('stream_exists')).to.equal('stream_exists');
    expect(toEsdbExpected(0)).to.equal(0n);
    expect(toEsdbExpected(17)).to.equal(17n);
    expect(() => toEsdbExpected(-1)).to.throw(RangeError);
    expect(() => toEsdbExpected(1.5)).to.throw(RangeError);
  });

  it("maps the server's current revision back to the port's actual revision", () => {
    expect(fromEsdbCurrent('no_stream')).to.equal('no_stream');
    expect(fromEsdbCurrent(5n)).to.equal(5);
  });

  it('turns commit positions into numbers and refuses one that would not fit below 2^53', () => {
    expect(positionToNumber({ commit: 123n, prepare: 123n })).to.equal(123);
    expect(positionToNumber(BigInt(Number.MAX_SAFE_INTEGER))).to.equal(Number.MAX_SAFE_INTEGER);
    expect(() => positionToNumber(BigInt(Number.MAX_SAFE_INTEGER) + 1n)).to.throw(RangeError);
    expect(numberToPosition(99)).to.deep.equal({ commit: 99n, prepare: 99n });
  });

  it('makes time-ordered version-7 UUIDs', () => {
    const a = uuidv7(1_700_000_000_000);
    const b = uuidv7(1_700_000_000_001);
    expect(a).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(a < b).to.equal(true);
    expect(a.replace(/-/g, '').slice(0, 12)).to.equal((1_700_000_000_000).toString(16).padStart(12, '0'));
  });

  it('counts the UTF-8 bytes of data and metadata the server holds against its append limit', () => {
    const bytes = appendBytes([{ type: 'T', data: { s: 'é' }, metadata: { recorded_at: 'x' } }]);
    expect(bytes).to.equal(Buffer.byteLength('{"s":"é"}') + Buffer.byteLength('{"recorded_at":"x"}'));
  });

  it('keeps system events, other namespaces and other categories out, with exact categories', () => {
    const scope = { streamPrefix: 't1_', categories: ['store'] };
    expect(inScope('t1_store-live:p:s1', 'StoreRegistered', scope)).to.equal(true);
    expect(inScope('t1_storeindex-live:p', 'X', scope)).to.equal(false);
    expect(inScope('t2_store-live:p:s1', 'StoreRegistered', scope)).to.equal(false);
    expect(inScope('$stats-127.0.0.1:2113', 'T', { streamPrefix: '' })).to.equal(false);
    expect(inScope('store-1', '$metadata', { streamPrefix: '' })).to.equal(false);
    expect(inScope('store', 'T', { streamPrefix: '', categories: ['store'] })).to.equal(true);
    expect(serverPrefixes(scope)).to.deep.equal(['t1_store']);
    expect(serverPrefixes({ streamPrefix: 't1_' })).to.deep.equal(['t1_']);
  });

  it("keeps the recorded head's barrier stream out of every read, in production and in a namespace", () => {
    const categories = Object.values(CATEGORIES);
    expect(inScope(BARRIER_STREAM, BARRIER_EVENT_TYPE, { streamPrefix: '' })).to.equal(false);
    expect(inScope(BARRIER_STREAM, BARRIER_EVENT_TYPE, { streamPrefix: '', categories })).to.equal(false);
    expect(inScope(BARRIER_STREAM, BARRIER_EVENT_TYPE, { streamPrefix: 'recordedhead_' })).to.equal(false);
    expect(toRecorded(resolved(BARRIER_STREAM, BARRIER_EVENT_TYPE), { streamPrefix: '' })).to.equal(undefined);
    // No category filter on the server (the projections' subscription) even sends it over the wire.
    for (const prefix of serverPrefixes({ streamPrefix: '', categories }))
      expect(BARRIER_STREAM.startsWith(prefix), prefix).to.equal(false);
    // The name of a stream of ours next to it is still ours.
    expect(inScope(`${BARRIER_STREAM}x`, 'T', { streamPrefix: '' })).to.equal(true);
  });

  it('filters subscriptions on the server: by stream prefix, or by excluding system event types', () => {
    expect(serverFilter({ streamPrefix: '', categories: ['store', 'job'] })).to.include({ filterOn: 'streamName' });
    expect(serverFilter({ streamPrefix: '', categories: ['store', 'job'] })).to.deep.include({
      prefixes: ['store', 'job'],
    });
    const all = serverFilter({ streamPrefix: '' });
    expect(all).to.include({ filterOn: 'eventType' });
    expect(new RegExp((all as { regex: string }).regex).test('$metadata')).to.equal(false);
    expect(new RegExp((all as { regex: string }).regex).test('ProductUpserted')).to.equal(true);
  });

  it('converts a resolved event to the port shape, without the namespace', () => {
    const e = toRecorded(resolved('t1_product-live:p:sku', 'ProductUpserted'), { streamPrefix: 't1_' });
    expect(e).to.deep.equal({
      id: '0190d5a2-0000-7000-8000-000000000001',
      stream: 'product-live:p:sku',
      revision: 3,
      position: 4242,
      type: 'ProductUpserted',
      data: { a: 1 },
      metadata: { recorded_at: '2026-01-02T03:04:05.678Z', request_id: 'req_1' },
    });
  });

  it('gives events without our metadata the time the server recorded them', () => {
    const e = toRecorded(resolved('x-1', 'T', { metadata: undefined }), { streamPrefix: '' });
    expect(e?.metadata).to.deep.equal({ recorded_at: '2026-01-02T03:04:05.000Z' });
  });

  it('books an event at the time the server recorded it, never before the time its command appended it with', () => {
    const held = resolved('x-1', 'T', {
      created: new Date('2026-01-02T03:04:09.000Z'), // the server recorded it 4 s after its command read the clock
      metadata: { recorded_at: '2026-01-02T03:04:05.678Z', request_id: 'req_1' },
    });
    expect(toRecorded(held, { streamPrefix: '' })?.metadata).to.deep.equal({
      recorded_at: '2026-01-02T03:04:09.000Z',
      request_id: 'req_1',
    });
    // A service clock ahead of the leader's: the command's time stands.
    expect(toRecorded(resolved('x-1', 'T'), { streamPrefix: '' })?.metadata.recorded_at).to.equal(
      '2026-01-02T03:04:05.678Z',
    );
    // The manual clock: the command's time, whatever the server's.
    expect(toRecorded(held, { streamPrefix: '', booking: 'event' })?.metadata.recorded_at).to.equal(
      '2026-01-02T03:04:05.678Z',
    );
    expect(bookingTime('not a time', new Date('2026-01-02T03:04:09.000Z'), 'event')).to.equal(
      '2026-01-02T03:04:09.000Z',
    );
  });

  it('skips events that are not ours and refuses a read that carries no position', () => {
    expect(toRecorded(resolved('x-1', 'T', { isJson: false }), { streamPrefix: '' })).to.equal(undefined);
    expect(toRecorded(resolved('$$x-1', '$metadata'), { streamPrefix: '' })).to.equal(undefined);
    expect(toRecorded({}, { streamPrefix: '' })).to.equal(undefined);
    expect(() => toRecorded(resolved('x-1', 'T', { position: undefined }), { streamPrefix: '' })).to.throw(/position/);
    const noPos = { commit: (1n << 64n) - 1n, prepare: (1n << 64n) - 1n };
    expect(() => toRecorded(resolved('x-1', 'T', { position: noPos }), { streamPrefix: '' })).to.throw(/position/);
  });
});

describe('server URLs of the contract suites', () => {
  it('reads the hosts of esdb and mongodb connection strings', () => {
    expect(urlHosts('esdb://127.0.0.1:2113?tls=false')).to.deep.equal(['127.0.0.1']);
    expect(urlHosts('mongodb://u:p@[::1]:27017,localhost:27018/db?replicaSet=rs0')).to.deep.equal(['::1', 'localhost']);
  });

  it('accepts only loopback hosts', () => {
    expect(isLoopbackUrl('esdb://127.0.0.1:2113?tls=false')).to.equal(true);
    expect(isLoopbackUrl('mongodb://localhost:27017/?replicaSet=rs0')).to.equal(true);
    expect(isLoopbackUrl('mongodb://127.0.0.1:1,db.example.com:2')).to.equal(false);
    expect(isLoopbackUrl('esdb://10.0.0.5:2113')).to.equal(false);
    expect(isLoopbackUrl('not a url')).to.equal(false);
  });
});
