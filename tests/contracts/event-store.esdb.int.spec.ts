import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { BACKWARDS, END, EventStoreDBClient } from '@eventstore/db-client';
import { EsdbEventStore } from '../../infra/adapters/esdb/event-store.js';
import { BARRIER_EVENT_TYPE, BARRIER_STREAM } from '../../infra/adapters/esdb/mapping.js';
import type { NewEvent } from '../../shared-schema/ports/event-store.js';
import { eventStoreContract } from './event-store-contract.js';
import { whenServer } from '../support/server-url.js';
import { within } from '../support/deadline.js';

const namespace = (): string => `t${randomBytes(6).toString('hex')}_`;
const ev = (type: string): NewEvent => ({ type, data: {}, metadata: { recorded_at: new Date().toISOString() } });

// Each store lives in its own stream namespace on the shared server, so runs and tests never see each other.
whenServer('EVENTSTORE_URL', 'EventStoreDB', 'EsdbEventStore (EventStoreDB)', (url) => {
  eventStoreContract('EsdbEventStore (EventStoreDB)', async () => {
    const store = EsdbEventStore.connect(url, { streamPrefix: namespace() });
    // The server is on loopback (whenServer): it books events by this machine's clock.
    return { store, cleanup: () => store.close(), bookingClock: () => Date.now() };
  });

  describe("EsdbEventStore (EventStoreDB): recordedHead's barrier", function () {
    this.timeout(20_000);
    let store: EsdbEventStore;
    let client: EventStoreDBClient;
    before(() => {
      store = EsdbEventStore.connect(url, { streamPrefix: namespace() });
      client = EventStoreDBClient.connectionString(url);
    });
    after(async () => {
      await store?.close();
      await client?.dispose();
    });

    /** The newest barrier event on the server, as the driver reads it. */
    async function lastBarrier(): Promise<{ type: string; position: number }> {
      for await (const resolved of client.readStream(BARRIER_STREAM, {
        fromRevision: END,
        direction: BACKWARDS,
        maxCount: 1,
      })) {
        const e = resolved.event;
        if (e?.position) return { type: e.type, position: Number(e.position.commit) };
      }
      throw new Error('no barrier event');
    }

    it('is written above the head it answers, outside the namespace, and kept to one event by a scavenge', async () => {
      const cat = `ct${randomBytes(6).toString('hex')}`;
      const written = await store.appendToStream(`${cat}-1`, [ev('A')]);
      const head = await store.recordedHead();
      expect(head, 'the newest event of ours, which the projections reach').to.equal(written.position);
      const barrier = await lastBarrier();
      expect(barrier.type).to.equal(BARRIER_EVENT_TYPE);
      expect(barrier.position).to.be.above(head);
      const { metadata } = await client.getStreamMetadata(BARRIER_STREAM);
      expect(metadata?.maxCount).to.equal(1);
      // The barrier is the newest record here: a read filtered on the server still ends at that head (a checkpoint
      // or "caught up" past a record that does not match), and returns only ours.
      const read = await within(store.readAll({ categories: [cat] }), 5000, 'a filtered read up to the barrier');
      expect(read.map((e) => e.type)).to.deep.equal(['A']);
      expect((await store.readAll()).every((e) => e.stream !== BARRIER_STREAM)).to.equal(true);
    });

    it('is never read as an event by a store of the production namespace', async () => {
      const cat = `ct${randomBytes(6).toString('hex')}`;
      const written = await store.appendToStream(`${cat}-1`, [ev('A')]);
      const production = EsdbEventStore.connect(url); // namespace '': every stream not `$` is its own
      try {
        await production.recordedHead();
        await store.recordedHead();
        const after = await production.readAll({ afterPosition: written.position });
        expect(after.map((e) => e.stream)).to.not.include(BARRIER_STREAM);
        const head = await production.headPosition();
        expect(head).to.not.equal((await lastBarrier()).position);
        expect(head).to.be.at.least(written.position);
      } finally {
        await production.close();
      }
    });
  });
});
