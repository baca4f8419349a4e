import { ManualClock } from '../../shared-schema/ports/clock.js';
import { InProcessHub, InProcessMessaging } from '../../infra/adapters/messaging/in-process.js';
import { messagingContract } from './messaging-contract.js';

messagingContract('in-process', async () => {
  const clock = new ManualClock(Date.UTC(2025, 0, 1));
  const hub = new InProcessHub();
  const messaging = new InProcessMessaging(clock, hub);
  return {
    messaging,
    durable: false,
    clock,
    peer: async () => new InProcessMessaging(clock, hub),
    cleanup: () => messaging.close(),
  };
});
