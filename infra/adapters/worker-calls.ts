/**
 * Calls to a worker thread that answers each message once: every call posts `{ id, ...message }`, the thread answers
 * `{ id, ... }`, and the call's promise settles with that answer. The thread keeps the process alive only while a
 * call is in flight. If it dies, every pending and later call fails with the reason. `close()` posts
 * `{ close: true }` (after the calls already sent) and waits for the thread to end.
 *
 * Used by the event store's writer thread and the history file's writer thread.
 */
import { Worker, type TransferListItem } from 'node:worker_threads';

export class WorkerCalls<Answer extends { id: number }> {
  private readonly worker: Worker;
  private readonly pending = new Map<number, { resolve: (answer: Answer) => void; reject: (error: unknown) => void }>();
  private nextId = 1;
  private failure: Error | undefined;

  /** `name` says which thread in the error of a thread that ended. */
  constructor(script: URL, workerData: unknown, name: string) {
    this.worker = new Worker(script, { workerData });
    this.worker.unref();
    this.worker.on('message', (answer: Answer) => {
      const waiter = this.pending.get(answer.id);
      this.pending.delete(answer.id);
      if (this.pending.size === 0) this.worker.unref();
      waiter?.resolve(answer);
    });
    this.worker.on('error', (error) => this.fail(error));
    this.worker.on('exit', (code) => this.fail(new Error(`the ${name} exited (${code})`)));
  }

  call(message: object, transfer?: readonly TransferListItem[]): Promise<Answer> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    return new Promise<Answer>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.ref();
      this.worker.postMessage({ id, ...message }, transfer);
    });
  }

  /** Posts a message the thread does not answer (after the calls already sent). */
  send(message: object, transfer?: readonly TransferListItem[]): void {
    if (!this.failure) this.worker.postMessage(message, transfer);
  }

  /** Ends the thread after the calls already sent (nothing to do if it has died). */
  async close(): Promise<void> {
    if (this.failure) return;
    const exited = new Promise<void>((resolve) => this.worker.once('exit', () => resolve()));
    this.worker.ref();
    this.worker.postMessage({ close: true });
    await exited;
  }

  private fail(error: Error): void {
    this.failure ??= error;
    for (const waiter of this.pending.values()) waiter.reject(this.failure);
    this.pending.clear();
  }
}
