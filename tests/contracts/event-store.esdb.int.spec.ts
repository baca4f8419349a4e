import { randomBytes } from 'node:crypto';
import { EsdbEventStore } from '../../infra/adapters/esdb/event-store.js';
import { eventStoreContract } from './event-store-contract.js';
import { whenServer } from '../support/server-url.js';

// Each store lives in its own stream namespace on the shared server, so runs and tests never see each other.
whenServer('EVENTSTORE_URL', 'EventStoreDB', 'EsdbEventStore (EventStoreDB)', (url) => {
  eventStoreContract('EsdbEventStore (EventStoreDB)', async () => {
    const store = EsdbEventStore.connect(url, { streamPrefix: `t${randomBytes(6).toString('hex')}_` });
    // The server is on loopback (whenServer): it books events by this machine's clock.
    return { store, cleanup: () => store.close(), bookingClock: () => Date.now() };
  });
});
