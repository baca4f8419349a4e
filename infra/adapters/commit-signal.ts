/**
 * The event log's commits, told to a thread that follows the log (the projection thread) by the thread that made
 * them: one empty message on a MessagePort after a commit that wrote events, unless one is still on its way (a
 * shared cell, set by the sender, cleared by the receiver as it takes the message and before it reads the log, so
 * that read sees every commit the skipped messages would have told). A burst of commits costs one message, and the
 * event loop that answered the appends posts nothing: with the event store's writer thread, that thread sends.
 */
import type { MessagePort } from 'node:worker_threads';

/** One end of the signal: its side's port, and the cell both ends share (one Int32). */
export interface CommitSignal {
  port: MessagePort;
  pending: SharedArrayBuffer;
}

/** The sending end: `sent()` after each commit that wrote events. */
export function commitSender(signal: CommitSignal): { sent(): void; close(): void } {
  const pending = new Int32Array(signal.pending);
  return {
    sent: () => {
      if (Atomics.compareExchange(pending, 0, 0, 1) === 0) signal.port.postMessage(null);
    },
    close: () => signal.port.close(),
  };
}

/** The receiving end: `heard()` runs once the cell is cleared, for each message. */
export function onCommits(signal: CommitSignal, heard: () => void): void {
  const cell = new Int32Array(signal.pending);
  signal.port.on('message', () => {
    Atomics.store(cell, 0, 0); // before the read it wakes: a commit from now on sends again
    heard();
  });
}
