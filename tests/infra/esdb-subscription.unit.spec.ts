/**
 * The resubscription logic of the EventStoreDB subscription, driven by a stand-in for the driver's client whose
 * subscriptions are plain object streams we feed and break. (The driver itself runs in the contract suite.)
 */
import { PassThrough } from 'node:stream';
import { expect } from 'chai';
import { status, type ServiceError } from '@grpc/grpc-js';
import { Metadata } from '@grpc/grpc-js';
import {
  AccessDeniedError,
  CancelledError,
  DeadlineExceededError,
  UnavailableError,
  UnknownError,
  convertToCommandError,
} from '@eventstore/db-client';
import type { EventStoreDBClient, ReadAllOptions, ResolvedEvent, SubscribeToAllOptions } from '@eventstore/db-client';
import type { RecordedEvent } from '../../shared-schema/ports/event-store.js';
import { EsdbSubscription, isConnectionDrop } from '../../infra/adapters/esdb/subscription.js';

interface FakeSub extends PassThrough {
  unsubscribe(): Promise<void>;
}

class FakeClient {
  readonly calls: SubscribeToAllOptions[] = [];
  readonly reads: ReadAllOptions[] = [];
  /** What a read of `$all` answers (reads start AT their position). */
  records: ResolvedEvent[] = [];

  async *readAll(options: ReadAllOptions) {
    this.reads.push(options);
    const from = options.fromPosition;
    const start = from && typeof from === 'object' ? from.commit : 0n;
    let n = 0;
    for (const r of this.records) {
      if (r.event!.position!.commit < start) continue;
      if (n++ >= Number(options.maxCount ?? Infinity)) return;
      yield r;
    }
  }

  readonly subs: FakeSub[] = [];
  private waiters: (() => void)[] = [];

  subscribeToAll(options: SubscribeToAllOptions): FakeSub {
    const sub = Object.assign(new PassThrough({ objectMode: true }), { unsubscribe: async () => undefined });
    this.calls.push(options);
    this.subs.push(sub);
    this.waiters.splice(0).forEach((w) => w());
    return sub;
  }

  async nthSubscription(n: number): Promise<FakeSub> {
    const deadline = Date.now() + 20_000;
    while (this.subs.length < n) {
      if (Date.now() > deadline) throw new Error(`no subscription #${n}`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 50);
      });
    }
    return this.subs[n - 1];
  }

  asClient(): EventStoreDBClient {
    return this as unknown as EventStoreDBClient;
  }
}

function ev(stream: string, position: number): ResolvedEvent {
  return {
    event: {
      streamId: stream,
      id: `id-${position}`,
      isJson: true,
      revision: 0n,
      type: 'Happened',
      created: new Date(0),
      data: { position },
      metadata: { recorded_at: '2026-01-01T00:00:00.000Z' },
      position: { commit: BigInt(position), prepare: BigInt(position) },
    },
  } as unknown as ResolvedEvent;
}

async function take(it: AsyncIterator<RecordedEvent>, n: number): Promise<number[]> {
  const out: number[] = [];
  while (out.length < n) {
    const r = await it.next();
    if (r.done) break;
    out.push(r.value.position);
  }
  return out;
}

describe('EventStoreDB subscription (resubscription and close)', () => {
  it('delivers only events strictly after the start position, and only of the asked categories', async () => {
    const client = new FakeClient();
    const sub = new EsdbSubscription({
      client: client.asClient(),
      scope: { streamPrefix: '', categories: ['job'] },
      afterPosition: 100,
    });
    const it = sub[Symbol.asyncIterator]();
    const first = take(it, 2);
    const s1 = await client.nthSubscription(1);
    expect(client.calls[0].fromPosition).to.deep.equal({ commit: 100n, prepare: 100n });
    expect(client.calls[0].filter).to.deep.include({ prefixes: ['job'] });
    s1.write(ev('job-a', 100)); // the start position itself: already seen
    s1.write(ev('store-a', 150)); // another category
    s1.write(ev('job-a', 200));
    s1.write(ev('job-b', 300));
    expect(await first).to.deep.equal([200, 300]);
    await sub.close();
    expect((await it.next()).done).to.equal(true);
  });

  it('after a dropped connection, subscribes again from the last position delivered, without repeats', async () => {
    const client = new FakeClient();
    const drops: number[] = [];
    const sub = new EsdbSubscription({
      client: client.asClient(),
      scope: { streamPrefix: '' },
      afterPosition: 0,
      onDrop: (_err, attempt) => drops.push(attempt),
    });
    const it = sub[Symbol.asyncIterator]();
    const first = take(it, 2);
    const s1 = await client.nthSubscription(1);
    expect(client.calls[0].fromPosition).to.equal('start');
    s1.write(ev('x-1', 10));
    s1.write(ev('x-1', 20));
    expect(await first).to.deep.equal([10, 20]);
    const next = take(it, 2);
    s1.destroy(new UnavailableError(undefined, 'connection reset'));
    const s2 = await client.nthSubscription(2);
    expect(client.calls[1].fromPosition).to.deep.equal({ commit: 20n, prepare: 20n });
    s2.write(ev('x-1', 20)); // the server starts at the position: skipped
    s2.write(ev('x-1', 30));
    s2.write(ev('x-2', 40));
    expect(await next).to.deep.equal([30, 40]);
    expect(drops).to.deep.equal([1]);
    await sub.close();
  });

  it('close() ends an iteration that is waiting for the next event', async () => {
    const client = new FakeClient();
    const sub = new EsdbSubscription({ client: client.asClient(), scope: { streamPrefix: '' }, afterPosition: 0 });
    const it = sub[Symbol.asyncIterator]();
    const pending = it.next();
    await client.nthSubscription(1);
    await sub.close();
    expect((await pending).done).to.equal(true);
    expect(client.subs[0].destroyed).to.equal(true);
  });

  it('a refusal that retrying cannot cure stops the loop with the error', async () => {
    const client = new FakeClient();
    const sub = new EsdbSubscription({ client: client.asClient(), scope: { streamPrefix: '' }, afterPosition: 0 });
    const it = sub[Symbol.asyncIterator]();
    const pending = it.next();
    const s1 = await client.nthSubscription(1);
    s1.destroy(new AccessDeniedError(undefined, 'access denied'));
    let caught: unknown;
    try {
      await pending;
    } catch (err) {
      caught = err;
    }
    expect(caught).to.be.instanceOf(AccessDeniedError);
    expect(client.subs).to.have.length(1);
  });
});

/** What the driver makes of a gRPC status the server sends (its own conversion, not a guess). */
function fromServer(code: status, details: string): Error {
  const err: ServiceError = Object.assign(new Error(`${code} ${status[code]}: ${details}`), {
    code,
    details,
    metadata: new Metadata(),
  });
  return convertToCommandError(err);
}

describe('EventStoreDB subscription: which errors are retried', () => {
  it('retries a lost connection, a deadline, a server cancel; not an unknown error, an invalid argument or a refusal', () => {
    expect(isConnectionDrop(new UnavailableError(undefined, 'connection reset'))).to.equal(true);
    expect(isConnectionDrop(new DeadlineExceededError(undefined))).to.equal(true);
    expect(isConnectionDrop(new CancelledError(undefined))).to.equal(true);
    expect(isConnectionDrop(fromServer(status.UNAVAILABLE, 'No connection established'))).to.equal(true);
    const invalid = fromServer(status.INVALID_ARGUMENT, 'Trying to read from an invalid position');
    expect(invalid).to.be.instanceOf(UnknownError); // the driver has no class for InvalidArgument
    expect(isConnectionDrop(invalid)).to.equal(false);
    expect(isConnectionDrop(fromServer(status.INTERNAL, 'boom'))).to.equal(false);
    expect(isConnectionDrop(fromServer(status.FAILED_PRECONDITION, 'nope'))).to.equal(false);
    expect(isConnectionDrop(new AccessDeniedError(undefined, 'access denied'))).to.equal(false);
    expect(isConnectionDrop(new Error('bug'))).to.equal(false);
  });

  it('a start the server refuses (InvalidArgument) ends the iteration with the error: no resubscription, no drop reported', async () => {
    const client = new FakeClient();
    const drops: unknown[] = [];
    const sub = new EsdbSubscription({
      client: client.asClient(),
      scope: { streamPrefix: '' },
      afterPosition: 1234,
      onDrop: (e) => drops.push(e),
    });
    const it = sub[Symbol.asyncIterator]();
    const pending = it.next();
    const s1 = await client.nthSubscription(1);
    s1.destroy(fromServer(status.INVALID_ARGUMENT, 'Trying to read from an invalid position'));
    const caught = await pending.then(
      () => 'no error',
      (e: unknown) => e,
    );
    expect(caught).to.be.instanceOf(UnknownError);
    expect((await it.next()).done).to.equal(true);
    expect(client.subs).to.have.length(1);
    expect(drops).to.deep.equal([]);
  });

  it('a negative start ends the iteration with a RangeError before anything is sent', async () => {
    const client = new FakeClient();
    const sub = new EsdbSubscription({ client: client.asClient(), scope: { streamPrefix: '' }, afterPosition: -1 });
    const caught = await sub[Symbol.asyncIterator]()
      .next()
      .then(
        () => 'no error',
        (e: unknown) => e,
      );
    expect(caught).to.be.instanceOf(RangeError);
    expect(client.subs).to.have.length(0);
  });

  it('fromPosition (inclusive) delivers the event at the position, read first, then subscribes after it', async () => {
    const client = new FakeClient();
    client.records = [ev('job-a', 100), ev('job-a', 200), ev('job-b', 300)];
    const sub = new EsdbSubscription({
      client: client.asClient(),
      scope: { streamPrefix: '', categories: ['job'] },
      fromPosition: 200,
    });
    const it = sub[Symbol.asyncIterator]();
    const got = take(it, 2);
    const s1 = await client.nthSubscription(1);
    expect(client.reads[0]).to.deep.include({ fromPosition: { commit: 200n, prepare: 200n }, maxCount: 1 });
    expect(client.calls[0].fromPosition).to.deep.equal({ commit: 200n, prepare: 200n });
    s1.write(ev('job-a', 200)); // a server that starts AT the position: skipped, already delivered
    s1.write(ev('job-b', 300));
    expect(await got).to.deep.equal([200, 300]);
    await sub.close();
  });
});
