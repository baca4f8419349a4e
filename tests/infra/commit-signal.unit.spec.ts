/** The commit signal between threads: one message for a burst of commits, and again once the last one is taken. */
import { MessageChannel } from 'node:worker_threads';
import { expect } from 'chai';
import { commitSender, onCommits } from '../../infra/adapters/commit-signal.js';
import { waitFor } from '../support/wait-for.js';

describe('commit signal', () => {
  it('sends one message while one is on its way, and sends again once the receiver has taken it', async () => {
    const { port1, port2 } = new MessageChannel();
    const pending = new SharedArrayBuffer(4);
    const sender = commitSender({ port: port2, pending });
    const arrived: unknown[] = [];
    port1.on('message', (m: unknown) => arrived.push(m));
    let heard = 0;
    onCommits({ port: port1, pending }, () => heard++);
    try {
      sender.sent();
      sender.sent();
      sender.sent();
      // A marker behind the burst on the same port (messages keep their order): what came before it is the burst.
      port2.postMessage('marker');
      await waitFor(() => arrived.includes('marker'), 'the marker');
      expect(arrived).to.deep.equal([null, 'marker']);
      sender.sent();
      await waitFor(() => arrived.length === 3, 'the next signal');
      expect(arrived[2]).to.equal(null);
      expect(heard).to.equal(3);
    } finally {
      sender.close();
      port1.close();
    }
  });
});
