import { expect } from 'chai';
import { ManualClock } from '../../shared-schema/ports/clock.js';
import { NatsMessaging } from '../../infra/adapters/messaging/nats.js';
import { startNatsServer, type NatsServer } from '../support/nats-server.js';
import { messagingContract } from './messaging-contract.js';

describe('nats messaging (real nats-server)', function () {
  let server: NatsServer;
  let prefixes = 0;

  before(async function () {
    this.timeout(20_000);
    server = await startNatsServer();
  });

  after(async function () {
    await server?.stop();
  });

  // Each test gets its own prefix (its own subjects, buckets and streams) on the one server.
  messagingContract('nats', async () => {
    const prefix = `t${++prefixes}`;
    const messaging = await NatsMessaging.connect({ servers: server.url, prefix });
    return {
      messaging,
      durable: true,
      peer: () => NatsMessaging.connect({ servers: server.url, prefix }),
      cleanup: () => messaging.close(),
    };
  });

  describe('counter windows', function () {
    it('restarts a counter when the injected clock passes its TTL, not the server clock', async function () {
      const clock = new ManualClock(Date.UTC(2025, 0, 1));
      const messaging = await NatsMessaging.connect({ servers: server.url, prefix: `clock${++prefixes}`, clock });
      try {
        expect(await messaging.increment('w', 1, 3_600_000)).to.equal(1);
        clock.advance(3_599_999);
        expect(await messaging.increment('w', 1, 3_600_000)).to.equal(2);
        clock.advance(1);
        expect(await messaging.increment('w', 1, 3_600_000)).to.equal(1);
      } finally {
        await messaging.close();
      }
    });
  });
});
