/**
 * The projection thread as the embedded service runs it: woken by the event store's writer thread (not by a poll, not
 * by the event loop; by the event loop when the store commits there), its committed position read from shared
 * memory, and a wait told once the thread commits it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { SqliteEventStore } from '../../infra/adapters/sqlite/event-store.js';
import { SqliteReadStore } from '../../infra/adapters/sqlite/read-store.js';
import { ProjectionThread } from '../../infra/wiring/projection-thread.js';
import { systemClock } from '../../shared-schema/ports/clock.js';
import type { NewEvent } from '../../shared-schema/ports/event-store.js';

const noted = (): NewEvent => ({ type: 'Noted', data: {}, metadata: { recorded_at: new Date().toISOString() } });
const quiet = { error: () => undefined, warn: () => undefined };
/** Longer than any test: the thread's reader never looks by itself, so only the event store's signal moves it. */
const NO_POLL_MS = 3_600_000;

for (const writerThread of [true, false])
  describe(`ProjectionThread, the event log committed ${writerThread ? 'by its writer thread' : 'on the event loop'}`, function () {
    this.timeout(60_000);
    let dir: string;
    let events: SqliteEventStore;
    let reads: SqliteReadStore;
    let thread: ProjectionThread;
    beforeEach(async () => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'projection-thread-'));
      const files = { events: path.join(dir, 'events.db'), reads: path.join(dir, 'read.db') };
      reads = SqliteReadStore.open({ path: files.reads, sweepIntervalMs: 0 });
      events = SqliteEventStore.open({ path: files.events, writerThread });
      thread = new ProjectionThread(files, systemClock, quiet, NO_POLL_MS);
      events.signalCommits(thread.commitSignal);
      await thread.start();
    });
    afterEach(async () => {
      await thread.stop();
      await events.close();
      await reads.close();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    it('commits what the event store tells it of, and tells a wait made before the commit', async () => {
      const first = await events.appendToStream('job-1', [noted()]);
      expect(await thread.waitFor(first.position, 30_000)).to.equal(true);
      expect(thread.position).to.equal(first.position);
      // Waits made before the commit, for it and for one after it: the first is told, the second still waits.
      const next = thread.waitFor(first.position + 1, 30_000);
      const beyond = thread.waitFor(first.position + 2, 200);
      const second = await events.appendToStream('job-1', [noted()]);
      expect(second.position).to.equal(first.position + 1);
      expect(await next).to.equal(true);
      expect(await beyond).to.equal(false);
      expect(thread.position).to.equal(second.position);
    });

    it('counts the units holding partner events before their position is seen', async () => {
      const before = thread.partnerUnits;
      const job = await events.appendToStream('job-1', [noted()]);
      expect(await thread.waitFor(job.position, 30_000)).to.equal(true);
      expect(thread.partnerUnits).to.equal(before);
      const partner = await events.appendToStream('partner-p1', [noted()]);
      expect(await thread.waitFor(partner.position, 30_000)).to.equal(true);
      expect(thread.partnerUnits).to.equal(before + 1);
    });

    it('answers a wait false once the thread has stopped', async () => {
      await thread.stop();
      expect(await thread.waitFor(thread.position + 1, 30_000)).to.equal(false);
    });
  });
