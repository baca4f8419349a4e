/**
 * The glue of the separate processes: `PositionWatcher` (waits for the projections' committed position, seen
 * from another process), the `appended` wake-up, and the manual clock shared through a file.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { InProcessHub, InProcessMessaging } from '../../infra/adapters/messaging/in-process.js';
import { SqliteReadStore } from '../../infra/adapters/sqlite/read-store.js';
import { SqliteEventStore } from '../../infra/adapters/sqlite/event-store.js';
import {
  PositionWatcher,
  announceAppends,
  announceProjected,
  followAppends,
} from '../../infra/wiring/cross-process.js';
import { SharedFileClock } from '../../infra/wiring/shared-clock.js';
import { within } from '../support/deadline.js';

describe('cross-process glue', () => {
  let dir: string;
  let reads: SqliteReadStore;
  let hub: InProcessHub;
  let messaging: InProcessMessaging;

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-glue-'));
    reads = SqliteReadStore.open({ path: path.join(dir, 'read.db'), sweepIntervalMs: 0 });
    hub = new InProcessHub();
    messaging = new InProcessMessaging(undefined, hub);
  });
  afterEach(async () => {
    await messaging.close();
    await reads.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const checkpoint = (name: string, position: number) => reads.transact((tx) => tx.setCheckpoint(name, position));

  describe('PositionWatcher', () => {
    it('starts from the lowest checkpoint of the projectors it follows', async () => {
      await checkpoint('a', 40);
      await checkpoint('b', 30);
      const watcher = await PositionWatcher.start({ reads, messaging, checkpointNames: ['a', 'b'] });
      try {
        expect(watcher.position).to.equal(30);
        expect(await watcher.waitFor(30, 1000)).to.equal(true);
      } finally {
        await watcher.close();
      }
    });

    it('resolves a wait on the `projected` message of another process, before any poll', async () => {
      const watcher = await PositionWatcher.start({ reads, messaging, checkpointNames: ['a'], pollIntervalMs: 60_000 });
      const other = new InProcessMessaging(undefined, hub); // the projections process's connection
      try {
        const waiting = watcher.waitFor(12, 30_000); // below the 60 s poll: only the message can end it
        announceProjected(other, 12);
        expect(await within(waiting, 30_000, 'wait on the message')).to.equal(true);
      } finally {
        await other.close();
        await watcher.close();
      }
    });

    it('resolves by polling the checkpoints when the message is lost', async () => {
      const watcher = await PositionWatcher.start({ reads, messaging, checkpointNames: ['a', 'b'], pollIntervalMs: 5 });
      try {
        const waiting = watcher.waitFor(7, 30_000);
        await checkpoint('a', 9);
        await checkpoint('b', 7);
        expect(await within(waiting, 30_000, 'wait on the poll')).to.equal(true);
        expect(watcher.position).to.equal(7);
      } finally {
        await watcher.close();
      }
    });

    it('answers false after the timeout when the position is not reached, and on close', async () => {
      await checkpoint('a', 3);
      const watcher = await PositionWatcher.start({ reads, messaging, checkpointNames: ['a'], pollIntervalMs: 5 });
      expect(await watcher.waitFor(4, 50)).to.equal(false);
      const pending = watcher.waitFor(4, 60_000);
      await watcher.close();
      expect(await pending).to.equal(false);
    });
  });

  it('wakes a subscription of another connection to the event file on `appended`, without waiting for its poll', async () => {
    const file = path.join(dir, 'events.db');
    const writer = SqliteEventStore.open({ path: file });
    const reader = SqliteEventStore.open({ path: file, pollIntervalMs: 60_000 }); // its own poll would never come
    const readerMessaging = new InProcessMessaging(undefined, hub);
    const stopAnnouncing = announceAppends(writer, messaging);
    const stopFollowing = await followAppends(reader, readerMessaging);
    const subscription = reader.subscribeToAll();
    try {
      const it = subscription[Symbol.asyncIterator]();
      const next = it.next();
      await writer.appendToStream('product-live:p:1', [
        { type: 'T', data: {}, metadata: { recorded_at: '2026-01-01T00:00:00Z' } },
      ]);
      const got = await within(next, 2000, 'the woken subscription');
      expect(got.value?.stream).to.equal('product-live:p:1');
    } finally {
      stopAnnouncing();
      await stopFollowing();
      await subscription.close();
      await readerMessaging.close();
      await reader.close();
      await writer.close();
    }
  });

  it('shares one manual clock between instances on one file: set and advance are seen by the next now()', () => {
    const file = path.join(dir, 'clock');
    const a = new SharedFileClock(file, new Date('2026-01-02T00:00:00Z'));
    const b = new SharedFileClock(file, new Date('2030-01-01T00:00:00Z')); // the file exists: its time wins
    expect(b.now().toISOString()).to.equal('2026-01-02T00:00:00.000Z');
    a.advance(1500);
    expect(b.now().toISOString()).to.equal('2026-01-02T00:00:01.500Z');
    b.set(new Date('2026-03-01T00:00:00Z'));
    expect(a.now().toISOString()).to.equal('2026-03-01T00:00:00.000Z');
    expect(() => a.advance(-1)).to.throw(RangeError);
  });
});
