/** The read-only mode of the SQLite event store (replays, audits): it follows a live writer and never writes. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { SqliteEventStore } from '../../infra/adapters/sqlite/event-store.js';
import type { NewEvent, RecordedEvent } from '../../shared-schema/ports/event-store.js';
import { within } from '../support/deadline.js';

const ev = (type: string): NewEvent => ({
  type,
  data: { n: 1 },
  metadata: { recorded_at: '2024-05-01T12:00:00.000Z' },
});

describe('SqliteEventStore opened read-only', function () {
  let dir: string;
  let dbPath: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sqlite-event-store-ro-'));
    dbPath = path.join(dir, 'events.db');
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('reads what a writer committed, follows its new commits, and refuses appends', async () => {
    const writer = SqliteEventStore.open({ path: dbPath });
    const reader = SqliteEventStore.open({ path: dbPath, readOnly: true, pollIntervalMs: 5 });
    try {
      await writer.appendToStream('product-live:p:a', [ev('A'), ev('B')], 'no_stream');
      expect((await reader.readStream('product-live:p:a')).map((e) => e.type)).to.deep.equal(['A', 'B']);
      expect(await reader.headPosition()).to.equal(await writer.headPosition());
      const subscription = reader.subscribeToAll();
      const seen: RecordedEvent[] = [];
      const collected = (async () => {
        for await (const e of subscription) {
          seen.push(e);
          if (seen.length === 3) break;
        }
      })();
      await writer.appendToStream('product-live:p:a', [ev('C')], 1);
      await within(collected, 5000, 'the read-only subscription');
      expect(seen.map((e) => e.type)).to.deep.equal(['A', 'B', 'C']);
      let refused: unknown;
      await reader.appendToStream('product-live:p:a', [ev('D')], 2).catch((err: unknown) => (refused = err));
      expect(String(refused)).to.contain('read-only');
      expect(await writer.headPosition()).to.equal(seen[2].position);
    } finally {
      await reader.close();
      await writer.close();
    }
  });

  it('refuses a file that does not exist instead of creating it', () => {
    expect(() => SqliteEventStore.open({ path: path.join(dir, 'absent.db'), readOnly: true })).to.throw();
    expect(fs.existsSync(path.join(dir, 'absent.db'))).to.equal(false);
  });
});
